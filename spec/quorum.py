"""Properties of the KRaft quorum model (PROTOCOLS.md section 7), each with the KIP-595 clause it encodes: the quorum's
Spec, assembled from one module per concern.

- ``spec/quorum_election.py``: one leader per epoch, epochs that only grow, votes kept, higher epochs adopted;
- ``spec/quorum_replication.py``: log matching, committed entries kept, a leader that only appends;
- ``spec/quorum_high_watermark.py``: high watermarks that cover only committed entries and never go back;
- ``spec/quorum_follower_view.py``, ``spec/quorum_durability.py``: a follower's log after a Fetch answer, what a
  crash that loses an unflushed suffix must not take;
- ``spec/quorum_shape.py``, ``spec/quorum_views.py``, ``spec/quorum_liveness.py``: the state's shape, every node's
  view and the observers, liveness.

Invariants are checked on every new state, action properties on every step; the reachability targets make sure
the checked behaviours include an election, a commit, a DivergingEpoch truncation and a second leader, so that no
property passes vacuously.  The list below is the order of the reports.
"""

from __future__ import annotations

from kraftcheck.model.quorum import QUORUM
from kraftcheck.spec.core import Spec
from kraftcheck.spec.quorum_durability import DURABILITY
from kraftcheck.spec.quorum_election import (
    election_safety,
    epoch_monotonic,
    higher_epoch_adopted,
    leader_elected,
    second_leader,
    vote_persistence,
)
from kraftcheck.spec.quorum_follower_view import FOLLOWER_VIEW
from kraftcheck.spec.quorum_high_watermark import (
    follower_high_watermark_monotonic,
    high_watermark_committed,
    high_watermark_monotonic,
    no_truncation_below_high_watermark,
)
from kraftcheck.spec.quorum_liveness import LIVENESS
from kraftcheck.spec.quorum_replication import (
    committed_never_lost,
    follower_truncated,
    leader_append_only,
    leader_completeness,
    log_matching,
    value_committed,
)
from kraftcheck.spec.quorum_shape import state_shape
from kraftcheck.spec.quorum_views import VIEWS

SPEC = Spec(
    QUORUM,
    [
        election_safety,
        state_shape,  # spec/quorum_shape.py
        log_matching,
        leader_completeness,
        committed_never_lost,
        high_watermark_committed,
        no_truncation_below_high_watermark,
        follower_high_watermark_monotonic,
        leader_append_only,
        high_watermark_monotonic,
        epoch_monotonic,
        vote_persistence,
        higher_epoch_adopted,
        leader_elected,
        value_committed,
        follower_truncated,
        second_leader,
        *FOLLOWER_VIEW,  # spec/quorum_follower_view.py: a follower's log and high watermark after a Fetch answer
        *DURABILITY,  # spec/quorum_durability.py: what a crash losing an unflushed suffix must not take
        *VIEWS,  # spec/quorum_views.py: every node's view, the network, resignation and observer targets
        *LIVENESS,  # spec/quorum_liveness.py
    ],
    family="kraft",
)

# modules whose properties register on SPEC with its decorators (issue 30: the 200-sample's survivors)
from kraftcheck.spec import (  # noqa: E402,F401
    quorum_faults,
    quorum_history,
    quorum_leader_knowledge,
    quorum_leader_state,
    quorum_requests,
    quorum_symmetry,  # the renamings check --check-symmetry tries (Model.renamings)
    quorum_votes,
)
