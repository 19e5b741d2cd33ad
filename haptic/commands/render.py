"""``haptic render``: render a config against fixture objects and print or write the result."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import yaml

from haptic.config.errors import ConfigError
from haptic.core.clock import real_wall_time
from haptic.templating.errors import TemplatingError
from haptic.validation.config_file import compile_config, object_name, read_config_file
from haptic.validation.setup import FixtureError, build_stores, render_inputs, storage_dirs


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "render",
        help="render a HAProxyTemplateConfig against fixture objects",
        description="Renders haproxy.cfg and every auxiliary file from fixtures shaped like a validation "
        "test's 'fixtures' (watched-resource name -> list of objects).",
    )
    parser.add_argument("-f", "--file", type=Path, required=True, help="HAProxyTemplateConfig YAML")
    parser.add_argument("--fixtures", type=Path, required=True, help="YAML mapping: resource name -> objects")
    parser.add_argument("--current-config", type=Path, default=None, help="deployed haproxy.cfg (slot preservation)")
    parser.add_argument(
        "-o", "--output-dir", type=Path, default=None, help="write haproxy.cfg and aux files here (default: stdout)"
    )
    parser.set_defaults(func=run)


def _subdir(directory: str) -> str:
    return Path(directory.rstrip("/")).name or "."


def run(args: argparse.Namespace) -> int:
    try:
        config = read_config_file(args.file)
        engine = compile_config(config, object_name=object_name(config, args.file))
    except ConfigError as exc:
        print(f"haptic render: invalid configuration: {exc}", file=sys.stderr)
        return 2
    try:
        fixtures = yaml.safe_load(args.fixtures.read_text()) or {}
        if not isinstance(fixtures, dict):
            raise FixtureError("the fixtures file must be a mapping of resource name to a list of objects")
        stores, pods = build_stores(config.spec, fixtures)
        current = args.current_config.read_text() if args.current_config else None
    except (OSError, yaml.YAMLError, FixtureError, ValueError) as exc:
        print(f"haptic render: {args.fixtures}: {exc}", file=sys.stderr)
        return 2
    try:
        result = engine.render(render_inputs(config.spec, stores, pods, current_config=current,
                                                 wall_time=real_wall_time()))
    except TemplatingError as exc:
        print(f"haptic render: rendering failed: {exc}", file=sys.stderr)
        return 1
    for warning in result.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    if args.output_dir is None:
        sys.stdout.write(result.config)
        return 0
    dirs = storage_dirs(config.spec)
    out: Path = args.output_dir
    out.mkdir(parents=True, exist_ok=True)
    (out / "haproxy.cfg").write_text(result.config)
    for directory, files in (
        (dirs.maps_dir, result.aux.maps),
        (dirs.general_storage_dir, result.aux.files),
        (dirs.ssl_certs_dir, result.aux.certificates),
        (dirs.general_storage_dir, result.aux.crt_lists),
    ):
        target = out / _subdir(directory)
        for name, content in files.items():
            target.mkdir(parents=True, exist_ok=True)
            (target / Path(name).name).write_text(content)
    count = sum(len(f) for f in (result.aux.maps, result.aux.files, result.aux.certificates, result.aux.crt_lists))
    print(f"wrote haproxy.cfg and {count} auxiliary file(s) to {out}", file=sys.stderr)
    return 0
