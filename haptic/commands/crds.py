"""``haptic crds``: print or write the CustomResourceDefinitions generated from the config models."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from haptic.config.crds import all_crds, render_crd_yaml


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "crds",
        help="generate the CRD manifests from the models",
        description="Generates the HAProxyTemplateConfig and HAProxyCfg CRDs (apiextensions.k8s.io/v1).",
    )
    parser.add_argument(
        "-o", "--output-dir", type=Path, default=None, help="write one YAML file per CRD here (default: stdout)"
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="with -o: do not write, exit 1 if the files there differ from the generated ones",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    rendered = {name: render_crd_yaml(crd) for name, crd in all_crds().items()}
    out_dir: Path | None = args.output_dir
    if out_dir is None:
        if args.check:
            print("haptic crds: --check needs --output-dir", file=sys.stderr)
            return 2
        sys.stdout.write("---\n".join(rendered.values()))
        return 0
    if args.check:
        stale = [n for n, text in rendered.items() if not (out_dir / n).is_file() or (out_dir / n).read_text() != text]
        for name in stale:
            print(f"{out_dir / name} is out of date; run `make crds`", file=sys.stderr)
        return 1 if stale else 0
    out_dir.mkdir(parents=True, exist_ok=True)
    for name, text in rendered.items():
        (out_dir / name).write_text(text)
        print(out_dir / name)
    return 0
