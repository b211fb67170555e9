"""A pool of forked workers, one process per run, each killed when its time limit passes.

One fresh process per mutant keeps runs independent (a mutant's import hook, caches and memory die with it) and
makes a time limit a plain kill.  Forking (not spawning) shares the parent's imports, so a run starts in a few
milliseconds; the children re-import only the model (``worker.install``).  CPU seconds are the parent's and the
reaped children's (``os.times``).
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.connection
import os
import sys
import time
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

from kraftcheck.checker.mutate.generate import Mutant
from kraftcheck.checker.mutate.worker import Setup, child

Done = Callable[[Mutant, dict[str, Any]], None]


def cpu_seconds() -> float:
    """CPU time of this process and of its reaped children so far."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def _context() -> Any:
    if "fork" not in multiprocessing.get_all_start_methods():
        raise RuntimeError("kraftcheck mutate needs the 'fork' start method (Linux or macOS)")
    return multiprocessing.get_context("fork")


def run_one(setup: Setup, mutant: Mutant | None, max_states: int | None, timeout: float | None,
            cover: Sequence[str] = ()) -> dict[str, Any]:
    """One run in a forked child, waited for (the baseline: ``mutant`` None)."""
    results: list[dict[str, Any]] = []
    run_pool(setup, [mutant], 1, timeout, max_states, lambda m, r: results.append(r), cover)
    return results[0]


def run_pool(setup: Setup, mutants: Sequence[Mutant | None], jobs: int, timeout: float | None,
             max_states: int | None, done: Callable[[Any, dict[str, Any]], None], cover: Sequence[str] = ()) -> None:
    """Run every mutant, at most ``jobs`` at once; ``done(mutant, outcome)`` as each finishes (in finishing order).

    An outcome is the worker's dict (``worker.run``), or ``{"kind": "timeout"}`` when the time limit passed (the
    child is killed), or ``{"kind": "crashed", "message": "worker died ..."}`` when the child died without an answer
    (a signal, or the kernel's out-of-memory killer).
    """
    ctx = _context()
    pending = deque(mutants)
    active: dict[Any, tuple[Any, Mutant | None, float]] = {}  # connection -> (process, mutant, deadline)
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        while pending or active:
            while pending and len(active) < jobs:
                mutant = pending.popleft()
                recv, send = ctx.Pipe(duplex=False)
                proc = ctx.Process(target=child, args=(send, setup, mutant, max_states, cover), daemon=True)
                proc.start()
                send.close()
                deadline = time.monotonic() + timeout if timeout is not None else float("inf")
                active[recv] = (proc, mutant, deadline)
            now = time.monotonic()
            wait = min(d for _, _, d in active.values()) - now
            ready: list[Any] = multiprocessing.connection.wait(list(active), timeout=max(0.0, min(wait, 1.0)))
            for conn in ready:
                proc, mutant, _ = active.pop(conn)
                try:
                    out = conn.recv()
                except (EOFError, OSError):
                    proc.join()
                    out = {"kind": "crashed", "message": f"worker died (exit code {proc.exitcode}) without a result"}
                conn.close()
                proc.join()
                done(mutant, out)
            now = time.monotonic()
            for conn, (proc, mutant, deadline) in list(active.items()):
                if now >= deadline:
                    proc.kill()
                    proc.join()
                    conn.close()
                    del active[conn]
                    done(mutant, {"kind": "timeout", "seconds": timeout})
    finally:
        for conn, (proc, _, _) in active.items():
            proc.kill()
            proc.join()
            conn.close()
