"""``haptic config view``: a config as the cluster stores it, or the haproxy.cfg an installation published.

With ``-f FILE``: the HAProxyTemplateConfig with its template libraries expanded (what the controller
and the API server work with; what ``kubectl apply`` of the short form stores once libraries are
expanded). Without: the ``<name>-haproxycfg`` HAProxyCfg of a running installation, decompressed, as the
original's ``config view`` prints it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import yaml

from haptic.config.errors import ConfigError
from haptic.k8s.api import ApiError
from haptic.templating.libraries import LibraryError, expand_libraries
from haptic.validation.config_file import read_config_document


def add_cluster_arguments(parser: argparse.ArgumentParser) -> None:
    """Where the installation is: kubeconfig/context (or ``--server`` for fakes), namespace, config name."""
    parser.add_argument("--kubeconfig", default=None, help="kubeconfig file (default: $KUBECONFIG, ~/.kube/config)")
    parser.add_argument("--context", default=None, help="kubeconfig context")
    parser.add_argument("--server", default=None, help="API server URL without credentials (fakes)")
    parser.add_argument("-n", "--namespace", default=os.environ.get("POD_NAMESPACE", "haptic"),
                        help="the controller's namespace (default: $POD_NAMESPACE, else haptic)")
    parser.add_argument("--crd-name", dest="config_name", default=os.environ.get("CRD_NAME", "haproxy-config"),
                        help="the HAProxyTemplateConfig's name (env CRD_NAME; default haproxy-config)")


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("config", help="show configurations", description=__doc__)
    commands = parser.add_subparsers(dest="config_command", metavar="COMMAND", required=True)
    view = commands.add_parser(
        "view", help="a config with its libraries expanded (-f), or the haproxy.cfg an installation published",
        description="With -f: the HAProxyTemplateConfig with its template libraries expanded. Without: the "
        "haproxy.cfg the installation published (HAProxyCfg <crd-name>-haproxycfg), decompressed.")
    view.add_argument("-f", "--file", type=Path, default=None, help="HAProxyTemplateConfig YAML to expand")
    view.add_argument("-o", "--output", choices=("yaml", "json"), default="yaml", help="format of the -f form")
    add_cluster_arguments(view)
    view.set_defaults(func=run_view)


def run_view(args: argparse.Namespace) -> int:
    if args.file is not None:
        try:
            expanded = expand_libraries(read_config_document(args.file))
        except ConfigError as exc:
            print(f"haptic config view: {exc}", file=sys.stderr)
            return 2
        except LibraryError as exc:
            print(f"haptic config view: {args.file}: metadata.annotations: {exc}", file=sys.stderr)
            return 2
        if args.output == "json":
            print(json.dumps(expanded, indent=2))
        else:
            print(yaml.safe_dump(expanded, sort_keys=False), end="")
        return 0
    from haptic.live.cluster_reads import NotPublished, read_published_config
    from haptic.live.kube_client import connect

    async def published() -> str:
        async with await connect(kubeconfig=args.kubeconfig, context=args.context, host=args.server) as kube:
            return await read_published_config(kube, args.namespace, args.config_name)

    try:
        sys.stdout.write(asyncio.run(published()))
    except NotPublished as exc:
        print(f"haptic config view: {exc}", file=sys.stderr)
        return 1
    except (ApiError, OSError) as exc:
        print(f"haptic config view: cannot read the installation: {exc}", file=sys.stderr)
        return 2
    return 0
