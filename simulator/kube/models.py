"""The fields of built-in kinds, read from ``data/kube_models.json`` (generated from the official client's
models by ``scripts/gen_kube_models.py``): which fields a kind declares, so that the fake drops the others
as the API server's typed decoding does.

Model names follow the client: ``V1Deployment``, ``CoreV1Event``/``EventsV1Event`` where a kind name is
used by two groups.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

from .patching import merge_key
from .resources import ResourceType

_DATA = Path(__file__).with_name("data") / "kube_models.json"
Element = str | tuple[int, Any]  # a field name, or a list index with its item


@cache
def _models() -> Mapping[str, Mapping[str, Any]]:
    data: Mapping[str, Any] = json.loads(_DATA.read_text())
    models: Mapping[str, Mapping[str, Any]] = data["models"]
    return models


def client_version() -> str:
    return str(json.loads(_DATA.read_text())["client"])


def required_of(model: str) -> list[str]:
    entry = _models().get(model)
    return list(entry.get("required") or ()) if entry is not None else []


def fields_of(model: str) -> Mapping[str, str] | None:
    entry = _models().get(model)
    return entry["fields"] if entry is not None else None


@cache
def model_for(group: str, version: str, kind: str) -> str | None:
    """The client's model of a built-in kind (None when the client does not know it)."""
    head = (group.split(".")[0] if group else "core").capitalize()
    version_name = version[:1].upper() + version[1:]
    for name in (f"{head}{version_name}{kind}", f"{version_name}{kind}"):
        if name in _models():
            return name
    return None


def root_model(rt: ResourceType) -> str | None:
    return None if rt.custom else model_for(rt.group, rt.version, rt.kind)


def undeclared(obj: dict[str, Any], model: str) -> list[tuple[Element, ...]]:
    """Removes (in place) the fields the model does not declare; returns their paths."""
    found: list[tuple[Element, ...]] = []
    _prune(obj, model, (), found)
    return found


def _prune(value: Any, type_name: str, path: tuple[Element, ...], found: list[tuple[Element, ...]]) -> None:
    if type_name.startswith("list["):
        if isinstance(value, list):
            inner = type_name[5:-1]
            for index, item in enumerate(value):
                _prune(item, inner, (*path, (index, item)), found)
        return
    if type_name.startswith("map["):
        if isinstance(value, dict):
            inner = type_name[4:-1]
            for key, item in value.items():
                _prune(item, inner, (*path, key), found)
        return
    fields = fields_of(type_name)
    if fields is None or not isinstance(value, dict):
        return
    for key in list(value):
        sub = fields.get(key)
        if sub is None:
            del value[key]
            found.append((*path, key))
        else:
            _prune(value[key], sub, (*path, key), found)


def decode_path(path: tuple[Element, ...]) -> str:
    """``spec.template.spec.containers[0].foo``, as the strict JSON decoder names a field."""
    out = ""
    for element in path:
        if isinstance(element, tuple):
            out += f"[{element[0]}]"
        else:
            out += f".{element}" if out else element
    return out


def apply_path(path: tuple[Element, ...], kind: str) -> str:
    """``.spec.template.spec.containers[name="web"].foo``, as structured-merge-diff names a field."""
    out = ""
    names: list[str] = []
    for element in path:
        if isinstance(element, tuple):
            index, item = element
            key = merge_key(tuple(names), kind)
            if key is not None and isinstance(item, dict) and key in item:
                out += f"[{key}={json.dumps(item[key])}]"
            else:
                out += f"[{index}]"
        else:
            out += f".{element}"
            names.append(element)
    return out
