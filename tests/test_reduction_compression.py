"""The features model's ``sync_notifications`` reduction, checked step by step (issue 30, item 1).

``sync_notifications`` does not remove steps the way the other reductions do (tests/test_reduction_equivalence.py
checks those): it *compresses* them.  With it on, a step that writes ``/features`` (``zk_elect``, ``zk_update``, a
session's re-read in ``zk_expire``) also has every broker's listener read the write at once, each applying it or
(the ``max_delayed`` fault) holding it back; with it off, each listener reads by a step of its own
(``zk_refresh``: read and applied, ``zk_notify``: read and held back), at any later time
(FinalizedFeatureChangeListener's thread).  No features mutation needs a listener to read late (every verdict agrees
on and off), so the verdicts cannot see this reduction broken, and a reachable-set comparison does not hold as stated
(the held-back counter and the inboxes differ between the orders).  The rule checked instead, from every state the
reduced model reaches:

* every reduced step that is not an unreduced one is the unreduced step of the same action and parameters followed by
  exactly one listener step at each broker with unread news (a read applied, or held back), and the reduced outcomes
  of that action are *all* such compositions (none added, none lost: at most one read held back a write, as the
  reduction says and ``max_delayed=1`` allows);
* the listener steps the unreduced model could take there (the reduction takes none) are all at a broker that
  holds back a read of the current ``/features``: reading it again first ends, once the held-back read is applied,
  where the reduced model's ``zk_apply`` goes.

And at these bounds it compresses some steps.  Broken versions of the reduction fail the check, one test each.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from typing import Any

import pytest

from kraftcheck.checker.api import check, prepare
from kraftcheck.model.core import Context
from kraftcheck.model.features import zk_brokers, zk_controller
from kraftcheck.model.features.state import Bounds, ZkState, set_broker, snapshot
from kraftcheck.model.records import replace
from kraftcheck.spec.registry import load

LISTEN = frozenset({"zk_notify", "zk_refresh"})  # the listener's own steps, which only the unreduced model takes
# ZooKeeper mode (the reduction's), two updates so that a held-back read can be overtaken, one failover and one
# upgrade as at the defaults
AT: dict[str, Any] = {"kraft": False, "max_updates": 2, "max_ibp_changes": 0}


def _listened(m: Any, off: Any, u: Any) -> set[Any]:
    """Every state the unreduced model reaches from ``u`` by exactly one listener step at each running broker with
    unread news at ``u`` (``news_for``), in any order.  A broker none of whose listener steps is enabled has nothing
    its read would change (its cache holds the current version) and takes none."""
    news = frozenset(b for b, br in enumerate(u.brokers) if br.up and zk_brokers.news_for(br, u.zk))
    out: set[Any] = set()
    stack = [(u, news)]
    while stack:
        x, left = stack.pop()
        if not left:
            out.add(x)
            continue
        b = min(left)
        steps = [y for a, values, y in m.successors(x, off) if a.name in LISTEN and values[0] == b]
        stack += [(y, left - {b}) for y in steps] or [(x, left - {b})]
    return out


def _applied(m: Any, ctx: Any, x: Any) -> set[Any]:
    """The states ``zk_apply`` steps lead to from ``x`` (each broker's held-back read applied), ``x`` included."""
    seen, stack = {x}, [x]
    while stack:
        y = stack.pop()
        for a, _, z in m.successors(y, ctx):
            if a.name == "zk_apply" and z not in seen:
                seen.add(z)
                stack.append(z)
    return seen


def _compression_problems(limit: int = 3) -> tuple[list[str], int, int, int]:
    """What breaks the rule above from the states the reduced model reaches at ``AT``, how many reduced steps are
    compressions, how many unreduced listener steps the reduction leaves out there, and how many states it visited
    (all the reduced model reaches, unless a problem stopped it)."""
    spec = load("features")
    m = spec.model
    on, _ = prepare(spec, [], {**AT, "sync_notifications": True})
    off, _ = prepare(spec, [], {**AT, "sync_notifications": False})
    key = m.fingerprinter(on)  # as the engines deduplicate: session generations are not in the encoding
    frontier = list(m.initial_states(on))
    seen = {key(s) for s in frontier}
    problems: list[str] = []
    compressed = left_out = 0
    while frontier and len(problems) < limit:
        s = frontier.pop()
        reduced: dict[tuple[str, Any], set[Any]] = defaultdict(set)
        full: dict[tuple[str, Any], set[Any]] = defaultdict(set)
        for a, values, t in m.successors(s, on):
            reduced[a.name, values].add(t)
        for a, values, u in m.successors(s, off):
            full[a.name, values].add(u)
        problems += [f"{n}{v}: a listener step the reduced model takes" for n, v in reduced if n in LISTEN]
        applied_on: set[Any] | None = None  # where the reduced model's zk_apply steps go from s (once, if needed)
        for (n, v), us in full.items():
            if n in LISTEN:
                held = s.brokers[v[0]].inbox
                if applied_on is None:
                    applied_on = _applied(m, on, s) - {s}
                for u in us:
                    if not (held and held[-1] == snapshot(s.zk) and _applied(m, off, u) & applied_on):
                        problems.append(f"{n}{v}: left out, yet not a re-read of a held-back current read")
                    left_out += 1
                continue
            want = set().union(*(_listened(m, off, u) for u in us))
            got = reduced.get((n, v), set())
            if got != want:
                problems.append(f"{n}{v}: the reduced outcomes are not the unreduced step's listener compositions "
                                f"({len(got - want)} added, {len(want - got)} lost)")
            elif got != us:
                compressed += 1
        problems += [f"{n}{v}: a reduced step of no unreduced action" for n, v in reduced.keys() - full.keys()]
        for ts in reduced.values():
            for t in ts:
                if key(t) not in seen:
                    seen.add(key(t))
                    frontier.append(t)
    return problems, compressed, left_out, len(seen)


def test_sync_notifications_compresses_exactly_the_listener_steps() -> None:
    problems, compressed, left_out, states = _compression_problems()
    assert problems == [] and compressed > 0 and left_out > 0, (problems, compressed, left_out)
    # every state the checker reaches there was visited (4,985 on 2026-11-28: 3,126 compressed steps, 2,157 left out)
    assert states == check(load("features"), (), {**AT, "sync_notifications": True}, liveness=False).distinct_states


Succ = Iterator[ZkState]
_ORIGINAL = zk_brokers.propagate  # what the broken versions below wrap


def _never_held_back(s: ZkState, ctx: Context[Bounds], only: int | None = None) -> Succ:
    """Broken: with the reduction on, every listener applies the write; none is ever held back."""
    yield from list(_ORIGINAL(s, ctx, only))[:1]


def _writer_reads_only(s: ZkState, ctx: Context[Bounds], only: int | None = None) -> Succ:
    """Broken: with the reduction on, only the controller that wrote reads its write (the others stay behind)."""
    writer = next((b for b, br in enumerate(s.brokers) if br.active), only)
    yield from _ORIGINAL(s, ctx, writer if only is None else only)


def _held_back_twice(s: ZkState, ctx: Context[Bounds], only: int | None = None) -> Succ:
    """Broken: a held-back read is taken twice, so its broker's inbox holds the snapshot two times."""
    for t in _ORIGINAL(s, ctx, only):
        for b, (x, y) in enumerate(zip(s.brokers, t.brokers, strict=True)):
            if y.inbox and not x.inbox:
                t = replace(t, brokers=set_broker(t.brokers, b, replace(y, inbox=y.inbox * 2)))
        yield t


@pytest.mark.parametrize("broken", [_never_held_back, _writer_reads_only, _held_back_twice],
                         ids=lambda f: f.__name__)
def test_a_broken_compression_is_caught_step_by_step(broken: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(zk_brokers, "propagate", broken)  # zk_brokers.expire reads it here
    monkeypatch.setattr(zk_controller, "propagate", broken)  # zk_controller.elect and update
    problems, _, _, _ = _compression_problems(limit=1)
    assert problems, broken.__name__
