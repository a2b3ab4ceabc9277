"""`python -m bench [options]` (what `make bench` runs); `--help` lists the options."""

from __future__ import annotations

import sys

from bench.options import parse
from bench.runner import main

if __name__ == "__main__":
    sys.exit(main(parse(sys.argv[1:])))
