"""CustomResourceDefinition manifests generated from the pydantic models.

``all_crds()`` gives ``{filename: CRD object}``; ``render_crd_yaml`` the committed YAML text. The
pydantic JSON Schema is rewritten into a *structural* OpenAPI v3 schema as
``apiextensions.k8s.io/v1`` requires: ``$ref`` inlined, ``null`` alternatives dropped (the
controller omits unset fields), ``const`` as a one-value ``enum``, free-form objects marked
``x-kubernetes-preserve-unknown-fields``, titles removed, only non-empty scalar defaults kept
(so the API server applies the same defaults as the models where the parent object is given).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import yaml
from pydantic import BaseModel
from pydantic.json_schema import GenerateJsonSchema

from haptic.config.aux_resources import (
    CRT_LIST_FILES,
    GENERAL_FILES,
    MAP_FILES,
    AuxFileStatus,
    CRTListFileSpec,
    GeneralFileSpec,
    MapFileSpec,
)
from haptic.config.durations import format_duration
from haptic.config.haproxycfg import HAProxyCfgSpec, HAProxyCfgStatus
from haptic.config.models import HAProxyTemplateConfigSpec, HAProxyTemplateConfigStatus
from haptic.names import API_GROUP, LIBRARIES_ANNOTATION

VERSION = "v1alpha1"


@dataclass(frozen=True)
class CRDInfo:
    kind: str
    plural: str
    singular: str
    short_names: tuple[str, ...]
    spec_model: type[BaseModel]
    status_model: type[BaseModel]
    description: str
    printer_columns: tuple[Mapping[str, Any], ...]
    #: spec fields a template library may supply: not required by the API server's schema (the
    #: controller requires them after merging the libraries the object's annotation names)
    library_supplied: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        return f"{self.plural}.{API_GROUP}"

    @property
    def filename(self) -> str:
        return f"{API_GROUP}_{self.plural}.yaml"


_AGE = {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}

CRDS: tuple[CRDInfo, ...] = (
    CRDInfo(
        kind="HAProxyTemplateConfig",
        plural="haproxytemplateconfigs",
        singular="haproxytemplateconfig",
        short_names=("htplcfg", "haptpl"),
        spec_model=HAProxyTemplateConfigSpec,
        status_model=HAProxyTemplateConfigStatus,
        description=(
            "Configuration of the HAProxy template ingress controller: which resources to watch, "
            "the templates rendering haproxy.cfg and auxiliary files, and how to reach HAProxy."
        ),
        printer_columns=(
            {"name": "Status", "type": "string", "jsonPath": ".status.validationStatus"},
            _AGE,
        ),
        library_supplied=("watchedResources", "haproxyConfig"),
    ),
    CRDInfo(
        kind="HAProxyCfg",
        plural="haproxycfgs",
        singular="haproxycfg",
        short_names=("hpcfg",),
        spec_model=HAProxyCfgSpec,
        status_model=HAProxyCfgStatus,
        description="The HAProxy configuration the controller rendered, validated and deployed, with per-pod status.",
        printer_columns=(
            {"name": "Checksum", "type": "string", "jsonPath": ".spec.checksum"},
            {"name": "Size", "type": "integer", "jsonPath": ".status.metadata.totalSize"},
            _AGE,
        ),
    ),
    *(
        CRDInfo(
            kind=kind.kind,
            plural=kind.plural,
            singular=kind.kind.lower(),
            short_names=(short,),
            spec_model=model,
            status_model=AuxFileStatus,
            description=f"One {what} of the configuration published in the HAProxyCfg that owns it.",
            printer_columns=(
                {"name": "File", "type": "string", "jsonPath": f".spec.{kind.name_field}"},
                {"name": "Checksum", "type": "string", "jsonPath": ".spec.checksum"},
                _AGE,
            ),
        )
        for kind, short, model, what in (
            (MAP_FILES, "hpmap", MapFileSpec, "HAProxy map file"),
            (GENERAL_FILES, "hpgf", GeneralFileSpec, "general file (error pages, Lua, ...)"),
            (CRT_LIST_FILES, "hpcl", CRTListFileSpec, "crt-list"),
        )
    ),
)


class _SchemaGenerator(GenerateJsonSchema):
    def encode_default(self, dft: Any) -> Any:
        if isinstance(dft, timedelta):
            return format_duration(dft)
        return super().encode_default(dft)


def _json_schema(model: type[BaseModel]) -> dict[str, Any]:
    return model.model_json_schema(by_alias=True, mode="validation", schema_generator=_SchemaGenerator)


def structural(schema: Mapping[str, Any]) -> dict[str, Any]:
    """Rewrites a pydantic JSON Schema (with ``$defs``) into a structural OpenAPI v3 schema."""
    defs = dict(schema.get("$defs") or {})
    return _convert(schema, defs)


def _resolve(node: Mapping[str, Any], defs: Mapping[str, Any]) -> Mapping[str, Any]:
    ref = node.get("$ref")
    if ref is None:
        return node
    target = defs[str(ref).rsplit("/", 1)[-1]]
    merged = dict(target)
    # Field-level keys beside the $ref (description, default) win over the model's own.
    merged.update({k: v for k, v in node.items() if k != "$ref"})
    return merged


def _convert(node: Mapping[str, Any], defs: Mapping[str, Any]) -> dict[str, Any]:
    node = _resolve(node, defs)
    if "anyOf" in node:
        alternatives = [a for a in node["anyOf"] if a.get("type") != "null"]
        if len(alternatives) != 1:
            raise ValueError(f"cannot express a union of {len(alternatives)} types structurally: {node}")
        merged = dict(_resolve(alternatives[0], defs))
        merged.update({k: v for k, v in node.items() if k not in ("anyOf", "default")})
        if node.get("default") is not None:
            merged["default"] = node["default"]
        node = merged
    out: dict[str, Any] = {}
    if node.get("description"):
        out["description"] = " ".join(str(node["description"]).split())
    if node.get("x-kubernetes-int-or-string"):
        out["x-kubernetes-int-or-string"] = True  # structural schemas give such a field no type
        return out
    kind = node.get("type")
    if "const" in node:
        out["type"] = kind or "string"
        out["enum"] = [node["const"]]
    elif kind is None:
        # Any: a free-form JSON value.
        out["x-kubernetes-preserve-unknown-fields"] = True
        return out
    else:
        out["type"] = kind
    for key in ("enum", "format", "pattern", "minimum", "maximum", "minLength", "maxLength", "minItems", "maxItems"):
        if key in node and key not in out:
            out[key] = node[key]
    if "minProperties" in node:
        out["minProperties"] = node["minProperties"]
    if kind == "object":
        props = node.get("properties")
        extra = node.get("additionalProperties")
        if props:
            out["properties"] = {name: _convert(sub, defs) for name, sub in props.items()}
            if node.get("required"):
                out["required"] = list(node["required"])
        elif isinstance(extra, Mapping) and extra:
            out["additionalProperties"] = _convert(extra, defs)
        else:
            out["x-kubernetes-preserve-unknown-fields"] = True
    elif kind == "array":
        out["items"] = _convert(node.get("items") or {}, defs)
    default = node.get("default")
    # Empty-string defaults would only add noise to every stored object.
    if default is not None and default != "" and not isinstance(default, dict | list):
        out["default"] = default
    return out


def crd_object(info: CRDInfo) -> dict[str, Any]:
    spec_schema = structural(_json_schema(info.spec_model))
    if info.library_supplied:
        spec_schema["required"] = [f for f in spec_schema.get("required", []) if f not in info.library_supplied]
        spec_schema["description"] = (
            (spec_schema.get("description", "") + " ").lstrip()
            + f"{' and '.join(info.library_supplied)} may come from the template libraries the "
              f"{LIBRARIES_ANNOTATION} annotation names; the controller requires them once those are merged in.")
    status_schema = structural(_json_schema(info.status_model))
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": info.name},
        "spec": {
            "group": API_GROUP,
            "names": {
                "kind": info.kind,
                "listKind": f"{info.kind}List",
                "plural": info.plural,
                "singular": info.singular,
                "shortNames": list(info.short_names),
            },
            "scope": "Namespaced",
            "versions": [
                {
                    "name": VERSION,
                    "served": True,
                    "storage": True,
                    "subresources": {"status": {}},
                    "additionalPrinterColumns": [dict(c) for c in info.printer_columns],
                    "schema": {
                        "openAPIV3Schema": {
                            "description": info.description,
                            "type": "object",
                            "properties": {
                                "apiVersion": {"type": "string"},
                                "kind": {"type": "string"},
                                "metadata": {"type": "object"},
                                "spec": spec_schema,
                                "status": status_schema,
                            },
                            "required": ["spec"],
                        }
                    },
                }
            ],
        },
    }


def all_crds() -> dict[str, dict[str, Any]]:
    """``{filename: CRD}`` for every custom resource HAPTIC defines, in a fixed order."""
    return {info.filename: crd_object(info) for info in CRDS}


def render_crd_yaml(crd: Mapping[str, Any]) -> str:
    header = "# Generated by `haptic crds` from haptic/config models. Do not edit; run `make crds`.\n"
    return header + yaml.safe_dump(dict(crd), sort_keys=False, allow_unicode=True, width=120)
