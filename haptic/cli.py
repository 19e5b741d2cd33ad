"""The ``haptic`` command line: run the controller, validate and render configs, print CRDs."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from haptic import __version__, commands
from haptic.cli_discovery import add_subcommands, run


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="haptic", description="HAProxy template ingress controller")
    parser.add_argument("--version", action="version", version=f"haptic {__version__}")
    add_subcommands(parser, commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    return run(build_parser(), argv)


if __name__ == "__main__":
    sys.exit(main())
