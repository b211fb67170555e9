"""Engines that read a model and its spec: bfs, dfs, simulate, spark, prove, traces, reports and the CLI."""
