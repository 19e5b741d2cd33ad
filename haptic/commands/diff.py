"""``haptic diff``: what a new config, or new objects, would change in the deployed haproxy.cfg.

The new side is a render: of ``-f CONFIG`` (default: the installation's stored HAProxyTemplateConfig)
over the installation's watched objects (or ``--fixtures``, shaped like a validation test's), with
``--apply FILE`` objects added or replacing those of the same kind, namespace and name. The old side is
the haproxy.cfg the installation published (or ``--deployed FILE``). Prints a unified diff and the
Dataplane API operations the controller would run, and whether they need a reload. Exit code as
diff(1): 0 no change, 1 changes, 2 trouble.
"""

from __future__ import annotations

import argparse
import asyncio
import difflib
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from haptic.commands.config import add_cluster_arguments
from haptic.config.errors import ConfigError
from haptic.config.models import HAProxyTemplateConfig, load_config
from haptic.core.clock import real_wall_time
from haptic.dataplane.errors import ConfigParseError
from haptic.dataplane.planner import plan
from haptic.k8s.api import JSON, ApiError, default_plural
from haptic.names import HAPROXY_PODS
from haptic.templating.errors import TemplatingError
from haptic.templating.libraries import LibraryError, expand_libraries
from haptic.validation.config_file import compile_config, read_config_file
from haptic.validation.setup import FixtureError, build_stores, merge_fixtures, render_inputs

Fixtures = dict[str, list[Mapping[str, Any]]]


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("diff", help="what a config or object change would change in haproxy.cfg",
                                   description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-f", "--file", type=Path, default=None,
                        help="the new HAProxyTemplateConfig (default: the installation's)")
    parser.add_argument("--apply", type=Path, action="append", default=[],
                        help="YAML objects to add or replace before rendering (repeatable)")
    parser.add_argument("--fixtures", type=Path, default=None,
                        help="objects as a YAML mapping resource name -> list (instead of the cluster's)")
    parser.add_argument("--deployed", type=Path, default=None,
                        help="the current haproxy.cfg (instead of the installation's published one)")
    add_cluster_arguments(parser)
    parser.set_defaults(func=run)


class DiffError(Exception):
    pass


def _yaml_objects(path: Path) -> list[JSON]:
    try:
        documents = list(yaml.safe_load_all(path.read_text()))
    except (OSError, yaml.YAMLError) as exc:
        raise DiffError(f"{path}: {exc}") from None
    objects: list[JSON] = []
    for document in documents:
        if document is None:
            continue
        items = document.get("items") if isinstance(document, dict) and document.get("kind") == "List" else [document]
        for item in items or []:
            if not isinstance(item, dict) or not isinstance(item.get("metadata"), dict) or not item.get("kind"):
                raise DiffError(f"{path}: every document must be a Kubernetes object with kind and metadata")
            objects.append(item)
    return objects


def _applied(spec_resources: Mapping[str, Any], fixtures: Fixtures, objects: Sequence[JSON]) -> Fixtures:
    """``fixtures`` with ``objects`` merged into the watched resource of their apiVersion and kind's plural."""
    extra: Fixtures = {}
    for obj in objects:
        api_version = str(obj.get("apiVersion") or "")
        plural = default_plural(str(obj["kind"]))
        names = [name for name, watched in spec_resources.items()
                 if watched.api_version == api_version and watched.resources == plural]
        if not names:
            where = f"{obj['kind']} {obj['metadata'].get('namespace', '')}/{obj['metadata'].get('name', '')}"
            raise DiffError(f"{where}: the config watches no {api_version} {obj['kind']}")
        for name in names:
            extra.setdefault(name, []).append(obj)
    return merge_fixtures(fixtures, extra)


async def _from_cluster(args: argparse.Namespace, need_config: bool, need_objects: bool,
                        need_deployed: bool) -> tuple[JSON | None, Fixtures | None, str | None, Any]:
    from haptic.live.cluster_reads import read_published_config, read_template_config, read_watched_objects
    from haptic.live.kube_client import connect

    async with await connect(kubeconfig=args.kubeconfig, context=args.context, host=args.server) as kube:
        stored = await read_template_config(kube, args.namespace, args.config_name) if need_config else None
        deployed = await read_published_config(kube, args.namespace, args.config_name) if need_deployed else None

        async def objects(config: HAProxyTemplateConfig) -> Fixtures:
            listed = await read_watched_objects(kube, config.spec, args.namespace)
            return {name: list(items) for name, items in listed.items()}

        config = _load(stored) if stored is not None else read_config_file(args.file)
        fixtures = await objects(config) if need_objects else None
        return stored, fixtures, deployed, config


def _load(document: JSON) -> HAProxyTemplateConfig:
    try:
        return load_config(expand_libraries(document))
    except LibraryError as exc:
        raise DiffError(f"the installation's config: metadata.annotations: {exc}") from None


def _fixtures_file(path: Path) -> Fixtures:
    try:
        loaded = yaml.safe_load(path.read_text()) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise DiffError(f"{path}: {exc}") from None
    if not isinstance(loaded, dict):
        raise DiffError(f"{path}: the fixtures file must be a mapping of resource name to a list of objects")
    return {str(name): list(items or []) for name, items in loaded.items()}


def _compute(args: argparse.Namespace) -> tuple[str, str]:
    need_cluster = args.file is None or args.fixtures is None or args.deployed is None
    config: HAProxyTemplateConfig | None = read_config_file(args.file) if args.file is not None else None
    fixtures = _fixtures_file(args.fixtures) if args.fixtures is not None else None
    deployed = args.deployed.read_text() if args.deployed is not None else None
    if need_cluster:
        _, listed, published, cluster_config = asyncio.run(
            _from_cluster(args, config is None, fixtures is None, deployed is None))
        config = config or cluster_config
        fixtures = fixtures if fixtures is not None else listed
        deployed = deployed if deployed is not None else published
    assert config is not None and fixtures is not None and deployed is not None
    objects = [obj for path in args.apply for obj in _yaml_objects(path)]
    fixtures = _applied(config.spec.watched_resources, fixtures, objects)
    engine = compile_config(config, object_name=f"HAProxyTemplateConfig {args.config_name}")
    stores, pods = build_stores(config.spec, {k: v for k, v in fixtures.items()
                                              if k in config.spec.watched_resources or k == HAPROXY_PODS})
    result = engine.render(render_inputs(config.spec, stores, pods, current_config=deployed,
                                         wall_time=real_wall_time()))
    for warning in result.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    return deployed, result.config


def run(args: argparse.Namespace) -> int:
    try:
        deployed, rendered = _compute(args)
    except (ConfigError, DiffError, FixtureError, OSError, ApiError, LookupError) as exc:
        print(f"haptic diff: {exc}", file=sys.stderr)
        return 2
    except TemplatingError as exc:
        print(f"haptic diff: rendering failed: {exc}", file=sys.stderr)
        return 2
    if deployed == rendered:
        print("no change: the render equals the deployed haproxy.cfg")
        return 0
    sys.stdout.writelines(difflib.unified_diff(deployed.splitlines(keepends=True), rendered.splitlines(keepends=True),
                                               "deployed/haproxy.cfg", "rendered/haproxy.cfg"))
    try:
        sync = plan(deployed, rendered)
    except ConfigParseError as exc:
        print(f"\nthe deployed config cannot be planned against ({exc}): the controller would push it whole")
        return 1
    runtime = len(sync.runtime_operations)
    print(f"\n{len(sync.operations)} Dataplane API operation(s), {runtime} through the runtime API; "
          f"{'a reload is needed' if sync.reload_required else 'no reload'}")
    for op in sync.operations:
        print(f"  {'runtime ' if op.runtime else ''}{op.description}")
    return 1
