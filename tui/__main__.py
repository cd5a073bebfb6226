"""``python -m macaron_local.tui [--profile NAME]``: open the app (``macaron`` does the same)."""

from __future__ import annotations

import argparse
import sys

from macaron_local.tui.run import main

if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="python -m macaron_local.tui")
    parser.add_argument("--profile", help="harness profile (default: settings, then tall-local)")
    args = parser.parse_args()
    sys.exit(main(profile=args.profile))
