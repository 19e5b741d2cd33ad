"""``haptic-sim schema``: write the JSON Schema of the scenario format (for editors and CI checks)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from simulator.scenario.json_schema import render_json_schema


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "schema",
        help="write the JSON Schema of scenario files",
        description="Writes the JSON Schema of the scenario format (committed as scenarios/scenario.schema.json).",
    )
    parser.add_argument("-o", "--output", type=Path, default=None, help="write here (default: stdout)")
    parser.add_argument("--check", action="store_true", help="with -o: exit 1 if the file differs, write nothing")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    text = render_json_schema()
    out: Path | None = args.output
    if out is None:
        if args.check:
            print("haptic-sim schema: --check needs --output", file=sys.stderr)
            return 2
        sys.stdout.write(text)
        return 0
    if args.check:
        if not out.is_file() or out.read_text(encoding="utf-8") != text:
            print(f"{out} is out of date; run `haptic-sim schema -o {out}`", file=sys.stderr)
            return 1
        return 0
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")
    print(out)
    return 0
