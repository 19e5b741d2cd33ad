"""``haptic migrate-report``: what the ``nginx`` and ``haproxytech`` libraries make of a set of Ingresses.

Reads Ingresses from YAML files or directories (multi-document files, ``kind: List``) or from a cluster
(kubeconfig, the official ``kubernetes`` client) and prints, per Ingress and in total, which
``nginx.ingress.kubernetes.io/*`` and ``haproxy.org/*`` annotations are supported, supported with
differences, ignored or refused, and which Ingresses would route differently (``haptic.templating.migration``).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from haptic.templating.dialects.registry import DIALECTS
from haptic.templating.migration import migration_report, report_table


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "migrate-report",
        help="report what the nginx/haproxytech libraries make of existing Ingresses",
        description="Reads Ingresses (from -f files/directories, else from the cluster of the kubeconfig) and "
        "prints per Ingress and in total which nginx.ingress.kubernetes.io/* and haproxy.org/* annotations are "
        "supported, supported with differences, ignored or refused, and which Ingresses would route differently.",
    )
    parser.add_argument("-f", "--file", type=Path, action="append", default=[],
                        help="YAML file or directory of Ingress manifests (repeatable); without it, read the cluster")
    parser.add_argument("--kubeconfig", default=None, help="kubeconfig file (default: $KUBECONFIG, ~/.kube/config)")
    parser.add_argument("--context", default=None, help="kubeconfig context")
    parser.add_argument("-n", "--namespace", default=None, help="only this namespace (default: all)")
    parser.add_argument("--dialect", choices=sorted(DIALECTS), default=None,
                        help="only this library's annotations (default: every known prefix)")
    parser.add_argument("-o", "--output", choices=("table", "json", "yaml"), default="table")
    parser.set_defaults(func=run)


def _documents(path: Path) -> Iterator[Any]:
    files = sorted(p for p in path.rglob("*") if p.suffix in (".yaml", ".yml", ".json")) if path.is_dir() else [path]
    for file in files:
        for doc in yaml.safe_load_all(file.read_text()):
            if isinstance(doc, dict) and doc.get("kind") == "List":
                yield from doc.get("items") or []
            else:
                yield doc


def ingresses_from_files(paths: list[Path]) -> list[dict[str, Any]]:
    found = []
    for path in paths:
        for doc in _documents(path):
            if isinstance(doc, dict) and doc.get("kind") == "Ingress":
                found.append(doc)
    return found


def ingresses_from_cluster(kubeconfig: str | None, context: str | None, namespace: str | None) -> list[dict[str, Any]]:
    from kubernetes import client, config

    api = config.new_client_from_config(config_file=kubeconfig, context=context)  # type: ignore[no-untyped-call]
    try:
        networking = client.NetworkingV1Api(api)
        listed = (networking.list_namespaced_ingress(namespace) if namespace
                  else networking.list_ingress_for_all_namespaces())
        items = [api.sanitize_for_serialization(item) for item in listed.items]
    finally:
        api.close()
    for item in items:
        item.setdefault("apiVersion", "networking.k8s.io/v1")
        item.setdefault("kind", "Ingress")
    return items


def run(args: argparse.Namespace) -> int:
    try:
        if args.file:
            ingresses = ingresses_from_files(args.file)
            if args.namespace:
                ingresses = [i for i in ingresses if (i.get("metadata") or {}).get("namespace") == args.namespace]
        else:
            ingresses = ingresses_from_cluster(args.kubeconfig, args.context, args.namespace)
    except (OSError, yaml.YAMLError) as exc:
        print(f"haptic migrate-report: cannot read the Ingresses: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # the kubernetes client's config and API errors have no common base
        print(f"haptic migrate-report: cannot list Ingresses from the cluster: {type(exc).__name__}: {exc}",
              file=sys.stderr)
        return 2
    report = migration_report(ingresses, args.dialect)
    if args.output == "json":
        print(json.dumps(report, indent=2))
    elif args.output == "yaml":
        print(yaml.safe_dump(report, sort_keys=False), end="")
    else:
        print(report_table(report), end="")
    return 0
