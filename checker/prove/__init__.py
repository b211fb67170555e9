"""prove: z3 checks that a property, conjoined with its strengthening lemmas, is inductive.

Two layers, as in mypyvy.  The *solver layer* (``solver.py``, :func:`~kraftcheck.checker.prove.solver.solve`) is the
only code that talks to a z3 solver: it pins the random seed, sets a timeout per query and reports ``unsat`` /
``sat`` (with the model) / ``unknown`` (timeout or incompleteness, never read as proved).  The *engine*
(``engine.py``: :func:`prove_system`, :func:`prove`) builds the proof obligations from the logic layer
(``spec/symbolic/``: vocabulary, universe, states, system) and sends each to the solver layer:

- initiation: ``axioms & init(s) & !C(s)`` is unsatisfiable, for every conjunct C (the property and each lemma);
- consecution: ``axioms & Inv(s) & T(s, s', p) & !C(s')`` is unsatisfiable for every transition T and conjunct C,
  where Inv is the conjunction of all conjuncts: each lemma is itself proved inductive (relative to the others);
- a step property P (e.g. EpochMonotonic): ``axioms & Inv(s) & T(s, s', p) & !P(s, s', p)`` is unsatisfiable, with
  Inv the property's lemmas (each again proved inductive).

What the engine reports is in ``results.py`` (a verdict per conjunct, per goal and per model, with the exit code).
A satisfiable obligation yields a counterexample to induction (``cti.py``): the pre-state, the step and the
post-state read from the z3 model, turned into model states by the encoding and rendered with the same trace
writers (text and ITF) as model-checker counterexamples.

Modules, from the bottom up: ``solver.py`` (z3 queries), ``cti.py`` (counterexamples to induction as model traces),
``results.py`` (result records), ``engine.py`` (the obligations, and proving a model by name).
"""
