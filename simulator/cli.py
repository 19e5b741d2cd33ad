"""The ``haptic-sim`` command line: fake APIs, the demo stack and the scenario runner."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from haptic.cli_discovery import add_subcommands, run
from simulator import commands


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="haptic-sim", description="HAPTIC simulator and scenario runner")
    add_subcommands(parser, commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    return run(build_parser(), argv)


if __name__ == "__main__":
    sys.exit(main())
