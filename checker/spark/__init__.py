"""The Spark engine: the in-process BFS, level by level, across Spark executors, with identical results.

Ownership.  Every state belongs to partition ``fingerprint % P`` (hash partitioning, as in PReach and Eddy Murphi).
Partition q keeps the visited shard of the states it owns: sorted fingerprints with their parent fingerprints.

One Spark stage per level.  Level L's task for partition q reads, from the previous level's shuffle, its own shard
and every candidate successor that other partitions (and itself) generated for it, batched as one blob per (source,
destination) pair.  It drops candidates its shard already holds, keeps the first occurrence of each new one, checks
invariants and reachability targets on the new states, writes them (with parent pointers) to the checkpoint, expands
them in batches (action properties, deadlock, coverage), and ships the successors to their owners as blobs, together
with its grown shard to itself.  The stage runs as a map stage of the next shuffle (``submitMapStage``), so a level
costs one stage; what the driver needs (per-batch counts, events) comes back through an accumulator
keyed by (level, partition), which makes a re-executed task harmless.  On a cluster the shard travels through Spark's
shuffle, so nothing depends on Python worker reuse or on which executor runs which partition; with a local master
(one host) it is kept in a file per (level, partition) instead, written whole and renamed into place, which any
Python worker of that host reads.

Identical results.  The in-process BFS expands a level in a fixed order in batches of ``checker.search.bfs.BATCH``
states, and what it reports when it stops early (the distinct-state count at a violation, a deadlock, a
``--max-states`` limit) depends on that order.  The Spark engine reproduces the order exactly: each state carries an
order key taken at its first occurrence (the batch of its parent's rank, the parent's place in that batch, the action
and the successor's index among those the action yields: ``order.py``), which sorts a level exactly as the
in-process engine's frontier.  The tasks of the next level turn the keys into dense ranks
(``ranks.py``: every partition hands its sorted keys to every task of the next level, in a file on one host, through
the shuffle on a cluster; a key's rank is how many keys of all partitions are smaller), so that the driver holds no
per-state array, only per-batch counts, from which every count is cut at the same batch as in-process: verdict,
distinct states, transitions, depth, coverage, unreached targets and the counterexample (built from the same parent
pointers, so not just as short: the same one) all agree with ``checker.search.bfs``.

Because a level's new states are expanded in the same task that finds them, the decisions for level L (a deadlock or
action property while expanding level L-1, an invariant broken by a level-L state, the state limit) are taken after
level L's job, one job later than the work; the expansion done for nothing is thrown away.

Liveness (``live.py``).  With liveness properties each task expanding its new states codes every step with the
in-process liveness graph's own hook and judges every new state (goals, triggers, bound cuts), and keeps both with
the partition that owns the states (``live_store``); the driver keeps per-level aggregates (``live_graph``).  The fair
components are found by supersteps over the partitions (``live_scc``, sequenced by ``live_fair``), and a lasso is
picked by ``checker.liveness``'s own code on the subgraph that reaches a fair component, in the in-process order, so
verdicts and lassos are the in-process ones.  With a checkpoint the graph is kept with it, and a resume covers the
liveness phase.

Small levels stay in the driver (``local.py``): the first levels, while they hold fewer than ``--local-below`` states,
are expanded in-process, and Spark starts from the first wider one as from a resumed level.  On one host a task also
drops the candidates that their owner's shard file (of this level once written, else of the previous one) already
holds before shipping them.
Modules, one concern each::

    driver.py          check_spark and the level loop: jobs, judging each level as in-process, checkpoints, resume
    local.py           small levels in the driver: the in-process BFS until the first wide level, then handed over
    codec.py           how candidate states travel: pickle, with records saved as their field values
    task.py            what one partition does for one level (in a Python worker): read, dedup, judge the new states
    expand.py          successors of a partition's new states in the in-process order, shipped to their owners
    order.py           order keys: the in-process BFS order as sortable integers
    ranks.py           dense ranks of a level's order keys, by the next level's tasks (not the driver)
    job.py             what a level's tasks are told (Job) and how they report back (the accumulator)
    shards.py          what one level hands the next: record kinds, shuffle chunks, shard files
    stages.py          one Spark map stage per level, built through py4j
    counterexample.py  the walk back by parent pointers from a state to an initial state
    live.py            liveness: the search with the graph captured, then judged as in-process (checker.liveness)
    live_task.py       liveness, in a task: steps coded, new states judged (goals, triggers, bound cuts), kept
    live_graph.py      liveness, in the driver: per-level aggregates, the fairness instances numbered as in-process
    live_store.py      liveness, the graph on disk per partition: the tasks' files, each partition's part of the graph
    live_scc.py        liveness, the fair-component search's supersteps (in a task): region, colours, components
    live_fair.py       liveness, the driver's side of that search: supersteps sequenced, counts, the lasso subgraph
    specref.py         how executors find the model and rebuild the Run
    session.py         the SparkContext: master checks, logs, scratch, job failures, the watchdog
    jvm.py             the driver's Java: detection, why it could not start, its memory settings and life
    checkpoint.py      per-level checkpoints on disk that verify themselves, read back on resume; the dir's lock
    code_identity.py   the code a run executes (every module loaded from outside the installation), for a resume
"""
