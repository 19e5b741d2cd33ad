"""``haptic-sim run``: run scenario files on a backend, with progress, a summary and reports."""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path
from typing import Any

from simulator.local.signals import Interrupted
from simulator.scenario.backend_capabilities import blocking, capabilities, limitations
from simulator.scenario.backends import BACKENDS, get_factory
from simulator.scenario.divergence import compare, divergence_table
from simulator.scenario.loader import ScenarioCell, ScenarioLoadError, find_scenario_files, load_cells
from simulator.scenario.reports import junit_xml, print_failures, progress_line, summary_table, write_reports
from simulator.scenario.runner import CellResult, RunOptions, run_cell_with
from simulator.scenario.selection import SelectionError, compile_selection


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "run",
        help="run scenarios",
        description="Runs scenario files (or every *.yaml under directories) on a backend. Exit status 0 when "
                    "every selected scenario passed, 1 when one failed, 2 when a file does not load, 3 when the "
                    "backend is not available. With several backends (--backend sim,local) each scenario runs on "
                    "each, and a divergence report shows per scenario the verdicts and the first check whose "
                    "outcome differs.",
    )
    parser.add_argument("paths", nargs="*", default=["scenarios"], help="scenario files or directories")
    parser.add_argument("--backend", type=backend_list, default=["sim"], metavar="|".join(BACKENDS),
                        help="backend, or a comma-separated list for a divergence report (default: sim)")
    parser.add_argument("--seed", type=int, default=None, help="override every scenario's seed")
    parser.add_argument("-k", dest="keyword", default="", help="select by id: words, and/or/not, parentheses")
    parser.add_argument("--report", type=Path, default=None, help="write JUnit XML, summary and JSONL traces here")
    parser.add_argument("--junit", type=Path, default=None, metavar="FILE",
                        help="write JUnit XML to FILE (CI test reports; --report also writes DIR/junit.xml)")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress lines")
    parser.add_argument("--check", action="store_true",
                        help="only load the files and report, per scenario, the steps the backend cannot run and the "
                             "checks it cannot perform; exit 1 when a scenario cannot run there")
    add_log_level(parser)
    parser.set_defaults(func=run)


def backend_list(text: str) -> list[str]:
    names = [name.strip() for name in text.split(",") if name.strip()]
    unknown = [name for name in names if name not in BACKENDS]
    if not names or unknown:
        raise argparse.ArgumentTypeError(f"unknown backend {', '.join(unknown) or repr(text)} "
                                         f"(known: {', '.join(BACKENDS)})")
    return list(dict.fromkeys(names))


def add_log_level(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--log-level", default="critical", choices=["debug", "info", "warning", "error", "critical"],
                        help="log level of the simulated controllers (default: critical, i.e. quiet)")


def quiet_logs(level: str) -> None:
    """The controllers log through the standard logging tree; a run shows only what was asked for."""
    logging.basicConfig(level=level.upper(), format="%(levelname)s %(name)s: %(message)s")
    logging.getLogger().setLevel(level.upper())


def load_all(paths: list[str], out: Any = sys.stderr) -> list[ScenarioCell] | None:
    cells: list[ScenarioCell] = []
    broken = False
    for path in find_scenario_files(paths):
        try:
            cells.extend(load_cells(path))
        except ScenarioLoadError as exc:
            broken = True
            print(str(exc), file=out)
    return None if broken else cells


def report_limitations(cells: list[ScenarioCell], backend: str, out: Any, verbose: bool) -> int:
    """Prints what ``backend`` cannot do in each cell (before anything runs); returns how many cells can run."""
    caps = capabilities(backend)
    runnable = 0
    for cell in cells:
        found = limitations(cell, caps) if caps is not None else []
        if not blocking(found):
            runnable += 1
        if verbose and found:
            print(f"{cell.id} [{backend}]:", file=out)
            for limitation in found:
                print(f"  {limitation.render(str(cell.source))}", file=out)
    return runnable


def run(args: argparse.Namespace) -> int:
    quiet_logs(args.log_level)
    try:
        selected = compile_selection(args.keyword)
    except SelectionError as exc:
        print(str(exc), file=sys.stderr)
        return 2
    cells = load_all(args.paths)
    if cells is None:
        print("haptic-sim run: nothing ran, fix the scenario files above", file=sys.stderr)
        return 2
    cells = [c for c in cells if selected(c.id)]
    backends: list[str] = args.backend
    runnable = sum(report_limitations(cells, name, sys.stdout, verbose=args.check or not args.quiet)
                   for name in backends)
    if args.check:
        print(f"{runnable} of {len(cells) * len(backends)} scenario cell(s) can run on {','.join(backends)}")
        return 0 if runnable == len(cells) * len(backends) else 1
    factories = [get_factory(name) for name in backends]
    results: list[CellResult] = []
    runs = [(cell, factory) for cell in cells for factory in factories]
    try:
        for index, (cell, factory) in enumerate(runs, start=1):
            result = run_cell_with(cell, factory, RunOptions(seed=args.seed))
            results.append(result)
            if not args.quiet:
                print(progress_line(index, len(runs), result), flush=True)
                for made in result.generated:
                    print(f"      generated: {made}", flush=True)
    except KeyboardInterrupt as exc:  # the backend stopped what it started (simulator.local.signals)
        print(f"haptic-sim run: interrupted after {len(results)} of {len(runs)} run(s)", file=sys.stderr, flush=True)
        interrupted: int | None = exc.exit_code if isinstance(exc, Interrupted) else 130
    else:
        interrupted = None
    print_failures(results, sys.stdout)
    print()
    print(summary_table(results))
    if len(backends) > 1:
        print()
        print(divergence_table(compare(results, backends), backends))
    if args.report is not None:
        write_reports(args.report, results)
        print(f"reports in {args.report}")
    if args.junit is not None:
        args.junit.parent.mkdir(parents=True, exist_ok=True)
        args.junit.write_text(junit_xml(results), encoding="utf-8")
        print(f"JUnit XML in {args.junit}")
    if interrupted is not None:
        return interrupted
    if not results:
        print("no scenario selected", file=sys.stderr)
        return 1
    if all(r.status == "unavailable" for r in results):
        return 3
    return 1 if any(r.status in ("failed", "error") for r in results) else 0
