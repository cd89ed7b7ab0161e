"""python -m lab COMMAND ... (the same commands as the invoke tasks; see lab/cli.py)."""

import sys

from .cli import main

sys.exit(main())
