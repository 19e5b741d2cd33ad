"""JSON merge patch (RFC 7386), JSON patch (RFC 6902) and strategic merge patch for built-in types."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import jsonpatch
import jsonpointer

from haptic.k8s.api import ApiError, Invalid

# Lists that strategic merge (and server-side apply) merge item by item, keyed by this field. Keyed by
# the list's field name; ``ports`` depends on where it sits (see ``merge_key``).
_MERGE_KEYS = {
    "containers": "name",
    "initContainers": "name",
    "ephemeralContainers": "name",
    "volumes": "name",
    "imagePullSecrets": "name",
    "env": "name",
    "volumeMounts": "mountPath",
    "volumeDevices": "devicePath",
    "hostAliases": "ip",
    "conditions": "type",
    "ownerReferences": "uid",
    "topologySpreadConstraints": "topologyKey",
}
_CONTAINER_LISTS = ("containers", "initContainers", "ephemeralContainers")
# Lists of scalars merged as sets rather than replaced.
_SET_LISTS = ("finalizers",)


_CONTAINERS = (dict, list)


def json_copy(value: Any) -> Any:
    """A deep copy of JSON-shaped data (dicts, lists, scalars); faster than ``copy.deepcopy``."""
    kind = type(value)
    if kind is dict:
        return {k: v if type(v) not in _CONTAINERS else json_copy(v) for k, v in value.items()}
    if kind is list:
        return [v if type(v) not in _CONTAINERS else json_copy(v) for v in value]
    if isinstance(value, dict):
        return {k: json_copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [json_copy(v) for v in value]
    return value


def merge_key(path: tuple[str, ...], kind: str) -> str | None:
    """The merge key of the list at ``path`` (field names only), or None when the list is atomic."""
    name = path[-1] if path else ""
    if name == "ports":
        if len(path) >= 2 and path[-2] in _CONTAINER_LISTS:
            return "containerPort"
        if kind == "Service" and path == ("spec", "ports"):
            return "port"
        return None
    return _MERGE_KEYS.get(name)


def is_set_list(path: tuple[str, ...]) -> bool:
    return bool(path) and path[-1] in _SET_LISTS


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386: objects merge recursively, ``null`` deletes, anything else replaces."""
    if not isinstance(patch, dict):
        return json_copy(patch)
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


def json_patch(target: Any, operations: Any) -> Any:
    """RFC 6902. A failing ``test`` or a bad path answers 422, as the API server does."""
    if not isinstance(operations, list):
        raise ApiError(400, "BadRequest", "json patch body must be a JSON array of operations")
    try:
        return jsonpatch.apply_patch(target, operations)
    except jsonpatch.JsonPatchTestFailed as exc:
        raise Invalid(f"the server rejected our request due to an error in our request: {exc}") from exc
    except jsonpatch.InvalidJsonPatch as exc:
        raise ApiError(400, "BadRequest", f"invalid json patch: {exc}") from exc
    except (jsonpatch.JsonPatchException, jsonpointer.JsonPointerException) as exc:
        raise Invalid(f"the server rejected our request due to an error in our request: {exc}") from exc


def _strip(value: Any, path: tuple[str, ...], kind: str) -> Any:
    """A patch fragment added where nothing existed: directives removed."""
    if isinstance(value, dict):
        return strategic_merge({}, value, path, kind)
    if isinstance(value, list):
        return _merge_list([], value, path, kind)
    return value


def _reorder(items: list[Any], order: list[Any], key: str | None) -> list[Any]:
    def ident(item: Any) -> Any:
        return json.dumps(item.get(key) if key and isinstance(item, dict) else item, sort_keys=True)

    rank = {json.dumps(o.get(key) if key and isinstance(o, dict) else o, sort_keys=True): i for i, o in
            enumerate(order)}
    indexed = list(enumerate(items))
    indexed.sort(key=lambda pair: (rank.get(ident(pair[1]), len(rank) + pair[0]), pair[0]))
    return [item for _, item in indexed]


def _merge_list(original: Any, patch: list[Any], path: tuple[str, ...], kind: str) -> list[Any]:
    orig = list(original) if isinstance(original, list) else []
    if any(isinstance(p, dict) and p.get("$patch") == "replace" for p in patch):
        return [_strip(p, path, kind) for p in patch if not (isinstance(p, dict) and p.get("$patch") == "replace")]
    key = merge_key(path, kind)
    if key is None:
        if is_set_list(path):
            out = list(orig)
            for item in patch:
                if item not in out:
                    out.append(item)
            return out
        return [_strip(p, path, kind) for p in patch]
    result = list(orig)
    for item in patch:
        if not isinstance(item, dict) or key not in item:
            raise ApiError(400, "BadRequest", f"strategic merge patch: items of {'.'.join(path)} need the key {key!r}")
        index = next((i for i, o in enumerate(result) if isinstance(o, dict) and o.get(key) == item[key]), None)
        if item.get("$patch") == "delete":
            if index is not None:
                del result[index]
            continue
        if index is None:
            result.append(_strip(item, path, kind))
        else:
            result[index] = strategic_merge(result[index], item, path, kind)
    return result


def strategic_merge(original: Mapping[str, Any], patch: Mapping[str, Any], path: tuple[str, ...] = (),
                    kind: str = "") -> dict[str, Any]:
    """Strategic merge patch with the directives kubectl sends (``$patch``, ``$retainKeys``,
    ``$setElementOrder/``, ``$deleteFromPrimitiveList/``) and the merge keys of the built-in types."""
    if patch.get("$patch") == "replace":
        return {k: _strip(v, (*path, k), kind) for k, v in patch.items() if k != "$patch"}
    result = dict(original)
    orders: list[tuple[str, list[Any]]] = []
    for key, value in patch.items():
        if key in ("$patch", "$retainKeys"):
            continue
        if key.startswith("$setElementOrder/"):
            orders.append((key.partition("/")[2], list(value or [])))
            continue
        if key.startswith("$deleteFromPrimitiveList/"):
            field = key.partition("/")[2]
            result[field] = [x for x in result.get(field) or [] if x not in (value or [])]
            continue
        sub = (*path, key)
        if value is None:
            result.pop(key, None)
        elif isinstance(value, dict):
            if value.get("$patch") == "delete":
                result.pop(key, None)
            else:
                current = result.get(key)
                result[key] = strategic_merge(current if isinstance(current, dict) else {}, value, sub, kind)
        elif isinstance(value, list):
            result[key] = _merge_list(result.get(key), value, sub, kind)
        else:
            result[key] = value
    retain = patch.get("$retainKeys")
    if isinstance(retain, list):
        result = {k: v for k, v in result.items() if k in retain}
    for field, order in orders:
        if isinstance(result.get(field), list):
            result[field] = _reorder(result[field], order, merge_key((*path, field), kind))
    return result
