"""Explicit-state search in one process: one module per strategy (bfs, dfs, simulate), the run every engine shares,
the result, the visited set and state fingerprints, and the tables that register strategies and visited sets
(``strategies``)."""
