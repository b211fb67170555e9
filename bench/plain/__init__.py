"""Benchmark models written the plain way the README teaches, each with a hand-tuned twin of the same state space.

Plain: attrs frozen records, frozensets, tuples of records, messages as a set or a bag, symmetry by renaming under
every permutation and keeping the smallest encoding (``@m.symmetric``).  Tuned: int tuples, bit-packed sets and a
hand-written canonical form, the way ``model/quorum`` is written.  ``tests/test_bench_plain.py`` checks that each
pair has the same distinct states, with and without symmetry; ``bench/bench_plain.py`` compares their cost.
"""
