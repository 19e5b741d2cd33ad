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
from dataclasses import dataclass
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
from haptic.templating.engine import RenderResult
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


@dataclass
class _Sides:
    config: HAProxyTemplateConfig | None = None
    fixtures: Fixtures | None = None
    deployed: str | None = None
    #: the published maps, files and crt-lists (``{"maps": {name: text}, ...}``); None when not read
    deployed_files: dict[str, dict[str, str]] | None = None


async def _from_cluster(args: argparse.Namespace, sides: _Sides) -> None:
    from haptic.live.cluster_reads import (
        read_published_config,
        read_published_files,
        read_template_config,
        read_watched_objects,
    )
    from haptic.live.kube_client import connect

    async with await connect(kubeconfig=args.kubeconfig, context=args.context, host=args.server) as kube:
        if sides.config is None:
            sides.config = _load(await read_template_config(kube, args.namespace, args.config_name))
        if sides.deployed is None:
            sides.deployed = await read_published_config(kube, args.namespace, args.config_name)
            sides.deployed_files = await read_published_files(kube, args.namespace, args.config_name)
        if sides.fixtures is None:
            listed = await read_watched_objects(kube, sides.config.spec, args.namespace)
            sides.fixtures = {name: list(items) for name, items in listed.items()}


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


def _compute(args: argparse.Namespace) -> tuple[_Sides, RenderResult]:
    sides = _Sides(config=read_config_file(args.file) if args.file is not None else None,
                   fixtures=_fixtures_file(args.fixtures) if args.fixtures is not None else None,
                   deployed=args.deployed.read_text() if args.deployed is not None else None)
    if sides.config is None or sides.fixtures is None or sides.deployed is None:
        asyncio.run(_from_cluster(args, sides))
    config, deployed = sides.config, sides.deployed
    assert config is not None and sides.fixtures is not None and deployed is not None
    objects = [obj for path in args.apply for obj in _yaml_objects(path)]
    fixtures = _applied(config.spec.watched_resources, sides.fixtures, objects)
    engine = compile_config(config, object_name=f"HAProxyTemplateConfig {args.config_name}")
    stores, pods = build_stores(config.spec, {k: v for k, v in fixtures.items()
                                              if k in config.spec.watched_resources or k == HAPROXY_PODS})
    result = engine.render(render_inputs(config.spec, stores, pods, current_config=deployed,
                                         wall_time=real_wall_time()))
    for warning in result.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    return sides, result


def _file_diffs(deployed: dict[str, dict[str, str]], rendered: RenderResult) -> list[str]:
    """Unified diffs of the maps, general files and crt-lists that differ from the published ones."""
    out: list[str] = []
    for group, label in (("maps", "maps"), ("files", "files"), ("crt_lists", "crt-lists")):
        old, new = deployed.get(group, {}), getattr(rendered.aux, group)
        for name in sorted(set(old) | set(new)):
            if old.get(name) != new.get(name):
                out.extend(difflib.unified_diff(
                    (old.get(name) or "").splitlines(keepends=True), (new.get(name) or "").splitlines(keepends=True),
                    f"deployed/{label}/{name}" if name in old else "/dev/null",
                    f"rendered/{label}/{name}" if name in new else "/dev/null"))
    return out


def run(args: argparse.Namespace) -> int:
    try:
        sides, result = _compute(args)
    except (ConfigError, DiffError, FixtureError, OSError, ApiError, LookupError) as exc:
        print(f"haptic diff: {exc}", file=sys.stderr)
        return 2
    except TemplatingError as exc:
        print(f"haptic diff: rendering failed: {exc}", file=sys.stderr)
        return 2
    deployed, rendered = sides.deployed or "", result.config
    files = _file_diffs(sides.deployed_files, result) if sides.deployed_files is not None else []
    if deployed == rendered and not files:
        print("no change: the render equals the deployed configuration")
        return 0
    sys.stdout.writelines(difflib.unified_diff(deployed.splitlines(keepends=True), rendered.splitlines(keepends=True),
                                               "deployed/haproxy.cfg", "rendered/haproxy.cfg"))
    sys.stdout.writelines(files)
    if deployed == rendered:
        print("\nhaproxy.cfg unchanged: the files above are updated through the runtime API or uploaded")
        return 1
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
