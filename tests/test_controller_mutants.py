"""Properties added for issue 14's controller mutation run, each shown on hand-built steps to fail on what the
mutant it kills does, and to hold on what the model does."""

from __future__ import annotations

from kraftcheck.model.controller import CONTROLLER
from kraftcheck.model.controller import actions as A
from kraftcheck.model.controller import metadata_log as mlog
from kraftcheck.model.controller.reassignment import reassign
from kraftcheck.model.controller.state import FENCED, Bounds, Broker, State, UnfenceBrokerRecord
from kraftcheck.spec.controller import SPEC
from kraftcheck.spec.controller_brokers import fenced_broker_behind_heartbeats

B = Bounds()
CTX = CONTROLLER.context(B)
UNFENCED_ONLY = SPEC.property_named("UnfencedOnlyWhenCaughtUp")
RECORDS_TARGET = SPEC.property_named("ReassignmentRecordsTarget")


def _registered_and_committed() -> State:
    """Controller 0 active, broker 0's RegisterBrokerRecord (offset 0) committed; broker 0 has applied nothing."""
    s = State(mlog.initial(2), (Broker(proc=FENCED, inc=1),) * 2)
    s = next(t for (c, e, k), t in A.elect(s, CTX) if c == 0)
    s = dict(A.register(s, CTX))[(0, 0)]
    s = next(iter(A.commit(s, CTX)))
    assert s.brokers[0].epoch == 0 and s.brokers[0].applied == 0
    return s


def test_unfence_waits_for_the_registration_to_be_applied() -> None:
    """The model: a heartbeat before broker 0 applied its registration writes nothing; after the fetch it unfences."""
    assert UNFENCED_ONLY is not None
    s = _registered_and_committed()
    step = ("heartbeat", (0, 0))
    assert fenced_broker_behind_heartbeats(s, step, s, CTX)  # the premise: it heartbeats while behind
    assert (0, 0) not in dict(A.heartbeat(s, CTX))  # handle_heartbeat: FENCED, nothing written
    fetched = next(t for (x,), t in A.fetch(s, CTX) if x == 0)
    t = dict(A.heartbeat(fetched, CTX))[(0, 0)]
    assert any(isinstance(r, UnfenceBrokerRecord) and r.broker == 0 for r in t.ml.log[-1].records)
    assert UNFENCED_ONLY.pred(fetched, step, t, CTX)
    assert not fenced_broker_behind_heartbeats(fetched, step, t, CTX)


def test_unfencing_a_broker_that_is_behind_is_a_violation() -> None:
    """The mutant 40ab13ba7d (`req.offset >= reg.epoch`): the UnfenceBrokerRecord is written on a heartbeat whose
    broker has not applied its own registration; the same record, from the state before the fetch."""
    assert UNFENCED_ONLY is not None
    s = _registered_and_committed()
    fetched = next(t for (x,), t in A.fetch(s, CTX) if x == 0)
    t = dict(A.heartbeat(fetched, CTX))[(0, 0)]
    assert not UNFENCED_ONLY.pred(s, ("heartbeat", (0, 0)), t, CTX)


def test_reassignment_record_needs_a_valid_target() -> None:
    """The mutant e061df9253 (targets() from 0 brokers): a record written for an empty target, which
    validateManualPartitionAssignment refuses; duplicates are refused too."""
    assert RECORDS_TARGET is not None
    b = Bounds(replication_factor=1, max_reassignments=1, max_log=6, controllers=1, max_epoch=1)
    ctx = CONTROLLER.context(b)
    s = State(mlog.initial(1), (Broker(proc=FENCED, inc=1),) * 2)
    s = next(t for (c, e, k), t in A.elect(s, ctx) if c == 0)
    s = dict(A.register(s, ctx))[(0, 0)]
    s = dict(A.register(s, ctx))[(1, 0)]
    steps = dict(reassign(s, ctx))
    (c, p, target), t = next((k, v) for k, v in steps.items() if k[2] == (1,))
    assert RECORDS_TARGET.pred(s, ("reassign", (c, p, target)), t, ctx)
    assert not RECORDS_TARGET.pred(s, ("reassign", (c, p, ())), t, ctx)
    assert not RECORDS_TARGET.pred(s, ("reassign", (c, p, (1, 1))), t, ctx)
