"""A pool of forked workers, one process per run, each killed when its time limit passes.

One fresh process per run (a mutant at one profile) keeps runs independent (a mutant's import hook, caches and
memory die with it) and makes a time limit a plain kill; each run has its own profile's limits.  Forking (not
spawning) shares the parent's imports, so a run starts in a few milliseconds; the children re-import only the model
(``worker.install``).  CPU seconds are the parent's and the reaped children's (``os.times``).
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

import attrs

from kraftcheck.checker.mutate import worker
from kraftcheck.checker.mutate.generate import Mutant
from kraftcheck.checker.mutate.worker import Setup, child


def cpu_seconds() -> float:
    """CPU time of this process and of its reaped children so far."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def _context() -> Any:
    if "fork" not in multiprocessing.get_all_start_methods():
        raise RuntimeError("kraftcheck mutate needs the 'fork' start method (Linux or macOS)")
    return multiprocessing.get_context("fork")


@attrs.frozen
class Task:
    """One run: the original (``mutant`` None) or a mutant, at one profile's setup, under that profile's limits;
    ``symmetry_samples`` > 0 runs the symmetry check instead of the search; ``key`` is the caller's."""

    setup: Setup
    mutant: Mutant | None
    timeout: float | None
    max_states: int | None
    cover: tuple[str, ...] = ()
    symmetry_samples: int = 0
    key: Any = None


def run_one(setup: Setup, mutant: Mutant | None, max_states: int | None, timeout: float | None,
            cover: Sequence[str] = ()) -> dict[str, Any]:
    """One run in a forked child, waited for (the baseline: ``mutant`` None)."""
    results: list[dict[str, Any]] = []
    run_pool(deque([Task(setup, mutant, timeout, max_states, tuple(cover))]), 1, lambda t, r: results.append(r))
    return results[0]


def run_pool(pending: deque[Task], jobs: int, done: Callable[[Task, dict[str, Any]], None]) -> None:
    """Run every task, at most ``jobs`` at once; ``done(task, outcome)`` as each finishes (in finishing order).
    ``done`` may put more tasks on ``pending`` (a mutant's next profile: ``appendleft`` runs it next).

    An outcome is the worker's dict (``worker.run``), or ``{"kind": "timeout"}`` when the task's time limit passed
    (the process is killed), or ``{"kind": "crashed"}`` when the worker died without sending a result (a signal, or
    the kernel's out-of-memory killer).
    """
    ctx = _context()
    worker.PARENT_PID = os.getpid()  # a worker whose parent is gone by the time it starts ends at once
    active: dict[Any, tuple[Any, Task, float]] = {}  # connection -> (process, task, deadline)
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        while pending or active:
            while pending and len(active) < jobs:
                task = pending.popleft()
                recv, send = ctx.Pipe(duplex=False)
                proc = ctx.Process(target=child, args=(send, task.setup, task.mutant, task.max_states, task.cover,
                                                       task.symmetry_samples), daemon=True)
                proc.start()
                send.close()
                deadline = time.monotonic() + task.timeout if task.timeout is not None else float("inf")
                active[recv] = (proc, task, deadline)
            now = time.monotonic()
            wait = min(d for _, _, d in active.values()) - now
            ready: list[Any] = multiprocessing.connection.wait(list(active), timeout=max(0.0, min(wait, 1.0)))
            for conn in ready:
                proc, task, _ = active.pop(conn)
                try:
                    out = conn.recv()
                except (EOFError, OSError):
                    proc.join()
                    out = {"kind": "crashed", "message": f"worker died (exit code {proc.exitcode}) without a result"}
                conn.close()
                proc.join()
                done(task, out)
            now = time.monotonic()
            for conn, (proc, task, deadline) in list(active.items()):
                if now >= deadline:
                    proc.kill()
                    proc.join()
                    conn.close()
                    del active[conn]
                    done(task, {"kind": "timeout", "seconds": task.timeout})
    finally:
        for conn, (proc, _, _) in active.items():
            proc.kill()
            proc.join()
            conn.close()
