"""``haptic-sim explore``: a scenario under many seeds (random fault timings and orderings), invariants only."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from simulator.commands.run import add_log_level, quiet_logs
from simulator.scenario.backends import get_factory
from simulator.scenario.explore import describe_steps, parse_seeds, perturb
from simulator.scenario.loader import ScenarioLoadError, load_cells
from simulator.scenario.reports import write_trace
from simulator.scenario.runner import RunOptions, run_cell_with


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "explore",
        help="run a scenario under many seeds and check the invariants",
        description="Runs SCENARIO once per seed with fault timings, pauses and object orderings drawn from the "
                    "seed; expectations are skipped, invariants checked after every step. Failing seeds are "
                    "printed with the command that replays each exactly.",
    )
    parser.add_argument("scenario", type=Path)
    parser.add_argument("--seeds", default="1..20", help="e.g. 1..200, or 7, or 1,5,9 (default 1..20)")
    parser.add_argument("--backend", choices=["sim", "local", "kind"], default="sim")
    parser.add_argument("--show-steps", action="store_true", help="print the perturbed steps of each failing seed")
    parser.add_argument("--report", type=Path, default=None, help="write the traces of failing seeds here")
    add_log_level(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    quiet_logs(args.log_level)
    try:
        seeds = parse_seeds(args.seeds)
    except ValueError as exc:
        print(f"haptic-sim explore: --seeds: {exc}", file=sys.stderr)
        return 2
    try:
        cells = load_cells(args.scenario)
    except ScenarioLoadError as exc:
        print(str(exc), file=sys.stderr)
        return 2
    factory = get_factory(args.backend)
    reason = factory.unavailable_reason()
    if reason is not None:
        print(f"haptic-sim explore: {reason}", file=sys.stderr)
        return 3
    failing: list[tuple[str, int, str]] = []
    for cell in cells:
        for seed in seeds:
            explored = perturb(cell, seed)
            result = run_cell_with(explored, factory, RunOptions(check_expectations=False))
            mark = "ok " if result.status == "passed" else "FAIL"
            print(f"{mark} {cell.id} seed {seed}: {len(explored.scenario.steps)} steps, "
                  f"virtual {result.virtual_seconds:.1f}s", flush=True)
            if result.status != "passed":
                first = result.failures[0] if result.failures else None
                summary = f"{first.check}: {first.message}" if first else result.message
                failing.append((cell.id, seed, summary))
                print(result.report())
                if args.show_steps:
                    print("\n".join(describe_steps(explored)))
                if args.report is not None:
                    result.id = f"{result.id}.seed-{seed}"
                    write_trace(args.report, result)
    total = len(cells) * len(seeds)
    print(f"\n{total - len(failing)} of {total} runs kept every invariant")
    for cell_id, seed, summary in failing:
        print(f"  seed {seed} ({cell_id}): {summary}")
        print(f"    replay: haptic-sim explore {args.scenario} --seeds {seed} --show-steps")
    return 1 if failing else 0
