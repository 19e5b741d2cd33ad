"""``haptic validate``: run a config's embedded validationTests with the real ``haproxy``."""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path
from typing import Any

import yaml

from haptic.config.errors import ConfigError
from haptic.core.clock import real_wall_time
from haptic.validation.capabilities import detect_capabilities
from haptic.validation.config_file import compile_config, object_name, read_config_file
from haptic.validation.haproxy_check import HAProxyValidator
from haptic.validation.setup import storage_dirs
from haptic.validation.testrunner import ValidationTestRunner, report_data, report_summary
from haptic.validation.verbose_report import run_profiled, verbose_data, verbose_summary


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "validate",
        help="run a HAProxyTemplateConfig's validationTests",
        description="Compiles the templates of a HAProxyTemplateConfig (full CR or bare spec) and runs its "
        "embedded validationTests; haproxy_valid assertions run the real 'haproxy -c'.",
    )
    parser.add_argument("-f", "--file", type=Path, required=True, help="HAProxyTemplateConfig YAML")
    parser.add_argument("--test", default=None, help="run only this test")
    parser.add_argument("-o", "--output", choices=("summary", "json", "yaml"), default="summary")
    parser.add_argument("--dump-rendered", action="store_true", help="print each test's rendered files")
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="every assertion, each test's duration, the render time per template (inclusive), "
                        "and a preview of the text a failed assertion looked at")
    parser.add_argument("--haproxy-binary", default=None, help="haproxy to use (default: from PATH)")
    parser.set_defaults(func=run)


def find_haproxy(explicit: str | None) -> str | None:
    if explicit:
        return explicit
    return shutil.which("haproxy") or shutil.which("haproxy", path="/usr/sbin:/usr/local/sbin")


def run(args: argparse.Namespace) -> int:
    try:
        config = read_config_file(args.file)
        engine = compile_config(config, object_name=object_name(config, args.file))
    except ConfigError as exc:
        print(f"haptic validate: invalid configuration: {exc}", file=sys.stderr)
        for detail in exc.details()[1:]:
            print(f"  {detail}", file=sys.stderr)
        return 2
    binary = find_haproxy(args.haproxy_binary)
    if binary is None:
        print("haptic validate: haproxy not found (install it or pass --haproxy-binary)", file=sys.stderr)
        return 2
    try:
        capabilities = detect_capabilities(binary)
    except RuntimeError as exc:
        print(f"haptic validate: {exc}", file=sys.stderr)
        return 2
    validator = HAProxyValidator(binary, storage_dirs(config.spec), strict=True)
    runner = ValidationTestRunner(config.spec, engine, validator, capabilities=capabilities,
                                  wall_time=real_wall_time())
    if not config.spec.validation_tests:
        print("haptic validate: the configuration has no validationTests", file=sys.stderr)
        return 1
    try:
        if args.verbose:
            report, timings = run_profiled(runner, args.test)
        else:
            report, timings = runner.run(args.test), None
    except KeyError as exc:
        print(f"haptic validate: {exc.args[0]}", file=sys.stderr)
        return 2
    data = report_data(report) if timings is None else verbose_data(report, timings)
    if args.output == "json":
        print(json.dumps(data, indent=2))
    elif args.output == "yaml":
        print(yaml.safe_dump(data, sort_keys=False), end="")
    else:
        print(report_summary(report) if timings is None else verbose_summary(report, timings))
    if args.dump_rendered:
        for result in report.results:
            rendered = result.rendered
            if rendered is None:
                continue
            print(f"===== {result.name}: haproxy.cfg =====")
            print(rendered.config, end="")
            for kind in ("maps", "files", "certificates", "crt_lists"):
                for name, content in getattr(rendered.aux, kind).items():
                    print(f"===== {result.name}: {kind}/{name} =====")
                    print(content if kind != "certificates" else "(certificate content not shown)", end="\n")
    return 0 if report.passed else 1
