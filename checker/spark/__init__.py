"""The same BFS across Spark executors: the session, the engine (driver and task) and per-level checkpoints."""
