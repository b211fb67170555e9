"""The ``kraftcheck`` command: ``main`` builds the parser; ``prove`` and ``impl`` add their commands as plugins."""
