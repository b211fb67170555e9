"""The driver of the Spark engine: ``check_spark`` and the level-by-level search that judges each level's reports.

The driver submits one job per level, decides each level exactly as the in-process BFS would (verdict, counts,
coverage, targets) from the tasks' per-batch counts (it holds no per-state array: ``ranks``), writes per-level
checkpoints and resumes from them, and rebuilds counterexamples.  The design: ``checker/spark/__init__.py``.
"""

from __future__ import annotations

import os
import shutil
import time
from functools import partial
from typing import Any

import numpy as np

from kraftcheck.checker import errors
from kraftcheck.checker.errors import ModelError, UsageError
from kraftcheck.checker.search.bfs import BATCH, bfs
from kraftcheck.checker.search.result import Result
from kraftcheck.checker.search.run import Run
from kraftcheck.checker.spark import checkpoint as ckpt_io
from kraftcheck.checker.spark import job as spark_job
from kraftcheck.checker.spark import session as spark_session
from kraftcheck.checker.spark.counterexample import path_to
from kraftcheck.checker.spark.job import Job, Reports, first_event, level_reports, raise_task_errors
from kraftcheck.checker.spark.live_graph import LiveCapture
from kraftcheck.checker.spark.local import DriverLevels, Handoff
from kraftcheck.checker.spark.order import key_layout
from kraftcheck.checker.spark.ranks import drop_keys_files
from kraftcheck.checker.spark.shards import NOOP, shard_path
from kraftcheck.checker.spark.specref import SpecRef, describe, ship_model
from kraftcheck.checker.spark.stages import Stages, owner
from kraftcheck.checker.spark.task import level_task
from kraftcheck.checker.traces.trace import Trace, rebuild

I64 = np.int64
LOCAL_BELOW: int | None = None  # check_spark's default local_below: None picks the hand-off by time (spark.local)


def check_spark(
    run: Run,
    master: str = "local[*]",
    partitions: int | None = None,
    checkpoint_dir: str | None = None,
    resume: bool = False,
    max_states: int | None = None,
    max_depth: int | None = None,
    executor_timeout: float = spark_session.EXECUTOR_TIMEOUT_S,
    local_below: int | None = None,
    driver_memory: str | None = None,
    executor_memory: str | None = None,
) -> Result:
    """Breadth-first search of ``run`` on Spark; the same Result as ``checker.search.bfs.bfs`` (engine ``spark``).

    ``executor_timeout``: on a cluster, end the run (exit 22) when no executor has been there for that many seconds
    (0 waits forever).  ``local_below``: levels with fewer states are expanded in the driver, in-process, until the
    first wider one (``spark.local``; the default, None, hands over at the first level predicted to take half a second
    in-process; 0 sends every level to Spark).  ``driver_memory``/``executor_memory``: the JVM heaps (512m, 4g ...;
    on a local master the executors live in the driver's JVM)."""
    return open_search(**locals()).run()


def open_search(run: Run, master: str, partitions: int | None, checkpoint_dir: str | None, resume: bool,
                max_states: int | None, max_depth: int | None, executor_timeout: float, local_below: int | None,
                driver_memory: str | None, executor_memory: str | None) -> _Search:
    """``check_spark``'s search, set up and not yet run (``spark.live`` adds its liveness capture)."""
    if partitions is not None and partitions < 1:
        raise UsageError(f"--partitions takes a number >= 1, not {partitions}")
    for name, value in (("--max-states", max_states), ("--max-depth", max_depth)):
        if value is not None and value < 0:
            raise UsageError(f"{name} takes a number >= 0, not {value}")
    if resume and not checkpoint_dir:
        raise UsageError("--resume needs --checkpoint-dir (the directory of the run to resume)")
    memory = spark_session.memory_conf(driver_memory, executor_memory)
    ref, ship = describe(run)
    checkpoint = ckpt_io.Checkpoint(checkpoint_dir) if checkpoint_dir else None
    if checkpoint is not None and resume and partitions is None:
        partitions = ckpt_io.stored_partitions(checkpoint.root)
    sc = spark_session.context(master, memory)
    if ship is not None:
        ref = ship_model(sc, ref, ship)
    P = partitions or max(1, int(sc.defaultParallelism))
    search = _Search(run, sc, ref, P, master, checkpoint, resume, max_states, max_depth)
    search.executor_timeout = executor_timeout
    search.local_below = local_below if local_below is not None else LOCAL_BELOW
    return search


class _Search:
    def __init__(self, run: Run, sc: Any, ref: SpecRef, partitions: int, master: str,
                 checkpoint: ckpt_io.Checkpoint | None, resume: bool, max_states: int | None,
                 max_depth: int | None) -> None:
        self.run_ = run
        self.sc = sc
        self.ref = ref
        self.P = partitions
        self.master = master
        self.checkpoint = checkpoint
        self.resume = resume
        self.max_states = max_states
        self.max_depth = max_depth
        A = len(run.actions)
        self.A = A
        self.distinct = 0  # states of committed levels
        self.transitions = 0  # candidates of committed expansions
        self.coverage = np.zeros(A, dtype=I64)
        self.n_level = 0  # states of the newest committed level (their order keys stay with the tasks: ``ranks``)
        self.local_events: list[dict[str, Any]] = []  # the events its expansion met (at most one a partition)
        self.xev: tuple[int, int, dict[str, Any]] | None = None  # the first of them once placed: (pos, j, event)
        self.rdd: Any = None
        self.stages = Stages(sc, partitions)
        self.levels = 0
        self.resumed_from: int | None = None
        self.task_time: dict[str, float] = {}  # summed over tasks, by phase
        self.job_seconds = 0.0
        # One host (a local master): shards in files the next task reads, not the shuffle (2/3 of its bytes on 2^20)
        self.shard_dir = spark_session.scratch_dir("kraftcheck-shards-") if spark_session.is_local(master) else None
        self.shard_level = -1  # the newest level whose shards are written
        self.executor_timeout = spark_session.EXECUTOR_TIMEOUT_S
        self.depth_done = 0  # the newest level whose states are all counted (an interrupted run's depth)
        self.local_below: int | None = LOCAL_BELOW
        self.driver_levels = 0  # levels expanded in the driver before Spark took over (spark.local)
        self.carried: dict[str, float] | None = None  # the stored cost of the levels a resume starts from
        self.live: LiveCapture | None = None  # the liveness graph the levels feed (spark.live)
        self.premises_seen: dict[str, int] = {}  # of the newest level's expansion (job.first_premises)
        self.keep_scratch = False  # keep the shard files after the run (for lassos' prefixes), until cleanup()

    # ---- jobs -------------------------------------------------------------------------------------------------------
    def _submit(self, job: Job, prev: Any) -> dict[int, dict[str, Any]]:
        started = time.perf_counter()
        acc = self.sc.accumulator({}, Reports())
        job.acc = acc
        spill = None
        if self.shard_dir:
            spill = os.path.join(self.shard_dir, f"out-{job.level}")
            os.makedirs(spill, exist_ok=True)
        rdd, dep = self.stages.next_stage(prev, partial(level_task, job), spill)
        watchdog = None
        if not spark_session.is_local(self.master) and self.executor_timeout > 0:
            watchdog = spark_session.Watchdog(spark_session.executor_count, self.executor_timeout)
        try:
            if watchdog is None:
                self.stages.run(dep)
            else:
                with watchdog:
                    self.stages.run(dep)
        except Exception as exc:
            raise spark_session.job_failure(job.level, exc, watchdog) from None
        reports = level_reports(acc, job.level)
        raise_task_errors(job.level, self.P, reports)
        self.rdd = rdd
        if self.shard_dir and job.mode in ("init", "resume", "seed", "dedup"):
            self.shard_level = job.level
            for q in range(self.P):  # a re-executed task of the next level still finds the shards it reads
                shard_path(self.shard_dir, job.level - 2, q).unlink(missing_ok=True)
            drop_keys_files(self.shard_dir, job.level - 2, self.P)
            shutil.rmtree(os.path.join(self.shard_dir, f"out-{job.level - 2}"), ignore_errors=True)
        for r in reports.values():
            for phase, sec in r.get("time", {}).items():
                self.task_time[phase] = self.task_time.get(phase, 0.0) + sec
        self.job_seconds += time.perf_counter() - started
        return reports

    def _start_rdd(self) -> Any:
        return self.sc.parallelize([(q, (NOOP,)) for q in range(self.P)], self.P).partitionBy(self.P, owner)

    def _job(self, level: int, mode: str, **kw: Any) -> Job:
        return Job(self.ref, level, self.P, mode, checkpoint=str(self.checkpoint.root) if self.checkpoint else None,
                   targets=tuple(self.run_.pending()), shard_dir=self.shard_dir,
                   live=self.live.spec if self.live else None, **kw)

    # ---- the search -------------------------------------------------------------------------------------------------
    def run(self) -> Result:
        try:
            return self._search()
        except KeyboardInterrupt:  # Ctrl-C or SIGTERM: the figures of the levels committed so far, no traceback
            spark_session.cancel_jobs()
            run = self.run_
            run.coverage[:] = self.coverage.tolist()
            return run.result("interrupted", self.distinct, self.transitions, self.depth_done, exhaustive=False,
                              extra=self._extra())
        except Exception as exc:  # a py4j call to a JVM that died: say so (one line, exit 22), not "Connection refused"
            if not isinstance(exc, (UsageError, ModelError, errors.ResourceError)) and spark_session.jvm_died(exc):
                raise spark_session.jvm_died_error(exc) from None
            raise
        finally:
            if self.checkpoint is not None:
                self.checkpoint.unlock()
            if not self.keep_scratch:
                self.cleanup()

    def cleanup(self) -> None:
        if self.shard_dir:
            shutil.rmtree(self.shard_dir, ignore_errors=True)

    def _search(self) -> Result:
        run = self.run_
        start_level = self._prepare()
        if start_level is None and self.local_below != 0:
            handed = self._in_driver()
            if isinstance(handed, Result):
                return handed
            level = handed + 1
        elif start_level is None:
            done = self._level_zero()
            if done is not None:
                return done
            level = 1
        else:
            level = start_level + 1
        while True:
            md = self.max_depth
            if md is not None and level - 1 >= md:
                return self._probe(level)
            expand_all = md is not None and level >= md
            job = self._job(level, "dedup", prev_count=self.n_level, expand=not self.local_events,
                            expand_all=expand_all, event_keys=tuple(sorted(e["key"] for e in self.local_events)),
                            premise_keys=tuple(sorted(set(self.premises_seen.values()))))
            reports = self._submit(job, self.rdd)
            self.levels = level
            self._placed(level, reports)
            result = self._judge(level, reports, expand_all)
            if result is not None:
                return result
            n = self.n_level
            run.progress.tick(self.distinct, self.transitions, n, level)
            if n == 0:
                run.coverage[:] = self.coverage.tolist()
                return run.result("ok", self.distinct, self.transitions, level - 1, extra=self._extra())
            self.depth_done = level
            if self.checkpoint is not None:
                self._save(level)
            level += 1

    def _prepare(self) -> int | None:
        """Checkpoint set-up; on resume, the driver's state and the first job from the last complete level."""
        run = self.run_
        if self.checkpoint is None:
            return None
        meta = ckpt_io.identity(run, self.ref.target, self.ref.bounds, self.P)
        newest = self.checkpoint.prepare(meta, self.resume)
        ckpt_io.warn(self.checkpoint.notes)
        if newest is None:
            return None
        last = ckpt_io.resume_level(self.checkpoint, newest, self.max_states, self.max_depth)
        st = self.checkpoint.state(last)
        # the cost up to that level, so that the rates divide all the states by all the time they cost
        self.carried = c = {k: float(st.get(k, 0.0)) for k in ("wall", "cpu_driver", "cpu_tasks")}
        run.tally.rewind(c["wall"], c["cpu_driver"])
        self.task_time["cpu"] = self.task_time.get("cpu", 0.0) + c["cpu_tasks"]
        self.distinct = int(st["distinct"])
        self.transitions = int(st["transitions"])
        self.coverage = np.array(st["coverage"], dtype=I64)
        run.forget_reached(set(st["targets"]))
        self.n_level = int(st["states_in_level"])
        self.resumed_from = last
        self.depth_done = last
        if self.live is not None:
            self.live.resume(last)
        md = self.max_depth
        job = self._job(last, "resume", expand_all=md is not None and last >= md)
        reports = self._submit(job, self._start_rdd())
        self.levels = last
        self._first_job(last, job, reports)
        return last

    def _in_driver(self) -> Result | int:
        """The first levels in-process (``spark.local``): the in-process result when the search ends before a level
        of ``local_below`` states, else the level handed to Spark (its first job done, as after a resume)."""
        run = self.run_
        hook = DriverLevels(run, self.local_below, self.P, self.checkpoint)
        try:
            result = bfs(run, max_states=self.max_states, max_depth=self.max_depth, handoff=hook)
        except Handoff as h:
            self.distinct, self.transitions = h.distinct, h.transitions
            self.coverage = np.array(run.coverage, dtype=I64)
            self.n_level = len(h.fps)
            self.levels = self.depth_done = self.driver_levels = h.depth
            md = self.max_depth
            job = self._job(h.depth, "seed", expand_all=md is not None and h.depth >= md)
            rdd = self.sc.parallelize(hook.seeds(h), self.P).partitionBy(self.P, owner)
            self._first_job(h.depth, job, self._submit(job, rdd))
            return h.depth
        self.levels = self.driver_levels = hook.levels
        result.manifest.update(self._extra())
        return result

    def _level_zero(self) -> Result | None:
        run = self.run_
        fingerprint = run.fingerprint
        seen: set[int] = set()
        inits: list[tuple[int, Any]] = []
        for s in run.initial_states():
            f = fingerprint(s)
            if f not in seen:
                seen.add(f)
                inits.append((f, s))
        for f, s in inits:
            bad = run.broken_invariant(s)
            if bad:
                run.coverage[:] = self.coverage.tolist()
                return run.result("violation", len(inits), 0, 0, bad, self._trace([f]), extra=self._extra())
            run.visit_targets(s)
        if self.live is not None:
            self.live.initial_states([s for _, s in inits], np.array([f for f, _ in inits], dtype=np.uint64))
        md = self.max_depth
        job = self._job(0, "init", expand_all=md is not None and md <= 0)
        reports = self._submit(job, self._start_rdd())
        self.n_level = sum(int(reports[q]["new_count"]) for q in range(self.P))
        if self.n_level != len(inits):
            raise RuntimeError("executors disagree with the driver on the initial states (is the model deterministic?)")
        self.distinct = len(inits)
        self._first_job(0, job, reports)
        if self.checkpoint is not None:
            self._save(0)
        return None

    def _first_job(self, level: int, job: Job, reports: dict[int, dict[str, Any]]) -> None:
        """A level's job outside the level loop done (the initial, handed-over or resumed level): its events noted,
        the action-property premises its steps reached, its steps given to the liveness graph."""
        self._note_events(reports)
        if self.live is not None:
            self.live.expanded(level, reports, job.expand_all)

    def _premises(self, reports: dict[int, dict[str, Any]], before: int | None = None) -> None:
        """Count as reached the premises the expansion judged now reached (all, or those placed ``before``)."""
        for name in spark_job.premises_before(self.premises_seen, reports, before):
            self.run_.step_premises.pop(name, None)

    def _note_events(self, reports: dict[int, dict[str, Any]]) -> None:
        """This level's per-partition first expansion events (by order key: the next level's tasks place them)."""
        self.premises_seen = spark_job.first_premises(reports)  # and the premises its steps reached
        self.local_events, self.xev = [dict(r["x_event"]) for _, r in sorted(reports.items()) if r.get("x_event")], None

    def _placed(self, level: int, reports: dict[int, dict[str, Any]]) -> None:
        """What the tasks of ``level`` found about level - 1 from its partitions' order keys (``ranks``): where its
        expansion's events are (``first_event``), and for the liveness graph the first key of each of its batches."""
        self.xev = first_event(self.local_events, reports)
        if self.live is not None:
            self.live.bounds(level - 1, self.n_level, reports)

    def _save(self, level: int) -> None:
        assert self.checkpoint is not None
        if self.live is not None:  # before the completion record: a complete level always has its liveness part
            self.live.save(level)
        self.checkpoint.complete(level, self.P, {
            "distinct": self.distinct,
            "transitions": self.transitions,
            "coverage": self.coverage.tolist(),
            "targets": self.run_.pending(),
            "states_in_level": self.n_level,
            **ckpt_io.spent(self.run_.started, self.run_.cpu_started, self.task_time.get("cpu", 0.0)),
        })

    def _judge(self, level: int, reports: dict[int, dict[str, Any]], expand_all: bool = False) -> Result | None:
        """Decide level ``level`` exactly as the in-process BFS would, batch by batch of level - 1's expansion.

        In one batch the in-process engine first generates the successors (a deadlock or a broken action property
        stops it there, before the batch's states are inserted), then inserts them and checks invariants, then marks
        reachability targets, then checks the state limit.
        """
        run = self.run_
        P = self.P
        nb = max(1, -(-self.n_level // BATCH))
        new_pb = sum((reports[q]["new_per_batch"] for q in range(P)), np.zeros(nb, dtype=I64))
        cand_pb = sum((reports[q]["x_cands"] for q in range(P)), np.zeros(nb, dtype=I64))
        cov_pb = sum((reports[q]["x_cov"] for q in range(P)), np.zeros((nb, self.A), dtype=I64))
        targets: dict[str, int] = {}
        for q in range(P):
            for name, key in reports[q].get("targets", {}).items():
                targets[name] = min(key, targets.get(name, key))
        candidates: list[tuple[tuple[int, ...], str, Any]] = []
        if self.xev is not None:
            pos, j, ev = self.xev
            candidates.append(((pos // BATCH, 0, pos, j), "x", ev))
        invs = [reports[q]["inv"] for q in range(P) if reports[q].get("inv")]
        if invs:
            inv = min(invs)  # (batch, invariant index, key, name, fp)
            candidates.append(((inv[0], 1), "i", inv))
        if self.max_states is not None:
            cum = self.distinct + np.cumsum(new_pb)
            over = np.flatnonzero(cum >= self.max_states)
            if len(over):
                candidates.append(((int(over[0]), 2), "l", int(over[0])))
        if candidates:
            order, kind, what = min(candidates, key=lambda c: c[0])
            return self._stop(level, kind, what, order[0], new_pb, cand_pb, cov_pb, targets, reports)
        # the whole level is in: commit it
        self.transitions += int(cand_pb.sum())
        self.coverage += cov_pb.sum(axis=0)
        for name in targets:
            run.targets.pop(name, None)
        self._premises(reports)
        self.n_level = sum(int(reports[q]["new_count"]) for q in range(P))
        self.distinct += self.n_level
        self._note_events(reports)
        if self.live is not None:
            self.live.states(level, reports)
            self.live.expanded(level, reports, expand_all)
        return None

    def _stop(self, level: int, kind: str, what: Any, k: int, new_pb: np.ndarray, cand_pb: np.ndarray,
              cov_pb: np.ndarray, targets: dict[str, int], reports: dict[int, dict[str, Any]]) -> Result:
        """The result of a search that stops in batch ``k`` of level - 1's expansion."""
        run = self.run_
        extra = self._extra()
        if kind == "x":
            ev = what
            self._premises(reports, ev["pos"] + 1)  # the event's own steps up to it: its task stopped there too
            distinct = self.distinct + int(new_pb[:k].sum())
            self._reach(targets, k)
            path = self._path(ev["fp"])
            if not run.action_props and self.live is None:  # batch-wide generation: the whole batch was generated
                self._set_coverage(cov_pb[: k + 1].sum(axis=0))
                transitions = self.transitions + int(cand_pb[: k + 1].sum())
                return run.result("deadlock", distinct, transitions, level - 1, trace=self._trace(path), extra=extra)
            pos = ev["pos"]
            in_batch = np.zeros(self.A, dtype=I64)
            rows = [reports[q]["x_rows"] for q in range(self.P) if "x_rows" in reports[q]]
            if rows:
                rp = np.concatenate([r[0] for r in rows])
                rm = np.concatenate([r[1] for r in rows])
                in_batch = rm[(rp >= k * BATCH) & (rp < pos)].sum(axis=0, dtype=I64)
            if ev["kind"] == "deadlock":
                self._set_coverage(cov_pb[:k].sum(axis=0) + in_batch)
                transitions = self.transitions + int(cand_pb[:k].sum()) + int(in_batch.sum())
                return run.result("deadlock", distinct, transitions, level - 1, trace=self._trace(path), extra=extra)
            self._set_coverage(cov_pb[:k].sum(axis=0) + in_batch + np.array(ev["partial"], dtype=I64))
            transitions = self.transitions + int(cand_pb[:k].sum())
            name, fp_next, bad = ev["action"], ev["fp_next"], ev["prop"]

            def pick(state: Any, action: Any, values: tuple[Any, ...], nxt: Any) -> bool:
                return (action.name == name and run.fingerprint(nxt) == fp_next
                        and run.broken_action_property(state, (name, values), nxt) == bad)

            return run.result("violation", distinct, transitions, level, bad, self._trace(path, pick), extra=extra)
        distinct = self.distinct + int(new_pb[: k + 1].sum())
        transitions = self.transitions + int(cand_pb[: k + 1].sum())
        self._set_coverage(cov_pb[: k + 1].sum(axis=0))
        self._premises(reports, (k + 1) * BATCH)  # batch k was expanded whole before its states were judged
        if kind == "i":
            _, _, _, bad, fp = what
            self._reach(targets, k)
            return run.result("violation", distinct, transitions, level, bad, self._trace(self._path(fp)),
                              extra=extra)
        self._reach(targets, k + 1)
        return run.result("limit", distinct, transitions, level, extra=extra)

    def _set_coverage(self, added: np.ndarray) -> None:
        self.coverage += added
        self.run_.coverage[:] = self.coverage.tolist()

    def _reach(self, targets: dict[str, int], before_batch: int) -> None:
        """Mark the targets first reached by states inserted in batches before ``before_batch``."""
        _, shift = key_layout(self.A)
        for name, key in targets.items():
            if key >> shift < before_batch:
                self.run_.targets.pop(name, None)

    def _probe(self, level: int) -> Result:
        """The depth limit: does the last level have a successor not yet visited (as ``_has_unseen_successor``)?"""
        run = self.run_
        job = self._job(level, "probe", prev_count=self.n_level, expand=False)
        reports = self._submit(job, self.rdd)
        nb = max(1, -(-self.n_level // BATCH))
        cov_pb = sum((reports[q]["x_cov"] for q in range(self.P)), np.zeros((nb, self.A), dtype=I64))
        firsts = [reports[q]["probe_min_pos"] for q in range(self.P) if reports[q].get("probe_min_pos") is not None]
        if firsts:
            self.coverage += cov_pb[: min(firsts) // BATCH + 1].sum(axis=0)
        else:
            self.coverage += cov_pb.sum(axis=0)
        run.coverage[:] = self.coverage.tolist()
        return run.result("limit" if firsts else "ok", self.distinct, self.transitions, level - 1, extra=self._extra())

    # ---- counterexamples --------------------------------------------------------------------------------------------
    def _path(self, fp: int) -> list[int]:
        """Fingerprints from an initial state to ``fp``, by the parent pointers in the shards."""
        return path_to(fp, self.sc, self.rdd, self.P, self.shard_dir, self.shard_level, self.distinct)

    def _trace(self, fps: list[int], last: Any = None) -> Trace:
        run = self.run_
        return rebuild(run.model, run.ctx, run.fingerprint, fps, last)

    def _extra(self) -> dict[str, Any]:
        return {
            "visited_set": "spark-shards",
            "partitions": self.P,
            "master": self.master,
            "levels": self.levels,
            "checkpoint_dir": str(self.checkpoint.root) if self.checkpoint else None,
            "resumed_from_level": self.resumed_from,
            # a resumed run's seconds and rates include these, the cost of its levels before the resume
            "cost_before_resume": self.carried,
            "levels_in_driver": self.driver_levels,
            "spark_job_seconds": round(self.job_seconds, 3),
            # summed over tasks: CPU seconds by phase, plus "cpu" (all) and "wall" (tasks' elapsed time)
            "task_seconds": {k: round(v, 3) for k, v in sorted(self.task_time.items())},
        }
