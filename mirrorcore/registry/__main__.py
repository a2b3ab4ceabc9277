"""`python -m mirrorcore.registry --markdown > docs/properties.md`: the property tables, generated."""

from __future__ import annotations

import argparse
import sys

from mirrorcore.registry.markdown import markdown


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m mirrorcore.registry", description=__doc__)
    parser.add_argument("--markdown", action="store_true", help="print docs/properties.md")
    args = parser.parse_args(argv)
    if not args.markdown:
        parser.print_help()
        return 2
    sys.stdout.write(markdown())
    return 0


if __name__ == "__main__":
    sys.exit(main())
