"""Field ownership for server-side apply: leaf paths, ``managedFields`` (FieldsV1) and apply merges.

A pragmatic model of structured-merge-diff: ownership is tracked per leaf field, list items are keyed by
the built-in merge keys (other lists are atomic leaves), and finalizers are a set.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from haptic.k8s.api import JSON, Conflict

from .patching import is_set_list, json_copy, merge_key, strategic_merge

Path = tuple[str, ...]
_META_OWNED = ("labels", "annotations", "finalizers", "ownerReferences")
_TOP_SKIPPED = ("apiVersion", "kind", "metadata", "status")


def _item_key(key: str, item: Mapping[str, Any]) -> str:
    return "k:" + json.dumps({key: item[key]}, separators=(",", ":"))


def _walk(value: Any, path: Path, names: tuple[str, ...], kind: str, out: dict[Path, Any]) -> None:
    if isinstance(value, dict) and value:
        for k, v in value.items():
            _walk(v, (*path, "f:" + k), (*names, k), kind, out)
        return
    if isinstance(value, list) and value:
        key = merge_key(names, kind)
        if key is not None and all(isinstance(i, dict) and key in i for i in value):
            for item in value:
                _walk(item, (*path, _item_key(key, item)), names, kind, out)
            return
        if is_set_list(names):
            for item in value:
                out[(*path, "v:" + json.dumps(item, separators=(",", ":")))] = item
            return
    out[path] = value


def leaves(obj: Mapping[str, Any], kind: str, with_status: bool = False) -> dict[Path, Any]:
    """Leaf field paths (FieldsV1 element names) of an object, mapped to their values."""
    out: dict[Path, Any] = {}
    for key, value in obj.items():
        if key in _TOP_SKIPPED and not (key == "status" and with_status):
            continue
        _walk(value, ("f:" + key,), (key,), kind, out)
    meta = obj.get("metadata") or {}
    for key in _META_OWNED:
        if key in meta:
            _walk(meta[key], ("f:metadata", "f:" + key), ("metadata", key), kind, out)
    return out


def encode(paths: list[Path]) -> JSON:
    """Leaf paths to a FieldsV1 tree."""
    root: JSON = {}
    for path in sorted(paths):
        node = root
        for element in path:
            node = node.setdefault(element, {})
            if element.startswith("k:"):
                node.setdefault(".", {})
    return root


def decode(tree: Mapping[str, Any], prefix: Path = ()) -> set[Path]:
    """A FieldsV1 tree back to its leaf paths."""
    out: set[Path] = set()
    for element, child in tree.items():
        if element == ".":
            continue
        path = (*prefix, element)
        children = {k: v for k, v in (child or {}).items() if k != "."}
        if children:
            out |= decode(children, path)
        else:
            out.add(path)
    return out


def describe(path: Path) -> str:
    parts = []
    for element in path:
        kind, _, rest = element.partition(":")
        parts.append("." + rest if kind == "f" else "[" + rest + "]")
    return "".join(parts)


def _index_of(items: list[Any], element: str) -> int | None:
    kind, _, rest = element.partition(":")
    if kind == "k":
        wanted = json.loads(rest)
        for i, item in enumerate(items):
            if isinstance(item, dict) and all(item.get(k) == v for k, v in wanted.items()):
                return i
    elif kind == "v":
        value = json.loads(rest)
        if value in items:
            return items.index(value)
    return None


def remove_path(obj: Any, path: Path) -> None:
    """Removes one leaf (mutating ``obj``), pruning list items and maps the removal emptied."""
    if not path:
        return
    element = path[0]
    if isinstance(obj, dict) and element.startswith("f:"):
        key = element[2:]
        if key not in obj:
            return
        if len(path) == 1:
            del obj[key]
            return
        remove_path(obj[key], path[1:])
        if isinstance(obj[key], dict | list) and not obj[key]:
            del obj[key]
    elif isinstance(obj, list):
        index = _index_of(obj, element)
        if index is None:
            return
        if len(path) == 1:
            del obj[index]
            return
        remove_path(obj[index], path[1:])
        if isinstance(obj[index], dict) and not obj[index]:
            del obj[index]


class ManagedFields:
    """The ``metadata.managedFields`` of one object as editable sets of paths per (manager, operation)."""

    def __init__(self, entries: list[Any] | None) -> None:
        self.entries: list[JSON] = []
        self.sets: list[set[Path]] = []
        for entry in entries or []:
            if isinstance(entry, dict) and entry.get("manager") is not None:
                self.entries.append({k: v for k, v in entry.items() if k != "fieldsV1"})
                self.sets.append(decode(entry.get("fieldsV1") or {}))

    def _slot(self, manager: str, operation: str, api_version: str, time: str, subresource: str | None) -> int:
        for i, entry in enumerate(self.entries):
            if entry.get("manager") == manager and entry.get("operation") == operation and \
                    entry.get("subresource") == subresource:
                entry["time"] = time
                entry["apiVersion"] = api_version
                return i
        entry = {"manager": manager, "operation": operation, "apiVersion": api_version, "time": time,
                 "fieldsType": "FieldsV1"}
        if subresource:
            entry["subresource"] = subresource
        self.entries.append(entry)
        self.sets.append(set())
        return len(self.entries) - 1

    def owners(self, path: Path) -> list[str]:
        return [e["manager"] for e, s in zip(self.entries, self.sets, strict=True) if path in s]

    def record_update(self, manager: str, api_version: str, time: str, changed: set[Path], removed: set[Path],
                      subresource: str | None = None) -> None:
        for s in self.sets:
            s -= changed
            s -= removed
        if changed:
            self.sets[self._slot(manager, "Update", api_version, time, subresource)] |= changed

    def render(self) -> list[JSON]:
        out: list[JSON] = []
        for entry, paths in zip(self.entries, self.sets, strict=True):
            if paths:
                out.append({**entry, "fieldsV1": encode(list(paths))})
        return out


def diff_paths(old: dict[Path, Any], new: dict[Path, Any]) -> tuple[set[Path], set[Path]]:
    changed = {p for p, v in new.items() if p not in old or old[p] != v}
    removed = {p for p in old if p not in new}
    return changed, removed


def apply(current: JSON | None, applied: JSON, manager: str, force: bool, kind: str, time: str,
          api_version: str) -> JSON:
    """Server-side apply of ``applied`` by ``manager`` onto ``current``; returns the new object with
    its ``managedFields``. Raises a 409 listing the conflicting fields unless ``force``."""
    base: JSON = json_copy(current) if current is not None else {}
    managed = ManagedFields((base.get("metadata") or {}).get("managedFields"))
    wanted = leaves(applied, kind)
    current_values = leaves(base, kind) if current is not None else {}
    conflicts: list[tuple[str, Path]] = []
    for path, value in wanted.items():
        if path in current_values and current_values[path] == value:
            continue
        for owner in managed.owners(path):
            if owner != manager:
                conflicts.append((owner, path))
    conflicts = list(dict.fromkeys(conflicts))
    if conflicts and not force:
        causes = [{"type": "FieldManagerConflict", "message": f'conflict with "{o}": {describe(p)}',
                   "field": describe(p)} for o, p in conflicts]
        lines = "\n".join(f'- conflict with "{o}": {describe(p)}' for o, p in conflicts)
        raise Conflict(f"Apply failed with {len(conflicts)} conflict(s):\n{lines}", {"causes": causes})
    mine = next((i for i, e in enumerate(managed.entries)
                 if e.get("manager") == manager and e.get("operation") == "Apply"), None)
    previously = managed.sets[mine] if mine is not None else set()
    taken = set(wanted)
    overridden = {p for _, p in conflicts}
    for i, entry in enumerate(managed.entries):
        if i == mine:
            continue
        if entry.get("manager") == manager:
            managed.sets[i] -= taken
        elif overridden:
            # Forced: the conflicting fields change hands; fields applied with equal values stay shared.
            managed.sets[i] -= overridden
    others = [s for i, s in enumerate(managed.sets) if i != mine]
    released = [p for p in sorted(previously - taken) if not any(p in s for s in others)]
    # A list item whose fields nobody owns any more goes as a whole, server-defaulted fields with it
    # (structured-merge-diff drops an item whose key its applier stopped owning). Items go first: the
    # key fields that find them are leaves too.
    owned = [p for s in others for p in s] + list(taken)
    items: dict[Path, None] = {}
    for path in released:
        for cut in range(len(path) - 1, 0, -1):
            item = path[: cut + 1]
            if path[cut].startswith("k:") and not any(p[: cut + 1] == item for p in owned):
                items.setdefault(item, None)
    for item in sorted(items, key=len):
        remove_path(base, item)
    for path in released:
        remove_path(base, path)
    body = {k: v for k, v in applied.items() if k not in ("apiVersion", "kind", "metadata", "status")}
    meta_patch = {k: v for k, v in (applied.get("metadata") or {}).items() if k in _META_OWNED}
    merged = strategic_merge(base, body, (), kind)
    merged["metadata"] = strategic_merge(merged.get("metadata") or {}, meta_patch, ("metadata",), kind)
    slot = managed._slot(manager, "Apply", api_version, time, None)
    managed.sets[slot] = taken
    merged["metadata"]["managedFields"] = managed.render()
    return merged
