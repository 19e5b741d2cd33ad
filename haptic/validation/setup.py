"""Glue between a ``HAProxyTemplateConfigSpec`` and the engine: stores from fixtures, render inputs.

Shared by the validationTests runner and the ``haptic render`` command.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from haptic.config.models import HAProxyTemplateConfigSpec
from haptic.k8s.store import ResourceStore
from haptic.names import HAPROXY_PODS
from haptic.templating.context import StorageDirs
from haptic.templating.engine import RenderInputs

GLOBAL_TEST = "_global"


class FixtureError(ValueError):
    """A fixture names an unknown resource type or holds something that is not an object."""


def _identity(obj: Mapping[str, Any]) -> tuple[str, str, str]:
    meta = obj.get("metadata") or {}
    return (str(obj.get("kind", "")), str(meta.get("namespace") or ""), str(meta.get("name") or ""))


def merge_fixtures(
    global_fixtures: Mapping[str, Sequence[Mapping[str, Any]]] | None,
    test_fixtures: Mapping[str, Sequence[Mapping[str, Any]]],
) -> dict[str, list[Mapping[str, Any]]]:
    """``_global`` fixtures plus the test's; a test object replaces a global one with the same kind/namespace/name."""
    merged: dict[str, dict[tuple[str, str, str], Mapping[str, Any]]] = {}
    for source in (global_fixtures or {}, test_fixtures):
        for name, objects in source.items():
            bucket = merged.setdefault(name, {})
            for obj in objects or []:
                bucket[_identity(obj)] = obj
    return {name: list(bucket.values()) for name, bucket in merged.items()}


def build_stores(
    spec: HAProxyTemplateConfigSpec, fixtures: Mapping[str, Sequence[Any]]
) -> tuple[dict[str, ResourceStore], ResourceStore]:
    """One store per watched resource (plus ``haproxy-pods``) filled with ``fixtures``."""
    ignore = list(spec.watched_resources_ignore_fields)
    stores = {
        name: ResourceStore(name, list(watched.index_by), watched.field_selector, ignore)
        for name, watched in spec.watched_resources.items()
    }
    pods = ResourceStore(HAPROXY_PODS, ["metadata.namespace", "metadata.name"], None, ignore)
    for name in sorted(fixtures):
        target = pods if name == HAPROXY_PODS else stores.get(name)
        if target is None:
            known = ", ".join(sorted([*stores, HAPROXY_PODS]))
            raise FixtureError(f"fixtures.{name}: not a watched resource (known: {known})")
        for i, obj in enumerate(fixtures[name] or []):
            if not isinstance(obj, Mapping) or not isinstance(obj.get("metadata"), Mapping):
                raise FixtureError(f"fixtures.{name}[{i}]: not a Kubernetes object with metadata")
            if not (obj.get("metadata") or {}).get("name"):
                raise FixtureError(f"fixtures.{name}[{i}]: metadata.name is required")
            target.apply(obj)
    return stores, pods


def storage_dirs(spec: HAProxyTemplateConfigSpec) -> StorageDirs:
    return StorageDirs.from_spec(spec.dataplane)


def render_inputs(
    spec: HAProxyTemplateConfigSpec,
    stores: Mapping[str, ResourceStore],
    pods: ResourceStore | None = None,
    *,
    extra_context: Mapping[str, Any] | None = None,
    current_config: Any = None,
    capabilities: Mapping[str, Any] | None = None,
    wall_time: float | None = None,
) -> RenderInputs:
    """Render inputs for ``spec``; ``extra_context`` is merged over the spec's ``extraContext``.

    ``wall_time`` (epoch seconds, from the caller's clock) is what templates get from ``now()``."""
    extra = dict(spec.templating_settings.extra_context)
    extra.update(extra_context or {})
    return RenderInputs(
        stores=stores,
        haproxy_pods=pods,
        extra_context=extra,
        current_config=current_config,
        capabilities=dict(capabilities or {}),
        dirs=storage_dirs(spec),
        wall_time=wall_time,
    )
