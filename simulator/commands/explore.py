"""``haptic-sim explore``: a scenario under many seeds (random fault timings and orderings), invariants only."""

from __future__ import annotations

import argparse
import contextlib
import multiprocessing
import os
import signal
import sys
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from simulator.commands.run import add_log_level, quiet_logs
from simulator.local.signals import Interrupted
from simulator.scenario.backends import get_factory
from simulator.scenario.explore import describe_steps, parse_seeds, perturb
from simulator.scenario.loader import ScenarioCell, ScenarioLoadError, load_cells
from simulator.scenario.reports import write_trace
from simulator.scenario.runner import CellResult, RunOptions, run_cell_with
from simulator.scenario.seed_limits import DEFAULT_MEMORY_MB, DEFAULT_VIRTUAL, DEFAULT_WALL, SeedLimits, run_limited


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
    parser.add_argument("-j", "--jobs", type=int, default=1, help="run seeds in this many processes (default 1)")
    parser.add_argument("--max-virtual", type=float, default=DEFAULT_VIRTUAL,
                        help=f"per-seed limit of virtual (backend) seconds (default {DEFAULT_VIRTUAL:g})")
    parser.add_argument("--max-wall", type=float, default=DEFAULT_WALL,
                        help=f"per-seed wall-time limit in seconds; the seed is killed (default {DEFAULT_WALL:g})")
    parser.add_argument("--max-memory", type=int, default=DEFAULT_MEMORY_MB,
                        help=f"per-seed memory limit in MiB (default {DEFAULT_MEMORY_MB})")
    add_log_level(parser)
    parser.set_defaults(func=run)


def _one(path: str, index: int, seed: int, backend: str, log_level: str,
         limits: SeedLimits | None = None) -> CellResult:
    """One seed of one cell (also the worker function of ``--jobs``: everything is re-loaded there), in a
    child process within ``limits`` (virtual time, wall time, memory) when given."""
    quiet_logs(log_level)
    cell = load_cells(path)[index]
    explored = perturb(cell, seed)
    virtual = limits.virtual_seconds if limits is not None else None
    options = RunOptions(check_expectations=False, max_virtual_seconds=virtual)

    def run() -> CellResult:
        return run_cell_with(explored, get_factory(backend), options)

    if limits is None:
        return run()
    template = CellResult(id=explored.id, backend=backend, source=str(explored.source), seed=seed)
    return run_limited(run, template, limits)


def _results(args: argparse.Namespace, index: int, seeds: list[int]) -> Iterator[tuple[int, CellResult]]:
    """Results in seed order, each seed in a child process (``--jobs`` of them at once, or one by one
    within its limits).

    SIGTERM or SIGINT to this process is passed on to the children, whose backends then stop what they
    started; this process waits for them and raises ``Interrupted`` before the next seed."""
    limits = SeedLimits(args.max_virtual, args.max_wall, args.max_memory)
    received: list[int] = []

    def forward(signum: int, _frame: object) -> None:
        received.append(signum)
        for child in multiprocessing.active_children():
            with contextlib.suppress(ProcessLookupError):
                os.kill(child.pid or 0, signum)

    previous = {sig: signal.signal(sig, forward) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        if args.jobs <= 1:
            for seed in seeds:
                result = _one(str(args.scenario), index, seed, args.backend, args.log_level, limits)
                if received:
                    raise Interrupted(received[0])
                yield seed, result
            return
        with ProcessPoolExecutor(max_workers=args.jobs) as pool:
            futures = [pool.submit(_one, str(args.scenario), index, seed, args.backend, args.log_level, limits)
                       for seed in seeds]
            for seed, future in zip(seeds, futures, strict=True):
                if received:
                    pool.shutdown(wait=True, cancel_futures=True)  # the workers finish their cleanup first
                    raise Interrupted(received[0])
                try:
                    result = future.result()
                except BaseException:
                    if received:
                        pool.shutdown(wait=True, cancel_futures=True)
                        raise Interrupted(received[0]) from None
                    raise
                yield seed, result
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


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
    try:
        _explore(args, cells, seeds, failing)
    except KeyboardInterrupt as exc:  # the backends stopped what they started (simulator.local.signals)
        print("haptic-sim explore: interrupted", file=sys.stderr, flush=True)
        return exc.exit_code if isinstance(exc, Interrupted) else 130
    total = len(cells) * len(seeds)
    print(f"\n{total - len(failing)} of {total} runs kept every invariant")
    for cell_id, seed, summary in failing:
        print(f"  seed {seed} ({cell_id}): {summary}")
        print(f"    replay: haptic-sim explore {args.scenario} --seeds {seed} --show-steps")
    return 1 if failing else 0


def _explore(args: argparse.Namespace, cells: list[ScenarioCell], seeds: list[int],
             failing: list[tuple[str, int, str]]) -> None:
    for index, cell in enumerate(cells):
        for seed, result in _results(args, index, seeds):
            explored = perturb(cell, seed)
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
