"""`python -m dsim`: the `dsim` command."""

import sys

from .cli import main

sys.exit(main())
