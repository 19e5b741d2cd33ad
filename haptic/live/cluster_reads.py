"""One-shot reads of an installation for the CLI (``haptic config view``, ``haptic diff``): the stored
HAProxyTemplateConfig, the published ``HAProxyCfg`` content, and every object a config watches.

Lists, never watches: a command answers once and exits.
"""

from __future__ import annotations

from haptic.config.aux_resources import CRT_LIST_FILES, GENERAL_FILES, MAP_FILES, RUNTIME_CONFIG_LABEL
from haptic.config.haproxycfg import runtime_config_name
from haptic.config.models import HAProxyTemplateConfigSpec
from haptic.controller.context import HAPROXY_CFGS, PODS, TEMPLATE_CONFIGS
from haptic.controller.publish.aux_publisher import aux_ref
from haptic.controller.publish.content import decode_content
from haptic.k8s.api import JSON, KubeAPI, NotFound, ResourceRef, Selectors
from haptic.k8s.watch_loop import list_all
from haptic.names import HAPROXY_PODS


async def read_published_files(kube: KubeAPI, namespace: str, config_name: str) -> dict[str, dict[str, str]]:
    """The maps, general files and crt-lists published beside the HAProxyCfg: ``{"maps": {name: text}, ...}``."""
    selector = Selectors(label_selector=f"{RUNTIME_CONFIG_LABEL}={runtime_config_name(config_name)}")
    files: dict[str, dict[str, str]] = {}
    for kind, group in ((MAP_FILES, "maps"), (GENERAL_FILES, "files"), (CRT_LIST_FILES, "crt_lists")):
        found = files.setdefault(group, {})
        items, _ = await list_all(kube, aux_ref(kind), namespace, selector)
        for item in items:
            spec = item.get("spec") or {}
            found[str(spec.get(kind.name_field) or "")] = decode_content(str(spec.get(kind.content_field) or ""),
                                                                         bool(spec.get("compressed")))
    return files


class NotPublished(LookupError):
    """The installation has published no configuration (yet)."""


async def read_template_config(kube: KubeAPI, namespace: str, name: str) -> JSON:
    return await kube.get(TEMPLATE_CONFIGS, name, namespace)


async def read_published_config(kube: KubeAPI, namespace: str, config_name: str) -> str:
    """The haproxy.cfg the controller last published for ``config_name`` (decompressed)."""
    name = runtime_config_name(config_name)
    try:
        published = await kube.get(HAPROXY_CFGS, name, namespace)
    except NotFound:
        raise NotPublished(f"no HAProxyCfg {namespace}/{name}: the controller has published nothing for "
                           f"HAProxyTemplateConfig {namespace}/{config_name}") from None
    spec = published.get("spec") or {}
    return decode_content(str(spec.get("content") or ""), bool(spec.get("compressed")))


async def read_watched_objects(kube: KubeAPI, spec: HAProxyTemplateConfigSpec,
                               namespace: str) -> dict[str, list[JSON]]:
    """Every object of every watched resource (with its server-side label selector), and the HAProxy pods
    the config's ``podSelector`` picks in ``namespace``: the shape of validationTests fixtures."""
    objects: dict[str, list[JSON]] = {}
    for name, watched in sorted(spec.watched_resources.items()):
        ref = ResourceRef(watched.api_version, watched.resources, True)
        objects[name], _ = await list_all(kube, ref, None, Selectors(label_selector=watched.label_selector))
    objects[HAPROXY_PODS], _ = await list_all(kube, PODS, namespace,
                                              Selectors(label_selector=spec.pod_selector.label_selector))
    return objects
