"""A leader election over a bag of messages, written plainly: the shape of KRaft's vote (KIP-595), much simplified.

No TLA+ original and no TLC count: this model is here for what TwoPhase lacks, a network that is a *bag* (messages
are consumed, lost and duplicated, so a message can be in flight twice) and per-node records that change often.
Nodes are interchangeable, so the symmetry is over node ids.  ``tests/test_bench_plain.py`` checks it against its tuned
twin (``election_tuned.py``): the same distinct states, transitions and depth, with and without symmetry.

A node times out into a new epoch as a candidate (voting for itself, asking every other node), a node grants one
vote per epoch, a candidate with a majority becomes leader and tells the others (BeginEpoch); a message of a higher
epoch makes the receiver a follower of that epoch first.  Faults: any message is lost, and ``max_dups`` duplications.
A run ends once the epochs are used and nothing is in flight, so check it with ``--no-deadlock``.
Written the way the README teaches: attrs records for nodes and messages, a tuple of records, frozensets, the bag as a
frozenset of (message, count) pairs, the symmetry declared (id fields and ``symmetric_ids``).  ``SPEC_RENAMING`` has
it written by hand instead, renaming under every permutation (:func:`_canonical`), for the benchmark's comparison.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import attrs

from bench.plain.symmetry import smallest_renaming
from kraftcheck import Context, Model, Spec, invariant, reachable
from kraftcheck.model.ids import id_field, ids_field, indexed_field, keyed_field

FOLLOWER, CANDIDATE, LEADER = "follower", "candidate", "leader"


@attrs.frozen
class Bounds:
    nodes: int = 3
    max_epoch: int = 2
    max_dups: int = 1
    symmetry: bool = False  # reduce by permutations of the node ids


@attrs.frozen
class Node:
    epoch: int
    role: str
    voted_for: int | None = id_field("node")
    votes: frozenset[int] = ids_field("node")  # granted votes, as a candidate
    leader: int | None = id_field("node")


@attrs.frozen
class VoteRequest:
    epoch: int
    src: int = id_field("node")
    dst: int = id_field("node")


@attrs.frozen
class VoteResponse:
    epoch: int
    src: int = id_field("node")
    dst: int = id_field("node")
    granted: bool


@attrs.frozen
class BeginEpoch:
    epoch: int
    src: int = id_field("node")
    dst: int = id_field("node")


Message = VoteRequest | VoteResponse | BeginEpoch
Bag = frozenset[tuple[Message, int]]


@attrs.frozen
class State:
    nodes: tuple[Node, ...] = indexed_field("node")
    net: Bag = attrs.field()  # messages in flight, with their multiplicity
    elected: frozenset[tuple[int, int]] = keyed_field("node")  # history: (node, epoch) of every election won
    dups: int = attrs.field()  # duplications so far


election: Model[State, Bounds] = Model("election-plain", Bounds, doc="a vote election over a bag, written plainly",
                                       bags=("net",))
election.symmetric_ids("node", bound="nodes", switch="symmetry")  # node ids are interchangeable, when switched on


def _send(bag: Bag, msgs: Iterable[Message]) -> Bag:
    counts = dict(bag)
    for m in msgs:
        counts[m] = counts.get(m, 0) + 1
    return frozenset(counts.items())


def _take(bag: Bag, msg: Message) -> Bag:
    counts = dict(bag)
    if counts[msg] == 1:
        del counts[msg]
    else:
        counts[msg] -= 1
    return frozenset(counts.items())


def _with(s: State, i: int, node: Node) -> tuple[Node, ...]:
    return s.nodes[:i] + (node,) + s.nodes[i + 1:]


def _follower(epoch: int, voted_for: int | None = None, leader: int | None = None) -> Node:
    return Node(epoch, FOLLOWER, voted_for, frozenset(), leader)


@election.init
def start(b: Bounds) -> Iterator[State]:
    yield State((_follower(0),) * b.nodes, frozenset(), frozenset(), 0)


@election.action(params=("node",))
def timeout(s: State, ctx: Context[Bounds]) -> Iterator[tuple[tuple[int], State]]:
    """a node that is not leader starts an election in the next epoch"""
    for i, node in enumerate(s.nodes):
        if node.role != LEADER and node.epoch < ctx.b.max_epoch:
            e = node.epoch + 1
            asks = [VoteRequest(e, i, j) for j in range(ctx.b.nodes) if j != i]
            cand = Node(e, CANDIDATE, i, frozenset({i}), None)
            yield (i,), attrs.evolve(s, nodes=_with(s, i, cand), net=_send(s.net, asks))


@election.action(params=("msg",))
def handle_vote_request(s: State, ctx: Context[Bounds]) -> Iterator[tuple[tuple[Message], State]]:
    """a node grants its one vote of the epoch, or refuses"""
    for m, _ in s.net:
        if isinstance(m, VoteRequest):
            node = s.nodes[m.dst]
            if m.epoch > node.epoch:
                node = _follower(m.epoch)
            granted = m.epoch == node.epoch and node.voted_for in (None, m.src)
            if granted:
                node = attrs.evolve(node, voted_for=m.src)
            reply = VoteResponse(node.epoch, m.dst, m.src, granted)
            yield (m,), attrs.evolve(s, nodes=_with(s, m.dst, node), net=_send(_take(s.net, m), [reply]))


@election.action(params=("msg",))
def handle_vote_response(s: State, ctx: Context[Bounds]) -> Iterator[tuple[tuple[Message], State]]:
    """a candidate counts a vote; a majority makes it leader, which tells the others"""
    for m, _ in s.net:
        if isinstance(m, VoteResponse):
            node, sent, elected = s.nodes[m.dst], [], s.elected
            if m.epoch > node.epoch:
                node = _follower(m.epoch)
            elif m.epoch == node.epoch and node.role == CANDIDATE and m.granted:
                node = attrs.evolve(node, votes=node.votes | {m.src})
                if 2 * len(node.votes) > ctx.b.nodes:
                    node = attrs.evolve(node, role=LEADER, leader=m.dst, votes=frozenset())
                    sent = [BeginEpoch(node.epoch, m.dst, j) for j in range(ctx.b.nodes) if j != m.dst]
                    elected = elected | {(m.dst, node.epoch)}
            yield (m,), State(_with(s, m.dst, node), _send(_take(s.net, m), sent), elected, s.dups)


@election.action(params=("msg",))
def handle_begin_epoch(s: State, ctx: Context[Bounds]) -> Iterator[tuple[tuple[Message], State]]:
    """a node learns the epoch's leader and follows it"""
    for m, _ in s.net:
        if isinstance(m, BeginEpoch):
            node = s.nodes[m.dst]
            if m.epoch >= node.epoch:
                node = _follower(m.epoch, node.voted_for if m.epoch == node.epoch else None, m.src)
            yield (m,), attrs.evolve(s, nodes=_with(s, m.dst, node), net=_take(s.net, m))


@election.action(params=("msg",))
def lose(s: State, ctx: Context[Bounds]) -> Iterator[tuple[tuple[Message], State]]:
    """a message in flight is lost"""
    for m, _ in s.net:
        yield (m,), attrs.evolve(s, net=_take(s.net, m))


@election.action(params=("msg",))
def duplicate(s: State, ctx: Context[Bounds]) -> Iterator[tuple[tuple[Message], State]]:
    """a message in flight is duplicated (at most max_dups times in a run)"""
    if s.dups < ctx.b.max_dups:
        for m, _ in s.net:
            yield (m,), attrs.evolve(s, net=_send(s.net, [m]), dups=s.dups + 1)


def _renamed_msg(m: Message, p: tuple[int, ...]) -> Message:
    return attrs.evolve(m, src=p[m.src], dst=p[m.dst])


def _renamed(s: State, p: tuple[int, ...]) -> State:
    """The state with node ``i`` called ``p[i]``."""
    nodes: list[Node] = list(s.nodes)
    for i, n in enumerate(s.nodes):
        nodes[p[i]] = Node(n.epoch, n.role, None if n.voted_for is None else p[n.voted_for],
                           frozenset(p[v] for v in n.votes), None if n.leader is None else p[n.leader])
    net = frozenset((_renamed_msg(m, p), c) for m, c in s.net)
    return State(tuple(nodes), net, frozenset((p[i], e) for i, e in s.elected), s.dups)


def _canonical(s: State, b: Bounds) -> State:
    """The symmetry by hand: node ids are interchangeable, when the bound says so."""
    return smallest_renaming(s, b.nodes, _renamed) if b.symmetry else s


def two_contenders(s: State, ctx: Context[Bounds]) -> bool:
    """two nodes stand (candidate or leader) in the same epoch"""
    standing = [n.epoch for n in s.nodes if n.role != FOLLOWER]
    return len(standing) != len(set(standing))


@invariant("ElectionSafety", "at most one leader is elected in an epoch", "KIP-595 (Raft's election safety)",
           premise=two_contenders)
def election_safety(s: State, ctx: Context[Bounds]) -> bool:
    return len({e for _, e in s.elected}) == len(s.elected)


@reachable("LeaderElected", "some node becomes leader", "example")
def leader_elected(s: State, ctx: Context[Bounds]) -> bool:
    return bool(s.elected)


SPEC = Spec(election, [election_safety, leader_elected], family="example")
by_renaming = election.derive("election-renaming", "a vote election over a bag, plainly, symmetry by every renaming")
by_renaming.symmetric(_canonical)
SPEC_RENAMING = Spec(by_renaming, [election_safety, leader_elected], family="example")
