"""``/openapi/v3``: one document per group version, with the schemas ``kubectl explain`` reads.

Built-in kinds are described from the official client's models (``models``: ``data/kube_models.json`` for
the fields; ``data/kube_docs.json``, written by ``scripts/gen_kube_docs.py``, for their descriptions), named
as the API server names them (``io.k8s.api.apps.v1.Deployment``,
``io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta``) and marked with ``x-kubernetes-group-version-kind``.
Custom resources are described by their CRD's ``openAPIV3Schema`` (named ``com.example.v1.Widget`` for
group ``example.com``), with ``apiVersion``, ``kind`` and ``metadata`` added as the API server adds them.

Every document also declares the ``fieldValidation`` query parameter on its PATCH operations: kubectl
checks for it to decide that the server validates (and then skips client-side schema validation).
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
from collections.abc import Iterable, Mapping
from functools import cache
from pathlib import Path
from typing import Any

from haptic.k8s.api import JSON, NotFound

from .models import fields_of, required_of, root_model
from .resources import ResourceType, TypeRegistry

_DATA = Path(__file__).with_name("data")
_META_PKG = "io.k8s.apimachinery.pkg.apis.meta.v1"
_REF = "#/components/schemas/"
_META_MODELS = {"ObjectMeta", "ListMeta", "LabelSelector", "LabelSelectorRequirement", "OwnerReference",
                "ManagedFieldsEntry", "Condition", "Status", "StatusDetails", "StatusCause", "DeleteOptions",
                "Preconditions", "WatchEvent", "ShardInfo"}
# The packages of the groups (and of the client's model-name prefixes: CoreV1Event, EventsV1Event, ...).
_GROUP_PACKAGES = {
    "": "io.k8s.api.core", "apps": "io.k8s.api.apps", "batch": "io.k8s.api.batch",
    "autoscaling": "io.k8s.api.autoscaling", "policy": "io.k8s.api.policy",
    "networking.k8s.io": "io.k8s.api.networking", "discovery.k8s.io": "io.k8s.api.discovery",
    "coordination.k8s.io": "io.k8s.api.coordination", "events.k8s.io": "io.k8s.api.events",
    "rbac.authorization.k8s.io": "io.k8s.api.rbac", "authorization.k8s.io": "io.k8s.api.authorization",
    "authentication.k8s.io": "io.k8s.api.authentication",
    "admissionregistration.k8s.io": "io.k8s.api.admissionregistration",
    "apiextensions.k8s.io": "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions",
    "apiregistration.k8s.io": "io.k8s.kube-aggregator.pkg.apis.apiregistration",
    "storage.k8s.io": "io.k8s.api.storage", "flowcontrol.apiserver.k8s.io": "io.k8s.api.flowcontrol",
    "resource.k8s.io": "io.k8s.api.resource",
}
_PREFIX_GROUPS = {"Core": "", "Events": "events.k8s.io", "Discovery": "discovery.k8s.io",
                  "Rbac": "rbac.authorization.k8s.io", "Authentication": "authentication.k8s.io",
                  "Apiextensions": "apiextensions.k8s.io", "Apiregistration": "apiregistration.k8s.io",
                  "Admissionregistration": "admissionregistration.k8s.io", "Storage": "storage.k8s.io",
                  "Flowcontrol": "flowcontrol.apiserver.k8s.io", "Resource": "resource.k8s.io"}
_MODEL_NAME = re.compile(r"^(?P<prefix>[A-Z][a-z]+)?(?P<version>V\d+(?:(?:alpha|beta)\d+)?)(?P<name>[A-Z]\w*)$")
# Fields the client types as plain strings that the API types as resource.Quantity.
_QUANTITIES = {("V1ResourceRequirements", "limits"), ("V1ResourceRequirements", "requests"),
               ("V1VolumeResourceRequirements", "limits"), ("V1VolumeResourceRequirements", "requests"),
               ("V1EmptyDirVolumeSource", "sizeLimit"), ("V1ResourceFieldSelector", "divisor"),
               ("V1NodeStatus", "capacity"), ("V1NodeStatus", "allocatable"), ("V1PodSpec", "overhead"),
               ("V1ContainerStatus", "allocatedResources"), ("V2MetricTarget", "averageValue"),
               ("V2MetricTarget", "value"), ("V2MetricValueStatus", "averageValue"),
               ("V2MetricValueStatus", "value")}
_MICRO_TIMES = {("V1LeaseSpec", "acquireTime"), ("V1LeaseSpec", "renewTime"), ("EventsV1Event", "eventTime"),
                ("CoreV1Event", "eventTime"), ("EventsV1EventSeries", "lastObservedTime"),
                ("CoreV1EventSeries", "lastObservedTime")}
_SCALARS: dict[str, JSON] = {
    f"{_META_PKG}.Time": {"description": "Time is a wrapper around time.Time which supports correct marshaling to "
                                         "YAML and JSON.", "type": "string", "format": "date-time"},
    f"{_META_PKG}.MicroTime": {"description": "MicroTime is version of Time with microsecond level precision.",
                               "type": "string", "format": "date-time"},
    "io.k8s.apimachinery.pkg.util.intstr.IntOrString": {
        "description": "IntOrString is a type that can hold an int32 or a string.", "format": "int-or-string",
        "oneOf": [{"type": "integer"}, {"type": "string"}]},
    "io.k8s.apimachinery.pkg.api.resource.Quantity": {
        "description": "Quantity is a fixed-point representation of a number (\"100m\", \"2Gi\", 3).",
        "oneOf": [{"type": "string"}, {"type": "number"}]},
}


@cache
def _docs() -> Mapping[str, Mapping[str, str]]:
    docs: Mapping[str, Mapping[str, str]] = json.loads((_DATA / "kube_docs.json").read_text())["models"]
    return docs


def _known(model: str) -> bool:
    return fields_of(model) is not None


class _Namer:
    """Definition names for models: meta types in apimachinery, prefixed models in their prefix's group,
    the others in the group of the first kind (in type-table order) that uses them."""

    def __init__(self, types: Iterable[ResourceType]) -> None:
        self.groups: dict[str, str] = {}
        for rt in types:
            root = root_model(rt)
            if root is not None:
                self._claim(root, rt.group)
                if _known(root + "List"):
                    self._claim(root + "List", rt.group)

    def _claim(self, root: str, group: str) -> None:
        pending = [root]
        while pending:
            model = pending.pop()
            if model in self.groups:
                continue
            self.groups[model] = group
            for type_name in (fields_of(model) or {}).values():
                inner = _element(type_name)
                if _known(inner):
                    pending.append(inner)

    def name(self, model: str) -> str:
        match = _MODEL_NAME.match(model)
        if match is None:
            return model
        version, kind = match["version"].lower(), match["name"]
        if kind in _META_MODELS and not match["prefix"]:
            return f"{_META_PKG}.{kind}"
        group = _PREFIX_GROUPS.get(match["prefix"] or "", self.groups.get(model, ""))
        return f"{_GROUP_PACKAGES.get(group, 'io.k8s.api.' + group.split('.')[0])}.{version}.{kind}"


def _element(type_name: str) -> str:
    while type_name.startswith(("list[", "map[")):
        type_name = type_name[type_name.index("[") + 1:-1]
    return type_name


def _ref(name: str, description: str = "") -> JSON:
    if description:
        return {"allOf": [{"$ref": _REF + name}], "description": description}
    return {"$ref": _REF + name}


class _Builder:
    """Component schemas for the models reachable from some roots."""

    def __init__(self, namer: _Namer) -> None:
        self.namer = namer
        self.schemas: dict[str, JSON] = {}

    def _property(self, model: str, field: str, type_name: str, description: str) -> JSON:
        if (model, field) in _QUANTITIES:
            type_name = type_name.replace("string", "quantity")
        if (model, field) in _MICRO_TIMES:
            type_name = "micro-time"
        schema = self._type(type_name)
        if description:
            if "$ref" in schema:
                return _ref(schema["$ref"][len(_REF):], description)
            schema = {"description": description, **schema}
        return schema

    def _type(self, type_name: str) -> JSON:
        if type_name.startswith("list["):
            return {"type": "array", "items": self._type(type_name[5:-1])}
        if type_name.startswith("map["):
            return {"type": "object", "additionalProperties": self._type(type_name[4:-1])}
        simple: dict[str, JSON] = {"string": {"type": "string"}, "integer": {"type": "integer"},
                  "number": {"type": "number", "format": "double"}, "boolean": {"type": "boolean"},
                  "byte": {"type": "string", "format": "byte"},
                  "any": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}
        if type_name in simple:
            return dict(simple[type_name])
        scalar = {"date-time": f"{_META_PKG}.Time", "micro-time": f"{_META_PKG}.MicroTime",
                  "int-or-string": "io.k8s.apimachinery.pkg.util.intstr.IntOrString",
                  "quantity": "io.k8s.apimachinery.pkg.api.resource.Quantity"}.get(type_name)
        if scalar is not None:
            self.schemas[scalar] = _SCALARS[scalar]
            return {"$ref": _REF + scalar}
        if _known(type_name):
            return {"$ref": _REF + self.add(type_name)}
        return {"type": "object", "x-kubernetes-preserve-unknown-fields": True}

    def add(self, model: str, gvks: list[JSON] | None = None) -> str:
        name = self.namer.name(model)
        if name in self.schemas and not gvks:
            return name
        docs = _docs().get(model) or {}
        schema: JSON = {"type": "object"}
        if docs.get(""):
            schema = {"description": docs[""], **schema}
        self.schemas[name] = schema  # before the fields: models refer to themselves (JSONSchemaProps)
        properties = {field: self._property(model, field, type_name, docs.get(field, ""))
                      for field, type_name in sorted((fields_of(model) or {}).items())}
        if properties:
            schema["properties"] = properties
        if required_of(model):
            schema["required"] = required_of(model)
        if gvks:
            schema["x-kubernetes-group-version-kind"] = gvks
        return name


def _gvk(rt: ResourceType, kind: str | None = None) -> list[JSON]:
    return [{"group": rt.group, "kind": kind or rt.kind, "version": rt.version}]


def _gv_path(group: str, version: str) -> str:
    return f"apis/{group}/{version}" if group else f"api/{version}"


_WRITE_PARAMETERS = [{"name": name, "in": "query", "schema": {"type": "string", "uniqueItems": True}}
                     for name in ("dryRun", "fieldManager", "fieldValidation")]


def _operation(rt: ResourceType, action: str, schema: str | None, writes: bool, ok: str = "200") -> JSON:
    content = {"application/json": {"schema": {"$ref": _REF + schema}}} if schema else None
    op: JSON = {"x-kubernetes-action": action,
                "x-kubernetes-group-version-kind": {"group": rt.group, "version": rt.version, "kind": rt.kind},
                "responses": {ok: {"description": "OK", **({"content": content} if content else {})}}}
    if writes:
        op["parameters"] = _WRITE_PARAMETERS
        if content:
            op["requestBody"] = {"content": content}
    return op


def _paths(types: list[ResourceType], names: Mapping[str, str]) -> JSON:
    paths: JSON = {}
    for rt in types:
        scope = "/namespaces/{namespace}" if rt.namespaced else ""
        base = f"/{_gv_path(rt.group, rt.version)}{scope}/{rt.plural}"
        schema = names.get(rt.kind)
        if "create" in rt.verbs:
            paths[base] = {"post": _operation(rt, "post", schema, True, "201")}
        if rt.verbs != ("create",):
            paths[base + "/{name}"] = {
                "get": _operation(rt, "get", schema, False), "put": _operation(rt, "put", schema, True),
                "patch": _operation(rt, "patch", schema, True), "delete": _operation(rt, "delete", None, False)}
    return paths


def _crd_schema(rt: ResourceType, crd_schema: Mapping[str, Any] | None, builder: _Builder) -> JSON:
    default: JSON = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    schema: JSON = copy.deepcopy(dict(crd_schema)) if isinstance(crd_schema, Mapping) else default
    properties = schema.setdefault("properties", {})
    properties["apiVersion"] = {"description": "APIVersion defines the versioned schema of this representation of "
                                               "an object.", "type": "string"}
    properties["kind"] = {"description": "Kind is a string value representing the REST resource this object "
                                         "represents.", "type": "string"}
    properties["metadata"] = _ref(builder.add("V1ObjectMeta"), "Standard object's metadata.")
    schema.setdefault("type", "object")
    schema["x-kubernetes-group-version-kind"] = _gvk(rt)
    return schema


def _crd_name(rt: ResourceType, kind: str) -> str:
    return ".".join([*reversed(rt.group.split(".")), rt.version, kind])


def crd_schemas(types: TypeRegistry, crds: Iterable[JSON]) -> dict[ResourceType, Any]:
    """The ``openAPIV3Schema`` of every served custom type, from the stored CRDs."""
    out: dict[ResourceType, Any] = {}
    for crd in crds:
        spec = crd.get("spec") or {}
        plural = (spec.get("names") or {}).get("plural", "")
        for version in spec.get("versions") or []:
            rt = types.find(str(spec.get("group", "")), str(version.get("name", "")), plural)
            if rt is not None and rt.custom:
                out[rt] = (version.get("schema") or {}).get("openAPIV3Schema")
    return out


class OpenAPI:
    """Builds (and caches, for built-ins) the documents of a type registry; ``crd_schemas`` maps a custom
    type to its ``openAPIV3Schema``."""

    def __init__(self, types: TypeRegistry) -> None:
        self.types = types
        self._builtin: dict[tuple[str, str], JSON] = {}

    def document(self, group: str, version: str, crd_schemas: Mapping[ResourceType, Any]) -> JSON:
        found = self.types.in_group_version(group, version)
        if not found:
            raise NotFound(f"the server could not find the requested resource (openapi/v3/{_gv_path(group, version)})")
        if not any(rt.custom for rt in found):
            cached = self._builtin.get((group, version))
            if cached is None:
                cached = self._builtin[(group, version)] = self._build(found, crd_schemas)
            return cached
        return self._build(found, crd_schemas)

    def _build(self, found: list[ResourceType], crd_schemas: Mapping[ResourceType, Any]) -> JSON:
        builder = _Builder(_Namer(self.types.all()))
        names: dict[str, str] = {}
        for rt in found:
            if not rt.custom:
                model = root_model(rt)
                if model is None:
                    continue
                names[rt.kind] = builder.add(model, _gvk(rt))
                list_model = model + "List"
                if _known(list_model):
                    builder.add(list_model, _gvk(rt, rt.list_kind))
                continue
            name = _crd_name(rt, rt.kind)
            builder.schemas[name] = _crd_schema(rt, crd_schemas.get(rt), builder)
            names[rt.kind] = name
            list_meta = builder.add("V1ListMeta")
            builder.schemas[_crd_name(rt, rt.list_kind)] = {
                "type": "object", "required": ["items"],
                "properties": {"apiVersion": {"type": "string"}, "kind": {"type": "string"},
                               "items": {"type": "array", "items": {"$ref": _REF + name}},
                               "metadata": _ref(list_meta)},
                "x-kubernetes-group-version-kind": _gvk(rt, rt.list_kind)}
        return {"openapi": "3.0.0", "info": {"title": "Kubernetes", "version": "v1.32.0"},
                "paths": _paths(found, names), "components": {"schemas": dict(sorted(builder.schemas.items()))}}

    def serve(self, path: str, crds: Iterable[JSON]) -> JSON:
        """``/openapi/v3`` (the root listing group versions) or ``/openapi/v3/<gv path>``."""
        schemas = crd_schemas(self.types, crds)
        parts = path.strip("/").split("/") if path.strip("/") else []
        if not parts:
            return self.root(schemas)
        if parts[0] == "api" and len(parts) == 2:
            return self.document("", parts[1], schemas)
        if parts[0] == "apis" and len(parts) == 3:
            return self.document(parts[1], parts[2], schemas)
        raise NotFound(f"the server could not find the requested resource (openapi/v3/{path.strip('/')})")

    def root(self, crd_schemas: Mapping[ResourceType, Any]) -> JSON:
        paths: JSON = {}
        for group, versions in self.types.groups().items():
            for version in versions:
                doc = self.document(group, version, crd_schemas)
                digest = hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()[:32].upper()
                paths[_gv_path(group, version)] = {"serverRelativeURL": f"/openapi/v3/{_gv_path(group, version)}"
                                                                        f"?hash={digest}"}
        return {"paths": paths}
