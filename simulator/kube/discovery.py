"""Discovery documents, as far as kubectl, kopf and the official client read them (OpenAPI: ``openapi``)."""

from __future__ import annotations

from haptic.k8s.api import JSON, NotFound

from .resources import SUBRESOURCE_KINDS, ResourceType, TypeRegistry

SERVER_VERSION = {
    "major": "1",
    "minor": "32",
    "gitVersion": "v1.32.0-haptic-sim",
    "gitCommit": "0000000000000000000000000000000000000000",
    "gitTreeState": "clean",
    "buildDate": "2026-01-01T00:00:00Z",
    "goVersion": "go1.23.0",
    "compiler": "gc",
    "platform": "linux/amd64",
}


def api_versions(address: str) -> JSON:
    return {"kind": "APIVersions", "versions": ["v1"],
            "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": address}]}


def _group(name: str, versions: list[str]) -> JSON:
    entries = [{"groupVersion": f"{name}/{v}", "version": v} for v in versions]
    return {"name": name, "versions": entries, "preferredVersion": entries[0]}


def api_group_list(types: TypeRegistry) -> JSON:
    groups = [_group(name, versions) for name, versions in types.groups().items() if name]
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}


def api_group(types: TypeRegistry, name: str) -> JSON:
    versions = types.groups().get(name)
    if not versions or not name:
        raise NotFound(f"the server could not find the requested resource (group {name!r})")
    return {"kind": "APIGroup", "apiVersion": "v1", **_group(name, versions)}


def _resource(rt: ResourceType) -> JSON:
    entry: JSON = {"name": rt.plural, "singularName": rt.singular_name, "namespaced": rt.namespaced,
                   "kind": rt.kind, "verbs": list(rt.verbs)}
    if rt.short_names:
        entry["shortNames"] = list(rt.short_names)
    if rt.categories:
        entry["categories"] = list(rt.categories)
    return entry


def api_resource_list(types: TypeRegistry, group: str, version: str) -> JSON:
    found = types.in_group_version(group, version)
    if not found:
        raise NotFound(f"the server could not find the requested resource ({group}/{version})".replace("(/", "("))
    resources: list[JSON] = []
    for rt in found:
        resources.append(_resource(rt))
        if rt.has_status:
            resources.append({"name": f"{rt.plural}/status", "singularName": "", "namespaced": rt.namespaced,
                              "kind": rt.kind, "verbs": ["get", "patch", "update"]})
        for sub in rt.subresources:
            sub_group, sub_version, kind, verbs = SUBRESOURCE_KINDS[sub]
            resources.append({"name": f"{rt.plural}/{sub}", "singularName": "", "namespaced": rt.namespaced,
                              "group": sub_group, "version": sub_version, "kind": kind, "verbs": list(verbs)})
    return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": rt.api_version, "resources": resources}
