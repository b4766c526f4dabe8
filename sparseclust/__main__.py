"""``python -m sparseclust``: see :mod:`sparseclust._cli`."""

import os
import sys

from ._cli import main

if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:  # output piped into e.g. `head`: stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(1)
