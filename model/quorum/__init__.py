"""The KRaft quorum model: KIP-595 leader election and pull replication with KAFKA-15489 check quorum (on, as Kafka
3.7+ ships it), with faults, KIP-996 pre-vote and no-check-quorum as variants, and one mutation per known bug shape.

State shape (``model.quorum.state``; records and messages are NamedTuples, read by field name and changed with
``_replace``; what is inside them is plain tuples, ints and bools)::

    QState(voters, net, hist)
      voters[i] = Voter(role, epoch, voted, leader, log, hw, ends, votes, heard)
          i < voters: a voter; voters <= i < voters + observers: an observer (bound ``observers``), a broker that
          fetches the log without voting: only Unattached or Follower, never sent a Vote or BeginQuorumEpoch, never
          counted in ``ends`` (the high watermark) or ``heard`` (check quorum)
          role     UNATTACHED | VOTED | CANDIDATE | LEADER | FOLLOWER | RESIGNED | PROSPECTIVE (ints, ROLE_NAMES)
          epoch, voted, leader   the quorum-state file (persisted; -1 = none)
          log      durable ((epoch, value), ...); value 0 is a leader's LeaderChange record, 1.. client records
          hw       high watermark (volatile; offsets < hw committed)
          ends     leader only: each voter's end offset from its last valid Fetch (-1 = not acknowledged yet)
          votes    candidate/prospective only: per voter 1 granted, 0 rejected, -1 no answer
          heard    leader (check quorum on): bitmask of voters that fetched in the current window; follower under
                   prevote: its leader's bit once a Fetch succeeded (FollowerState.hasFetchedFromLeader, 4.1)
      net = a bag of in-flight messages (a sorted tuple, repeats allowed), one NamedTuple type per RPC:
            VoteRequest, VoteResponse, BeginQuorumEpoch, BeginQuorumEpochResponse, EndQuorumEpoch, FetchRequest,
            FetchResponse, each built by its keyword-only constructor (``fetch_request(src=..., ...)``); the first
            field ``kind`` orders the bag across types; ``cur`` says whether the requester's RequestManager still
            expects a request or response (Kafka matches responses by correlation id; the model renumbers those ids
            to current/stale)
      hist = History(leaders, committed, values, restarts, dups, resigns, truncated, raised)
          leaders[e]  bitmask of voters ever elected in epoch e;  committed  ((offset, epoch, value, commit_epoch),..)
          raised      bits of the Kafka assertions a follower failed (state.RAISED_*): each is a violation

Modules: ``state`` (records, log helpers, shared transitions), ``bounds``, ``election`` (timeouts, Vote,
BeginQuorumEpoch, EndQuorumEpoch, resign, check quorum), ``fetch`` (Fetch, DivergingEpoch, truncation, high
watermark, client appends), ``faults`` (loss, duplication, crash+restart), ``symmetry`` (voter-id symmetry, the
fast encoding, the view).  Properties are in ``spec.quorum``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from kraftcheck.model.core import Model
from kraftcheck.model.diagram import Diagram, by_param
from kraftcheck.model.quorum import election, faults, fetch
from kraftcheck.model.quorum.bounds import Bounds, bounds_problem
from kraftcheck.model.quorum.fairness import FAIRNESS, PER_MESSAGE
from kraftcheck.model.quorum.state import NONE, UNATTACHED, History, QState, Voter
from kraftcheck.model.quorum.symmetry import canonical, canonical_encoding, encode, view

QUORUM: Model[QState, Bounds] = Model(
    "quorum",
    Bounds,
    doc="KRaft quorum: KIP-595 leader election and pull replication (Vote, BeginQuorumEpoch, EndQuorumEpoch, Fetch)",
    encode=encode,
    view=view,
    bags=("net",),  # messages in flight: traces show each one sent or received
)

QUORUM.variant("prevote", "KIP-996 pre-vote: a timed-out voter becomes Prospective and needs a majority of pre-votes "
               "before it bumps the epoch")
QUORUM.variant("begin-epoch-heartbeat", "the leader re-sends BeginQuorumEpoch to voters that acknowledged its epoch "
               "too, as Kafka does when its timer expires (3.9.1 maybeSendBeginQuorumEpochRequests: every voter; "
               "4.2.2 LeaderState.needToSendBeginQuorumRequests: every voter not fetched lately); without it only "
               "to voters that have not acknowledged (LeaderState.nonAcknowledgingVoters)")
QUORUM.variant("no-check-quorum", "Kafka before 3.7 and the KIP-595 text: no check quorum, a leader that a majority "
               "stopped fetching from stays leader (the default resigns it, as KAFKA-15489 ships from 3.7)")
QUORUM.variant("skip-log-check", "a voter grants its vote without comparing the candidate's log with its own",
               kind="mutation", expect="LeaderCompleteness")
QUORUM.variant("double-vote", "a Voted voter grants a second candidate of the same epoch whose log is up to date",
               kind="mutation", expect="ElectionSafety")
QUORUM.variant("hw-old-epoch", "the leader advances the high watermark without an entry of its own epoch on a "
               "majority (Raft figure 8)", kind="mutation", expect="LeaderCompleteness",
               bounds={"max_epoch": 4})  # Raft figure 8 needs four elections
QUORUM.variant("truncate-below-hw", "on DivergingEpoch a follower computes its truncation point from the epoch "
               "before the diverging one, below its high watermark (KafkaMetadataLog.truncateTo throws)",
               kind="mutation", expect="NoTruncationBelowHighWatermark")
QUORUM.variant("restart-as-leader", "a leader that restarts comes back as leader of the same epoch (KAFKA-10527)",
               kind="mutation", expect="HighWatermarkMonotonic", bounds={"max_restarts": 1})
QUORUM.variant("no-leader-change", "a new leader appends no LeaderChange record, so with no client write it never "
               "commits in its epoch (liveness)", kind="mutation", expect="NewLeaderCommits")
QUORUM.variant("KAFKA-10533", "Kafka before KAFKA-10533 (2.7): no flush after appends: a follower acknowledges "
               "records it has not flushed and the leader counts its own unflushed end offset, so a crash loses "
               "committed records (needs bound lose_unflushed)", kind="mutation", expect="CommittedDurable",
               bounds={"lose_unflushed": True, "max_restarts": 1})
QUORUM.variant("prevote-no-grant", "with prevote: voters never grant a pre-vote, so no election ever starts "
               "(liveness)", kind="mutation", expect="LeaderEventuallyElected", requires=("prevote",))

# reductions: each removes behaviour Kafka has, for the sake of the state count (on = reduced; see bounds.py)
QUORUM.reduction("resend_when_lost", "a request is re-sent only once nothing of it is in flight: the retry after "
                 "request.timeout.ms of a request that is merely slow (RequestManager.isReady) is left out")
QUORUM.reduction("lose_responses_only", "message loss drops responses only: a request is never lost, so the states "
                 "where a Fetch sent on handling a response, a broadcast, or a stale request vanished are left out")

# bound profiles (--profile NAME); states and user CPU seconds measured on one core with /usr/bin/time -v
QUORUM.profile("default", "one restart, loss of responses, one client record, one message in flight, check quorum "
               "(resigning epoch 1's leader); no duplication (the duplication and faults profiles have it: the main "
               "job runs all three, so every pair of fault kinds meets in one run)", states=354_982, seconds=31)
QUORUM.profile("duplication", "one duplication, loss of responses, one client record; no restart, no check-quorum "
               "resignation", bounds={"max_dups": 1, "max_restarts": 0, "max_quorum_epoch": 0},
               states=132_025, seconds=9)
QUORUM.profile("faults", "every fault kind together (one restart, one duplication, loss of responses) through "
               "elections and LeaderChange records, without a client record (ValueCommitted and the truncation "
               "premise are the default's) nor a check-quorum resignation",
               bounds={"max_dups": 1, "max_values": 0, "max_quorum_epoch": 0}, states=177_768, seconds=12)
QUORUM.profile("unreduced", "every reduction off (any message lost, requests too; resend_when_lost off), one client "
               "record, check quorum in epoch 1, no restart or duplication: the main job's run in which no reduction "
               "hides a bug class (unreached alone: the restart premises are the default's)",
               bounds={"lose_responses_only": False, "resend_when_lost": False, "max_restarts": 0},
               states=129_014, seconds=10)
# narrow profiles (issue 30 item 2): one dimension past the balanced profiles, the rest at their minimum.  Two voters
# let a broadcast (EndQuorumEpoch) fit in the one network slot: at three voters it needs max_msgs=2, which costs 20x
QUORUM.profile("resign", "narrow: graceful resignation (EndQuorumEpoch) and a third epoch, two voters, any message "
               "lost (requests too, so that an EndQuorumEpoch can reach a voter that missed BeginQuorumEpoch), no "
               "restart nor check-quorum resignation: the balanced profiles never send EndQuorumEpoch (a broadcast "
               "needs a free slot per other voter)",
               bounds={"voters": 2, "max_epoch": 3, "max_resigns": 1, "max_restarts": 0, "max_quorum_epoch": 0,
                       "lose_responses_only": False},
               states=10_170, seconds=2)
QUORUM.profile("observer", "narrow: one observer (a broker fetching the log without voting) beside two voters, no "
               "restart nor check-quorum resignation: the balanced profiles have no observer; the leader re-sends "
               "BeginQuorumEpoch to acknowledged voters too (begin_epoch_heartbeat, FIDELITY Q42: Kafka 3.9.1 and "
               "4.2.2 do), which no other main-job profile runs",
               bounds={"voters": 2, "observers": 1, "max_restarts": 0, "max_quorum_epoch": 0,
                       "begin_epoch_heartbeat": True},
               states=6_163, seconds=1)
QUORUM.profile("unflushed", "narrow: the unflushed-suffix fault (lose_unflushed: a leader's appends stay unflushed "
               "until its flush step, a crash loses the unflushed suffix; FIDELITY Q27, KAFKA-10533) with one restart "
               "and a third epoch, two voters, no check-quorum resignation: the balanced profiles keep every log "
               "durable", bounds={"voters": 2, "max_epoch": 3, "lose_unflushed": True, "max_quorum_epoch": 0},
               states=36_899, seconds=3)
QUORUM.profile("prevote", "narrow: KIP-996 pre-vote (as variant prevote; Kafka 4.1+ runs it) with check quorum in "
               "epoch 1, two voters, no restart: the balanced profiles run no pre-vote",
               bounds={"voters": 2, "prevote": True, "max_restarts": 0}, states=3_273, seconds=1)
QUORUM.main_profiles = ("default", "duplication", "faults", "unreduced", "resign", "observer", "unflushed", "prevote")
# full, deep and observers: not re-measured since check quorum became the default (2026-11-27); their figures before
# it are in their docs, and `list` shows none until they are measured again
QUORUM.profile("full", "every fault kind and a client record in one run (the main job's default before 2026-11-24; "
               "before check quorum was on: 865,133 states, depth 54; safety 58 s, its liveness properties 19 s "
               "more, quiet machine)", bounds={"max_dups": 1})
QUORUM.profile("deep", "every fault kind with two client values and the loss of any message, requests included: no "
               "reduction that matters at one message in flight (before check quorum was on: 4,397,184 states, "
               "depth 57, 289 s, 528 MB)", bounds={"max_dups": 1, "max_values": 2, "lose_responses_only": False})
QUORUM.profile("observers", "one observer (a broker fetching the log without voting) with the default faults "
               "(one restart, loss, no duplication): it finds the leader through Fetch answers and catches up, never "
               "counted (before check quorum was on: 4,819,048 states, depth 69, 214 s, 571 MB)",
               bounds={"observers": 1})


@QUORUM.bounds_check
def _check_bounds(b: Bounds) -> str | None:
    return bounds_problem(b)


@QUORUM.init
def initial(b: Bounds) -> Iterator[QState]:
    """Every voter (and observer) Unattached in epoch 0 with an empty log and an empty quorum-state file; nothing in
    flight."""
    v = Voter(role=UNATTACHED, epoch=0, voted=NONE, leader=NONE, log=(), hw=0, ends=(), votes=(), heard=0)
    hist = History(leaders=(0,) * (b.max_epoch + 1), committed=(), values=0, restarts=0, dups=0, resigns=0,
                   truncated=False, raised=0)
    yield QState(voters=(v,) * (b.voters + b.observers), net=(), hist=hist)


# election (KIP-595 Vote / BeginQuorumEpoch / EndQuorumEpoch)
QUORUM.action(election.timeout, params=("node",))
QUORUM.action(election.epoch_bound, params=("node",))
QUORUM.action(election.send_vote, params=("candidate", "voter"))
QUORUM.action(election.receive_vote, params=("msg",))
QUORUM.action(election.receive_vote_response, params=("msg",))
QUORUM.action(election.send_begin_epoch, params=("leader", "voter"))
QUORUM.action(election.receive_begin_epoch, params=("msg",))
QUORUM.action(election.receive_begin_epoch_response, params=("msg",))
QUORUM.action(election.resign, params=("leader",))
QUORUM.action(election.check_quorum, params=("leader",))
QUORUM.action(election.receive_end_epoch, params=("msg",))
# replication (KIP-595 Fetch)
QUORUM.action(fetch.client_request, params=("leader",))
QUORUM.action(fetch.send_fetch, params=("follower",))
QUORUM.action(fetch.observer_fetch, params=("observer", "voter"))
QUORUM.action(fetch.receive_fetch, params=("msg",))
QUORUM.action(fetch.receive_fetch_response, params=("msg",))
QUORUM.action(fetch.flush, params=("node",))
# faults
QUORUM.action(faults.lose, params=("msg",))
QUORUM.action(faults.duplicate, params=("msg",))
QUORUM.action(faults.restart, params=("node",))

QUORUM.symmetric(canonical, encoding=canonical_encoding)
QUORUM.declare_fairness(*FAIRNESS, *PER_MESSAGE)  # model/quorum/fairness.py: what liveness properties may assume

# sequence diagrams (--trace-out cex.html): a lifeline per voter with its role and epoch, the net's messages as
# arrows labelled with what decides them (KafkaRaftClient: epoch, granted, error, the fetch offsets, the diverging
# epoch of a FetchResponse)
def _voter_status(v: Any) -> dict[str, str]:
    out = {}
    for i, w in enumerate(v.get("voters") or []):
        text = f"{w['role']} epoch={w['epoch']}"
        if w["role"] == "Voted":
            text += f" for {w['voted']}"
        elif w["role"] == "Follower":
            text += f" of {w['leader']}"
        elif w["role"] == "Leader":
            text += f" hw={w['hw']}"
        out[f"voter {i}"] = text
    return out


def _message_label(m: Any) -> str:
    kind, pre = m.get("kind", "?"), m.get("prevote") is True
    if kind == "Vote":
        text = (f"{'PreVote' if pre else 'Vote'} epoch={m['candidate_epoch']} last_epoch={m['last_epoch']} "
                f"end={m['last_offset']}")
    elif kind == "VoteResponse":
        text = f"{'PreVote' if pre else 'Vote'}Response epoch={m['epoch']} " + ("granted" if m["granted"] else "denied")
    elif kind == "Fetch":
        text = f"Fetch epoch={m['epoch']} offset={m['fetch_offset']} last_epoch={m['last_fetched_epoch']}"
    elif kind == "FetchResponse":
        text = f"FetchResponse epoch={m['epoch']} hw={m['hw']}"
        if m.get("div_epoch", -1) >= 0:
            text += f" diverging={m['div_epoch']}@{m['div_end']}"
        elif m.get("entries"):
            text += f" +{len(m['entries'])} at {m['offset']}"
    else:
        text = f"{kind} epoch={m.get('epoch')}"
    if m.get("error") not in (None, "NONE"):
        text += f" {m['error']}"
    return text + (" (stale)" if m.get("cur") is False else "")


QUORUM.diagram = Diagram(
    nodes=lambda v: [f"voter {i}" for i in range(len(v["voters"]))],
    endpoints=lambda m: (f"voter {m['src']}", f"voter {m['dst']}"),
    locus=by_param({p: "voter " for p in ("node", "candidate", "leader", "follower", "observer")},
                   receiver=lambda m: f"voter {m['dst']}", environment=("lose", "duplicate")),
    label=_message_label, status=_voter_status,
)

__all__ = ["QUORUM", "Bounds", "QState", "Voter", "History"]


def _liveness_unjudged(b: Bounds) -> str | None:
    """With an observer and one message in flight, the observer's fetch loop (each answer sends the next Fetch) can
    hold the only network slot forever, so no voter ever fetches: a lasso no real network shows (max_msgs is a bound,
    not a network).  Judge liveness with observers at max_msgs >= 2."""
    if b.observers and b.max_msgs < 2:
        return "an observer's fetch loop can hold the one network slot (max_msgs=1) forever; use max_msgs >= 2"
    return None


QUORUM.liveness_unjudged = _liveness_unjudged
