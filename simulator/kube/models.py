"""The fields of built-in kinds, read from ``data/kube_models.json`` (generated from the official client's
models by ``scripts/gen_kube_models.py``): which fields a kind declares, so that the fake drops the others
as the API server's typed decoding does.

Model names follow the client: ``V1Deployment``, ``CoreV1Event``/``EventsV1Event`` where a kind name is
used by two groups.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
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


_ROOTS: dict[tuple[str, str], str | None] = {}


def root_model(rt: ResourceType) -> str | None:
    if rt.custom:
        return None
    key = (rt.api_version, rt.kind)
    try:
        return _ROOTS[key]
    except KeyError:
        found = _ROOTS[key] = model_for(rt.group, rt.version, rt.kind)
        return found


def undeclared(obj: dict[str, Any], model: str) -> list[tuple[Element, ...]]:
    """Removes (in place) the fields the model does not declare; returns their paths."""
    found: list[tuple[Element, ...]] = []
    _walker(model)(obj, (), found)
    return found


# Walks a value of one type: drops the fields its type does not declare, appends their paths to ``found``.
Walker = Callable[[Any, tuple[Element, ...], list[tuple[Element, ...]]], None]
# One walker per type, compiled on first use: every write of a built-in kind walks its model.
_WALKERS: dict[str, Walker] = {}


def _walker(type_name: str) -> Walker:
    walker = _WALKERS.get(type_name)
    if walker is None:
        walker = _WALKERS[type_name] = _compile(type_name)
    return walker


@cache
def _structured(type_name: str) -> bool:
    """Whether a value of the type can hold fields of its own (scalars, and lists or maps of them, cannot)."""
    if type_name.startswith("list["):
        return _structured(type_name[5:-1])
    if type_name.startswith("map["):
        return _structured(type_name[4:-1])
    return type_name in _models()


def _compile(type_name: str) -> Walker:
    if type_name.startswith(("list[", "map[")):
        inner = type_name[5:-1] if type_name.startswith("list[") else type_name[4:-1]
        if not _structured(inner):
            return _scalar
        return _list_walker(inner) if type_name.startswith("list[") else _map_walker(inner)
    fields = _models()[type_name]["fields"] if type_name in _models() else None
    if fields is None:
        return _scalar
    declared = frozenset(fields)
    structured = [(key, sub) for key, sub in fields.items() if _structured(sub)]
    # The walkers of the fields are bound on the first walk, not here: types refer to themselves (JSONSchemaProps).
    nested: list[tuple[str, Walker]] = []

    def walk(value: Any, path: tuple[Element, ...], found: list[tuple[Element, ...]]) -> None:
        if not isinstance(value, dict):
            return
        if not declared.issuperset(value):
            for key in [k for k in value if k not in declared]:
                del value[key]
                found.append((*path, key))
        if len(nested) != len(structured):
            nested[:] = [(key, _walker(sub)) for key, sub in structured]
        for key, walker in nested:
            item = value.get(key)
            if item is not None:
                walker(item, (*path, key), found)

    return walk


def _list_walker(inner: str) -> Walker:
    def walk(value: Any, path: tuple[Element, ...], found: list[tuple[Element, ...]]) -> None:
        if isinstance(value, list):
            item_walker = _walker(inner)
            for index, item in enumerate(value):
                item_walker(item, (*path, (index, item)), found)

    return walk


def _map_walker(inner: str) -> Walker:
    def walk(value: Any, path: tuple[Element, ...], found: list[tuple[Element, ...]]) -> None:
        if isinstance(value, dict):
            item_walker = _walker(inner)
            for key, item in value.items():
                item_walker(item, (*path, key), found)

    return walk


def _scalar(value: Any, path: tuple[Element, ...], found: list[tuple[Element, ...]]) -> None:
    """Scalars (and lists or maps of them) declare no fields."""


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
