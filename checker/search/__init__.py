"""Explicit-state search in one process: one module per strategy (bfs, dfs, simulate), the run every engine shares,
the result, the visited set and state fingerprints."""
