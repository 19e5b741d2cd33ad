"""``haptic benchmark``: render a config's validationTests fixtures N times and print the render times.

No ``haproxy -c`` and no assertions: only what the controller pays at every change for this config and
these objects (compile once, then render). ``_global`` is not benchmarked on its own (as the original),
its fixtures are merged into every test.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from haptic.config.errors import ConfigError
from haptic.config.models import ValidationTest
from haptic.core.clock import real_wall_time
from haptic.templating.errors import TemplatingError
from haptic.validation.assertions import RENDERING_ERROR
from haptic.validation.config_file import compile_config, object_name, read_config_file
from haptic.validation.haproxy_check import HAProxyValidator
from haptic.validation.render_profile import RenderProfile, format_timings
from haptic.validation.setup import GLOBAL_TEST, FixtureError, storage_dirs
from haptic.validation.testrunner import ValidationTestRunner


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "benchmark",
        help="time the renders of a HAProxyTemplateConfig's validationTests fixtures",
        description="Compiles the templates once, then renders each validation test's fixtures --iterations "
        "times and prints compile time and per-render times (no haproxy -c, no assertions).",
    )
    parser.add_argument("-f", "--file", type=Path, required=True, help="HAProxyTemplateConfig YAML")
    parser.add_argument("--test", action="append", default=None, help="benchmark only this test (repeatable)")
    parser.add_argument("--iterations", type=int, default=2, help="renders per test (default 2)")
    parser.add_argument("--profile-includes", action="store_true",
                        help="the 20 templates with the longest inclusive render time, per test")
    parser.add_argument("-o", "--output", choices=("table", "json"), default="table")
    parser.set_defaults(func=run)


def _expects_error(test: ValidationTest) -> bool:
    return any((assertion.target or "") == RENDERING_ERROR for assertion in test.assertions)


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 3)


def run(args: argparse.Namespace) -> int:
    if args.iterations < 1:
        print("haptic benchmark: --iterations must be at least 1", file=sys.stderr)
        return 2
    try:
        config = read_config_file(args.file)
        started = time.perf_counter()
        engine = compile_config(config, object_name=object_name(config, args.file))
        compile_seconds = time.perf_counter() - started
    except ConfigError as exc:
        print(f"haptic benchmark: invalid configuration: {exc}", file=sys.stderr)
        return 2
    tests = config.spec.validation_tests
    # A test that expects its render to fail measures nothing worth a figure (unless asked for by name).
    names = args.test or [name for name in sorted(tests) if name != GLOBAL_TEST and not _expects_error(tests[name])]
    unknown = [name for name in names if name not in tests]
    if unknown or not names:
        have = ", ".join(sorted(tests)) or "none"
        print(f"haptic benchmark: no validation test named {', '.join(unknown) or '(any)'} (have: {have})",
              file=sys.stderr)
        return 2
    # The runner only builds render inputs here; the validator is never called.
    runner = ValidationTestRunner(config.spec, engine, HAProxyValidator("haproxy", storage_dirs(config.spec)),
                                  wall_time=real_wall_time())
    rows: list[dict[str, Any]] = []
    for name in names:
        try:
            inputs = runner.inputs_for(name, tests[name])
        except (FixtureError, ValueError) as exc:
            print(f"haptic benchmark: {name}: fixtures: {exc}", file=sys.stderr)
            return 2
        samples: list[float] = []
        with RenderProfile(engine) as profile:
            for _ in range(args.iterations):
                started = time.perf_counter()
                try:
                    result = engine.render(inputs)
                except TemplatingError as exc:
                    print(f"haptic benchmark: {name}: rendering failed: {exc}", file=sys.stderr)
                    return 1
                samples.append(time.perf_counter() - started)
        aux = result.aux
        rows.append({
            "test": name, "iterations": len(samples), "minMs": _ms(min(samples)),
            "medianMs": _ms(statistics.median(samples)), "maxMs": _ms(max(samples)),
            "configBytes": len(result.config.encode()),
            "auxFiles": sum(len(files) for files in (aux.maps, aux.files, aux.certificates, aux.crt_lists)),
            "templates": [{"name": t.name, "calls": t.calls, "ms": _ms(t.seconds)} for t in profile.top()]
            if args.profile_includes else [],
            "_top": profile.top(),
        })
    if args.output == "json":
        print(json.dumps({"compileMs": _ms(compile_seconds),
                          "tests": [{k: v for k, v in row.items() if k != "_top"} for row in rows]}, indent=2))
        return 0
    print(f"compile: {compile_seconds * 1000:.1f} ms ({len(engine.template_names)} templates)")
    width = max(len(row["test"]) for row in rows)
    print(f"{'test':<{width}}  {'renders':>7}  {'min ms':>8}  {'median ms':>9}  {'max ms':>8}  "
          f"{'haproxy.cfg':>11}  aux")
    for row in rows:
        print(f"{row['test']:<{width}}  {row['iterations']:>7}  {row['minMs']:>8.2f}  {row['medianMs']:>9.2f}  "
              f"{row['maxMs']:>8.2f}  {row['configBytes']:>9} B  {row['auxFiles']}")
        if args.profile_includes:
            print("\n".join(format_timings(row["_top"], indent="    ")))
    return 0
