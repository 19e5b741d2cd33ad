"""Statuses that templates declare for watched objects, and how they become status patches.

A template calls ``set_status(obj, status)`` (e.g. the ``gateway`` library for GatewayClasses,
Gateways and HTTPRoutes): the render result lists one ``ObjectStatus`` per object (the last call
wins). The controller's status applier writes them once the config they describe is deployed,
through ``status_patch``: the fields the template gives replace the object's (the others stay), and
every condition keeps its ``lastTransitionTime`` while its ``status`` stays the same, so that an
unchanged status is never written again. Pure data and functions: no I/O, no controller imports.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from haptic.core.frozen import frozen_instance
from haptic.templating import fragments
from haptic.templating.context import IdentityMemo, current_render
from haptic.templating.errors import TemplateFailure
from haptic.templating.notices import ObjectRef, object_ref

# Keys that identify an item of a status list across writes (Gateway listeners, route parents, conditions).
_ITEM_KEYS = ("type", "name", "parentRef")


@dataclass(frozen=True)
class ObjectStatus:
    """The status a render wants one object to have (``status`` holds JSON values only)."""

    ref: ObjectRef
    status: Mapping[str, Any]
    #: the object's API group/version and plural resource name, to address the write
    api_version: str = ""

    def __lt__(self, other: ObjectStatus) -> bool:
        return self.ref < other.ref


def _plain(value: Any, where: str) -> Any:
    try:
        return json.loads(json.dumps(value))
    except (TypeError, ValueError) as exc:
        raise TemplateFailure(f"set_status: {where} is not JSON: {exc}") from None


def set_status(obj: Any, status: Any) -> str:
    """Declares the status ``obj`` (a watched Kubernetes object) must have; renders nothing."""
    ref = object_ref(obj)
    if ref is None or not isinstance(obj, Mapping) or not obj.get("apiVersion"):
        raise TemplateFailure("set_status: the object must be a Kubernetes object with apiVersion and kind")
    if not isinstance(status, Mapping):
        raise TemplateFailure("set_status: the status must be a mapping")
    fragments.uncacheable()  # statuses are written straight into the render state
    state = current_render()
    state.declare_status(ref.key, ObjectStatus(ref, _plain(status, str(ref)), str(obj.get("apiVersion"))))
    return ""


class JsonPairs(list[Any]):
    """``[object, status]`` pairs that Python code built from JSON values only (the gateway library's model):
    ``set_statuses`` takes their statuses as they are, without encoding each one to check it is JSON (a startup
    with 10,000 HTTPRoutes encoded 10,000 statuses for nothing). Templates cannot build one."""


#: the ``ObjectStatus`` of each (object, status) pair of a template's list ``set_statuses`` was given, by the
#: identity of both (a template may hand on the same pairs render after render). Checked and built once.
_DECLARED: IdentityMemo[ObjectStatus] = IdentityMemo()
#: every ``ObjectStatus`` of a ``JsonPairs`` by its key, by the identity of the list: the model's answer is the same
#: list while nothing it reads changed (a config change, an EndpointSlice change), whose statuses are then
#: declared at C speed instead of one memo lookup per object. Python built the list and no one changes it.
_DECLARED_ALL: IdentityMemo[dict[tuple[str, str, str], ObjectStatus]] = IdentityMemo()


def set_statuses(pairs: Any) -> str:
    """``set_status`` for many objects at once: ``pairs`` is a list of ``[object, status]`` (what the
    ``gateway`` library's model returns). One call instead of thousands keeps large renders fast."""
    if not isinstance(pairs, list | tuple):
        raise TemplateFailure("set_statuses: expects a list of [object, status] pairs")
    fragments.uncacheable()  # statuses are written straight into the render state
    state = current_render()
    checked = type(pairs) is JsonPairs
    declared = _DECLARED_ALL.get(pairs) if checked else None
    if declared is None:
        declared = _declared(pairs, checked)
        if checked:
            _DECLARED_ALL.put(declared, pairs)
    state.declare_statuses(declared)
    return ""


def _declared(pairs: list[Any] | tuple[Any, ...], checked: bool) -> dict[tuple[str, str, str], ObjectStatus]:
    """The ``ObjectStatus`` of each pair by its key (the last of a key wins); ``checked``: statuses known JSON."""
    declared: dict[tuple[str, str, str], ObjectStatus] = {}
    for pair in pairs:
        if not isinstance(pair, list | tuple) or len(pair) != 2:
            raise TemplateFailure("set_statuses: expects a list of [object, status] pairs")
        obj, status = pair
        # a model's pairs are new objects whenever its list is (reused whole, above): no memo per pair for them
        hit = None if checked else _DECLARED.get(obj, status)
        if hit is not None:
            declared[hit.ref.key] = hit
            continue
        ref = object_ref(obj)
        if ref is None or not isinstance(obj, Mapping) or not obj.get("apiVersion") or not isinstance(status, dict):
            raise TemplateFailure("set_statuses: each pair needs a Kubernetes object and a status mapping")
        if checked:
            declared[ref.key] = _object_status(ref, status, str(obj.get("apiVersion")))
            continue
        try:
            json.dumps(status)
        except (TypeError, ValueError) as exc:
            raise TemplateFailure(f"set_statuses: the status of {ref} is not JSON: {exc}") from None
        declared[ref.key] = _DECLARED.put(_object_status(ref, status, str(obj.get("apiVersion"))), obj, status)
    return declared


def _object_status(ref: ObjectRef, status: Mapping[str, Any], api_version: str) -> ObjectStatus:
    """``ObjectStatus(ref, status, api_version)`` without the frozen dataclass's per-field ``object.__setattr__``
    (a startup declares thousands)."""
    return frozen_instance(ObjectStatus, ref=ref, status=status, api_version=api_version)


def _item_key(item: Any, index: int) -> Any:
    if isinstance(item, Mapping):
        for key in _ITEM_KEYS:
            if key in item:
                return (key, json.dumps(item[key], sort_keys=True))
    return ("#", index)


def _with_times(desired: Any, current: Any, now: str) -> Any:
    if desired == current:
        # Equal, so any condition inside already has its time (desired ones carry none). The common
        # case: an Ingress's address list, one entry per HAProxy pod, unchanged at every deployment.
        # Returned as is: status_patch copies what it hands out.
        return desired
    if isinstance(desired, Mapping):
        cur = current if isinstance(current, Mapping) else {}
        out = {k: _with_times(v, cur.get(k), now) for k, v in desired.items()}
        if "type" in out and "status" in out and "reason" in out:  # a condition
            same = cur.get("status") == out["status"] and isinstance(cur.get("lastTransitionTime"), str)
            out.setdefault("lastTransitionTime", cur["lastTransitionTime"] if same else now)
        return out
    if isinstance(desired, list):
        previous = {_item_key(item, i): item for i, item in enumerate(current)} if isinstance(current, list) else {}
        return [_with_times(item, previous.get(_item_key(item, i)), now) for i, item in enumerate(desired)]
    return copy.deepcopy(desired)


def status_patch(desired: Mapping[str, Any], current_status: Any, now: str) -> dict[str, Any] | None:
    """The merge patch body (``{"status": ...}``) that gives the object ``desired``, or None when it already
    has it. ``now``: the RFC 3339 time stamped on conditions that change status."""
    current = current_status if isinstance(current_status, Mapping) else {}
    wanted = _with_times(desired, current, now)
    if all(current.get(k) == v for k, v in wanted.items()):
        return None
    return {"status": copy.deepcopy(wanted)}
