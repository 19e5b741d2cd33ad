"""Template-declared statuses become merge patches that keep unchanged conditions' transition times."""

from __future__ import annotations

from haptic.templating.statuses import status_patch

NOW = "2026-12-01T10:00:00Z"
BEFORE = "2026-11-30T09:00:00Z"


def cond(kind: str, status: str, reason: str, gen: int = 1) -> dict[str, object]:
    return {"type": kind, "status": status, "reason": reason, "message": "m", "observedGeneration": gen}


def test_new_conditions_get_the_write_time() -> None:
    body = status_patch({"conditions": [cond("Accepted", "True", "Accepted")]}, None, NOW)
    assert body == {"status": {"conditions": [{**cond("Accepted", "True", "Accepted"), "lastTransitionTime": NOW}]}}


def test_unchanged_status_needs_no_write() -> None:
    current = {"conditions": [{**cond("Accepted", "True", "Accepted"), "lastTransitionTime": BEFORE}],
               "other": "kept"}
    assert status_patch({"conditions": [cond("Accepted", "True", "Accepted")]}, current, NOW) is None


def test_same_status_keeps_its_transition_time_when_the_reason_changes() -> None:
    current = {"conditions": [{**cond("Accepted", "False", "NoMatchingParent"), "lastTransitionTime": BEFORE}]}
    body = status_patch({"conditions": [cond("Accepted", "False", "NotAllowedByListeners")]}, current, NOW)
    assert body is not None
    assert body["status"]["conditions"][0]["lastTransitionTime"] == BEFORE
    flipped = status_patch({"conditions": [cond("Accepted", "True", "Accepted")]}, current, NOW)
    assert flipped is not None and flipped["status"]["conditions"][0]["lastTransitionTime"] == NOW


def test_nested_lists_are_matched_by_identity_not_position() -> None:
    ref_a, ref_b = {"name": "a", "kind": "Gateway"}, {"name": "b", "kind": "Gateway"}
    current = {"parents": [
        {"parentRef": ref_b, "controllerName": "x/y",
         "conditions": [{**cond("Accepted", "True", "Accepted"), "lastTransitionTime": BEFORE}]}]}
    desired = {"parents": [
        {"parentRef": ref_a, "controllerName": "x/y", "conditions": [cond("Accepted", "True", "Accepted")]},
        {"parentRef": ref_b, "controllerName": "x/y", "conditions": [cond("Accepted", "True", "Accepted")]}]}
    body = status_patch(desired, current, NOW)
    assert body is not None
    times = [p["conditions"][0]["lastTransitionTime"] for p in body["status"]["parents"]]
    assert times == [NOW, BEFORE]


def test_set_statuses_builds_each_status_once_while_its_objects_are_the_same() -> None:
    import pytest as _pytest

    from haptic.templating.context import CURRENT_RENDER, RenderState
    from haptic.templating.errors import TemplateFailure
    from haptic.templating.statuses import set_statuses

    def declare(pairs: list[list[object]]) -> object:
        state = RenderState()
        token = CURRENT_RENDER.set(state)
        try:
            set_statuses(pairs)
        finally:
            CURRENT_RENDER.reset(token)
        (only,) = state.statuses.values()
        return only

    obj = {"apiVersion": "v1", "kind": "Service", "metadata": {"namespace": "a", "name": "b"}}
    status = {"conditions": [{"type": "Accepted", "status": "True"}]}
    first = declare([[obj, status]])
    again = declare([[obj, status]])
    assert again is first
    other = declare([[obj, {"conditions": []}]])
    assert other is not first and getattr(other, "status", None) == {"conditions": []}
    with _pytest.raises(TemplateFailure, match="not JSON"):
        declare([[obj, {"x": {1, 2}}]])
