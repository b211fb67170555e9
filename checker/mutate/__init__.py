"""Spec mutation analysis (``kraftcheck mutate``): change one rule of a model at a time and see whether a property
notices.

A mutant that no property, reachability target or deadlock check tells from the original model shows a rule whose
breakage goes unobserved at those bounds: a missing property, bounds too small, or an equivalent mutant (which a
person marks, with the reason, in ``spec/mutants/<model>.toml``).  ``operators`` proposes the changes on the model's
syntax trees, ``sites`` finds the model's own modules, ``generate`` numbers the mutants, ``worker`` runs one in a
forked process that imports the mutated module in place of the file (nothing on disk is ever written),
``runner`` keeps a pool of them under a time limit, ``coverage`` finds the lines the original model never runs,
``equivalents`` reads the marked equivalents and ``report`` scores the outcomes; ``analysis`` ties them together.
"""
