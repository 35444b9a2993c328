"""`python -m mkbimport`: the entry point that `mkb suite import` starts in a child process."""

import sys

from mkbimport.cli import main

try:
    sys.exit(main(sys.argv[1:]))
except Exception as error:  # an importer bug: one line and mkb's infrastructure code, not a traceback
    print(f"mkb suite import: internal error: {type(error).__name__}: {error}", file=sys.stderr)
    sys.exit(5)
