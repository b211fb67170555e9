"""Liveness under fairness: the explored graph, fair strongly connected components, lasso counterexamples.

Modules: ``families`` (which fairness instance a step belongs to), ``graph`` (the graph kept during BFS, 15 bytes
an edge), ``fair`` (the fair-SCC question, iterative), ``lasso`` (prefix and fair cycle, on indices then concrete
states), ``judge`` (a concrete lasso re-checked: property and fairness), ``check`` (the run: BFS, then every
liveness property).

Soundness of the symmetry reduction (TLC warns that symmetry and liveness can be unsound together).  The reduced
graph has one node per class of states under the model's permutations and an edge [s] -> [t] when the stored member
of [s] has a successor in [t]; the check keeps the reduction only when (1) every liveness predicate is symmetric
(``tests/test_liveness_kraft.py`` checks this on every reachable state of the KRaft models at small bounds) and (2)
every assumed fairness family is a whole family of actions, not split by parameters.  Then a concrete behaviour maps
to a path of classes with the same actions, the same families enabled (a model's actions commute with its
permutations, so a family is enabled in s iff in pi(s)) and the same predicate values; conversely a cycle of classes
lifts to a concrete path that ends in pi(x) for the state x it started from, and repeating it (pi has finite order)
gives a concrete cycle with the same actions and enabled families.  So a fair bad cycle exists in one graph iff in
the other.  Stutters are told from the concrete states (an edge to another member of the same class is a real step
and is kept); the lasso builder walks the class cycle again until a concrete state repeats.  Fairness split by
parameters (one instance per philosopher or per message) names concrete ids that a permutation changes: such
properties are checked on a second search without the reduction, recorded in the manifest.

Bounds: a bound that disables a step the protocol would take (``max_epoch`` forbidding an election) is declared as
the family's ``cut`` (``model.fairness``); the cut counts as enabled and taking it leaves the checked graph, so a
behaviour that stalls only because of a bound is not fair and never reported, and behaviours past the bound are not
judged.  What that means exactly: every cycle of the bounded graph is a behaviour of the unbounded protocol, and it is
judged with the enabledness the protocol has (the cut adds what the bound removed), so no cycle inside the bound is
invented or hidden, provided the cut's kind matches the fairness of the step it stands for. The quorum's cut is declared
strong although an election timer is weakly fair; ``tests/test_liveness_kraft.py`` checks that on every fault-free cycle
the cut holds everywhere or nowhere (at the top epoch a voter in a timer role leaves it only by learning a leader and
never returns), where the two agree; under ``prevote`` the cut is a Prospective that won its pre-vote at the top epoch,
a state the protocol never rests in, so no cycle through it is a real one. The states where a cut holds (``cut_states``
in the manifest, about half of the quorum graph) are still judged: a bad cycle through them is unfair for the reason the
unbounded protocol gives. What is not judged is what happens after the cut step, past the bound. Bounded fault counters
(restarts, duplications, session expiries) only grow, so they create no cycle; a fault budget spent is a fault that
stopped. A fault without a counter (the quorum's message loss, unbounded at its defaults) is declared ``finite``
(``model.fairness``): its steps are kept in the graph, may lie on a lasso's prefix, and are left out of every fair
cycle. Symmetry is unaffected: a finite family is a whole set of actions narrowed by a ``when`` that the model's
permutations preserve.
"""
