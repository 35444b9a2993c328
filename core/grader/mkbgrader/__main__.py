"""Entry point for `python -m mkbgrader`."""

import sys

from mkbgrader.parent.cli import main

sys.exit(main(sys.argv[1:]))
