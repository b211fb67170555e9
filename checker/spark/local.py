"""Small levels in the driver: the in-process BFS runs the first levels, and Spark takes over at the first wide one.

A Spark job costs a fixed amount of wall time (scheduling, a Python worker round trip, the accumulator) whatever the
level's size: on the quorum model's 55 levels that overhead was a quarter of the run, spent on levels of a few dozen
states that one core expands in milliseconds.  So the driver expands levels in-process (``checker.search.bfs``, with a
hand-off hook) while they have fewer than ``below`` states, and hands the first level at or above it to Spark as if it
were a resumed level: each partition gets its shard (the fingerprints and parents of the states it owns) and its part
of the frontier, in the in-process frontier order, which is the order Spark's order keys reproduce.  Everything the
in-process engine decides before the hand-off (a violation, a deadlock, the state limit, the depth limit, targets,
coverage) it decides itself, so the result is the in-process one by construction; after it, the Spark engine's.

With a checkpoint directory the driver writes and seals each level it expands, in the same parts a Spark level
writes, so a run killed after the hand-off resumes from Spark's levels, and one killed before it starts again.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from kraftcheck.checker.search.run import Run
from kraftcheck.checker.search.visited import Visited
from kraftcheck.checker.spark import checkpoint as ckpt_io

U64 = np.uint64
I64 = np.int64
# The default hand-off (no --local-below): at the first level whose in-process expansion is predicted (from the CPU
# seconds per state of the level before) to take LOCAL_SECONDS or more, or that holds LOCAL_MAX states.  A level of T
# seconds on one core takes about 0.6 T + J on two Spark cores (the ~25% of shipping, plus J, a job's fixed cost of
# 0.1-0.3 s), so Spark only gains on levels of half a second or more.
LOCAL_SECONDS = 0.5
LOCAL_MAX = 50_000
MIN_SAMPLE = 200  # a level of fewer states does not predict the next one's cost (the driver keeps the next one)


class Handoff(Exception):
    """Raised by the hook to leave the in-process BFS at the first wide level (not an error)."""

    def __init__(self, depth: int, frontier: list[Any], fps: np.ndarray, transitions: int, distinct: int) -> None:
        super().__init__(f"hand-off at level {depth}")
        self.depth = depth
        self.frontier = frontier
        self.fps = fps
        self.transitions = transitions
        self.distinct = distinct


class DriverLevels:
    """The in-process BFS's hand-off hook: records every small level's fingerprints and parents (the shards Spark
    starts from), seals it in the checkpoint, and raises ``Handoff`` at the first level of ``below`` states or more
    (``below`` None: the first level predicted to take ``LOCAL_SECONDS``, see above)."""

    def __init__(self, run: Run, below: int | None, partitions: int, checkpoint: ckpt_io.Checkpoint | None) -> None:
        self.run = run
        self.below = below
        self.P = partitions
        self.checkpoint = checkpoint
        self.fps: list[np.ndarray] = []
        self.parents: list[np.ndarray] = []
        self.levels = 0  # levels expanded in the driver
        self.last = (0, time.process_time())  # (states of the level before, when its expansion began)

    def __call__(self, depth: int, frontier: list[Any], fps: np.ndarray, visited: Visited, transitions: int) -> None:
        fps = np.asarray(fps, dtype=U64)
        parents = np.array([visited.parent(f) or 0 for f in fps.tolist()], dtype=U64)
        self.fps.append(fps)
        self.parents.append(parents)
        if self.checkpoint is not None:
            self._seal(depth, frontier, fps, parents, len(visited), transitions)
        if self._wide(len(frontier)):
            raise Handoff(depth, frontier, fps, transitions, len(visited))
        self.levels = depth + 1

    def _wide(self, n: int) -> bool:
        """Whether Spark should expand a level of ``n`` states."""
        if self.below is not None:
            return n >= self.below
        now = time.process_time()
        before, began = self.last
        self.last = (n, now)
        if n >= LOCAL_MAX:
            return True
        return before >= MIN_SAMPLE and (now - began) / before * n >= LOCAL_SECONDS

    def _seal(self, depth: int, frontier: list[Any], fps: np.ndarray, parents: np.ndarray, distinct: int,
              transitions: int) -> None:
        """Level ``depth`` as a Spark level writes it: one part per partition (order keys = frontier positions), then
        the completion record with the figures as of its end."""
        assert self.checkpoint is not None
        root = str(self.checkpoint.root)
        owner = (fps % U64(self.P)).astype(I64)
        keys = np.arange(len(fps), dtype=I64)
        for q in range(self.P):
            sel = np.flatnonzero(owner == q)
            ckpt_io.write_part(root, depth, q, fps[sel], parents[sel], keys[sel], [frontier[i] for i in sel.tolist()])
        run = self.run
        self.checkpoint.complete(depth, self.P, {
            "distinct": distinct,
            "transitions": transitions,
            "coverage": list(run.coverage),
            "targets": run.pending(),
            "states_in_level": len(fps),
            **ckpt_io.spent(run.started, run.cpu_started, 0.0),
        })

    def seeds(self, h: Handoff) -> list[tuple[int, tuple[Any, ...]]]:
        """Each partition's start: its shard (sorted fingerprints, parents) and its part of the hand-off level (order
        keys = positions in the in-process frontier, fingerprints, states)."""
        from kraftcheck.checker.spark import codec
        from kraftcheck.checker.spark.shards import SEED

        all_f = np.concatenate(self.fps)
        all_p = np.concatenate(self.parents)
        order = np.argsort(all_f, kind="stable")
        all_f, all_p = all_f[order], all_p[order]
        own_all = (all_f % U64(self.P)).astype(I64)
        own_new = (h.fps % U64(self.P)).astype(I64)
        keys = np.arange(len(h.fps), dtype=I64)
        out: list[tuple[int, tuple[Any, ...]]] = []
        for q in range(self.P):
            sel = np.flatnonzero(own_all == q)
            mine = np.flatnonzero(own_new == q)
            # the states as a codec blob, unpickled by the task after it has loaded the model: a model file's own
            # record classes cannot be unpickled by Spark's serializer before that
            out.append((q, (SEED, all_f[sel], all_p[sel], keys[mine], h.fps[mine],
                            codec.dumps([h.frontier[i] for i in mine.tolist()]))))
        return out
