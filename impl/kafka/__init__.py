"""Real Kafka under kraftcheck (issue 31): a harness around the released ``KafkaRaftClient`` and the conformance
checks that drive it (``harness.py``: build and run the JVM; ``abstraction.py``: Kafka's state to the model's;
``conform.py``: seeded random schedules with the model's safety properties checked after every step)."""
