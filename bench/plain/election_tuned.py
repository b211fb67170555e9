"""The tuned twin of ``election.py``: the same states and transitions as one flat tuple of ints.

Layout for ``n`` nodes: five ints a node (epoch, role 0/1/2 for follower/candidate/leader, voted-for, votes as a bit
set, leader; ``n`` stands for none), then the duplications so far, then the elections won as a bit set (bit
``epoch * n + node``), then the bag: the message codes, sorted, a message repeated as often as it is in flight.  A code
packs kind (2 bits), granted (1), source (4), destination (4) and epoch.  The symmetry is hand-written: each of the
``n!`` renamings works on ints through tables made once (ids, bit sets, memoised message codes), and the smallest
renamed tuple is the representative.
"""

from __future__ import annotations

from functools import cache
from itertools import permutations

from bench.plain.election import Bounds  # the twins share one bounds record
from kraftcheck import Context, Model, Spec, invariant, reachable

FOLLOWER, CANDIDATE, LEADER = 0, 1, 2
REQ, RESP, BEGIN = 0, 1, 2
W = 5  # ints a node

St = tuple[int, ...]
Steps = list[tuple[tuple[int], St]]

election_tuned: Model[St, Bounds] = Model("election-tuned", Bounds, doc="a vote election over a bag, hand-tuned")


def code(kind: int, epoch: int, src: int, dst: int, granted: int = 0) -> int:
    return kind | granted << 2 | src << 3 | dst << 7 | epoch << 11


def _send(bag: St, codes: list[int]) -> St:
    return tuple(sorted(bag + tuple(codes)))


def _take(bag: St, c: int) -> St:
    i = bag.index(c)
    return bag[:i] + bag[i + 1:]


def _distinct(bag: St) -> list[int]:
    return sorted(set(bag))


def _state(s: St, i: int, node: St, n: int, dups: int, elected: int, bag: St) -> St:
    return s[:W * i] + node + s[W * i + W:W * n] + (dups, elected) + bag


@election_tuned.init
def start(b: Bounds) -> list[St]:
    n = b.nodes
    return [(0, FOLLOWER, n, 0, n) * n + (0, 0)]


@election_tuned.action(params=("node",))
def timeout(s: St, ctx: Context[Bounds]) -> Steps:
    n, out = ctx.b.nodes, []
    head, bag = s[W * n:W * n + 2], s[W * n + 2:]
    for i in range(n):
        epoch, role = s[W * i], s[W * i + 1]
        if role != LEADER and epoch < ctx.b.max_epoch:
            e = epoch + 1
            asks = [code(REQ, e, i, j) for j in range(n) if j != i]
            out.append(((i,), _state(s, i, (e, CANDIDATE, i, 1 << i, n), n, *head, _send(bag, asks))))
    return out


@election_tuned.action(params=("msg",))
def handle_vote_request(s: St, ctx: Context[Bounds]) -> Steps:
    n, out = ctx.b.nodes, []
    head, bag = s[W * n:W * n + 2], s[W * n + 2:]
    for c in _distinct(bag):
        if c & 3 == REQ:
            e, src, dst = c >> 11, c >> 3 & 15, c >> 7 & 15
            node = s[W * dst:W * dst + W]
            if e > node[0]:
                node = (e, FOLLOWER, n, 0, n)
            granted = e == node[0] and node[2] in (n, src)
            if granted:
                node = node[:2] + (src,) + node[3:]
            reply = code(RESP, node[0], dst, src, granted)
            out.append(((c,), _state(s, dst, node, n, *head, _send(_take(bag, c), [reply]))))
    return out


@election_tuned.action(params=("msg",))
def handle_vote_response(s: St, ctx: Context[Bounds]) -> Steps:
    n, out = ctx.b.nodes, []
    dups, elected, bag = s[W * n], s[W * n + 1], s[W * n + 2:]
    for c in _distinct(bag):
        if c & 3 == RESP:
            e, src, dst = c >> 11, c >> 3 & 15, c >> 7 & 15
            node, sent, won = s[W * dst:W * dst + W], [], elected
            if e > node[0]:
                node = (e, FOLLOWER, n, 0, n)
            elif e == node[0] and node[1] == CANDIDATE and c >> 2 & 1:
                votes = node[3] | 1 << src
                node = node[:3] + (votes, node[4])
                if 2 * votes.bit_count() > n:
                    node = (e, LEADER, node[2], 0, dst)
                    sent = [code(BEGIN, e, dst, j) for j in range(n) if j != dst]
                    won = elected | 1 << (e * n + dst)
            out.append(((c,), _state(s, dst, node, n, dups, won, _send(_take(bag, c), sent))))
    return out


@election_tuned.action(params=("msg",))
def handle_begin_epoch(s: St, ctx: Context[Bounds]) -> Steps:
    n, out = ctx.b.nodes, []
    head, bag = s[W * n:W * n + 2], s[W * n + 2:]
    for c in _distinct(bag):
        if c & 3 == BEGIN:
            e, src, dst = c >> 11, c >> 3 & 15, c >> 7 & 15
            node = s[W * dst:W * dst + W]
            if e >= node[0]:
                node = (e, FOLLOWER, node[2] if e == node[0] else n, 0, src)
            out.append(((c,), _state(s, dst, node, n, *head, _take(bag, c))))
    return out


@election_tuned.action(params=("msg",))
def lose(s: St, ctx: Context[Bounds]) -> Steps:
    k = W * ctx.b.nodes + 2
    bag = s[k:]
    return [((c,), s[:k] + _take(bag, c)) for c in _distinct(bag)]


@election_tuned.action(params=("msg",))
def duplicate(s: St, ctx: Context[Bounds]) -> Steps:
    k = W * ctx.b.nodes
    if s[k] >= ctx.b.max_dups:
        return []
    bag = s[k + 2:]
    return [((c,), s[:k] + (s[k] + 1, s[k + 1]) + _send(bag, [c])) for c in _distinct(bag)]


@cache
def _tables(n: int, max_epoch: int) -> list[tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...], dict[int, int]]]:
    """Per renaming: ids (with ``n`` for none fixed), bit sets renamed, the elected bit set's epochs, a code memo."""
    out = []
    for p in permutations(range(n)):
        ids = p + (n,)
        masks = tuple(sum(1 << p[i] for i in range(n) if m >> i & 1) for m in range(1 << n))
        out.append((p, ids, masks, {}))
    return out


def _renamed(s: St, n: int, epochs: int, t: tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...], dict[int, int]]
             ) -> St:
    p, ids, masks, memo = t
    nodes: list[St] = [()] * n
    for i in range(n):
        e, role, voted, votes, leader = s[W * i:W * i + W]
        nodes[p[i]] = (e, role, ids[voted], masks[votes], ids[leader])
    full, elected, won = (1 << n) - 1, s[W * n + 1], 0
    for e in range(epochs):
        won |= masks[elected >> (e * n) & full] << (e * n)
    bag = []
    for c in s[W * n + 2:]:
        r = memo.get(c)
        if r is None:
            r = memo[c] = c & 7 | p[c >> 3 & 15] << 3 | p[c >> 7 & 15] << 7 | c >> 11 << 11
        bag.append(r)
    bag.sort()
    return sum(nodes, ()) + (s[W * n], won) + tuple(bag)


@election_tuned.symmetric
def _canonical(s: St, b: Bounds) -> St:
    """The smallest renaming of the flat tuple over every permutation of node ids."""
    if not b.symmetry:
        return s
    return min(_renamed(s, b.nodes, b.max_epoch + 1, t) for t in _tables(b.nodes, b.max_epoch))


def two_contenders(s: St, ctx: Context[Bounds]) -> bool:
    """two nodes stand (candidate or leader) in the same epoch"""
    standing = [s[W * i] for i in range(ctx.b.nodes) if s[W * i + 1] != FOLLOWER]
    return len(standing) != len(set(standing))


@invariant("ElectionSafety", "at most one leader is elected in an epoch", "KIP-595 (Raft's election safety)",
           premise=two_contenders)
def election_safety(s: St, ctx: Context[Bounds]) -> bool:
    n, elected = ctx.b.nodes, s[W * ctx.b.nodes + 1]
    return all((elected >> (e * n) & ((1 << n) - 1)).bit_count() <= 1 for e in range(ctx.b.max_epoch + 1))


@reachable("LeaderElected", "some node becomes leader", "example")
def leader_elected(s: St, ctx: Context[Bounds]) -> bool:
    return s[W * ctx.b.nodes + 1] != 0


SPEC = Spec(election_tuned, [election_safety, leader_elected], family="example")
