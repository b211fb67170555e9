"""``python -m kraftcheck ...`` is the ``kraftcheck`` command."""

import sys

from kraftcheck.checker.cli.main import main

sys.exit(main())
