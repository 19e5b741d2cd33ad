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


def test_set_statuses_reuses_a_model_s_list_whole_only_while_it_is_the_same_list() -> None:
    from haptic.templating.context import CURRENT_RENDER, RenderState
    from haptic.templating.statuses import JsonPairs, set_statuses

    def declare(pairs: list[list[object]], before: dict[tuple[str, str, str], object] | None = None) -> RenderState:
        state = RenderState()
        state.statuses.update(before or {})
        token = CURRENT_RENDER.set(state)
        try:
            set_statuses(pairs)
        finally:
            CURRENT_RENDER.reset(token)
        return state

    def obj(name: str) -> dict[str, object]:
        return {"apiVersion": "v1", "kind": "Service", "metadata": {"namespace": "a", "name": name}}

    x, y = obj("x"), obj("y")
    pairs = JsonPairs([[x, {"n": 1}], [y, {"n": 2}], [x, {"n": 3}]])
    first = declare(pairs)
    # the last status of a key wins, in the place of its first: as one set_status per pair
    assert [(k[2], s.status) for k, s in first.statuses.items()] == [("x", {"n": 3}), ("y", {"n": 2})]
    again = declare(pairs, {("Z", "", "z"): "earlier"})
    assert next(iter(again.statuses)) == ("Z", "", "z")
    assert [s for k, s in again.statuses.items() if k[0] != "Z"] == list(first.statuses.values())
    # another list (the model computed again), with one status changed: its statuses, not the last list's
    other = declare(JsonPairs([[x, {"n": 1}], [y, {"n": 4}]]))
    assert [s.status for s in other.statuses.values()] == [{"n": 1}, {"n": 4}]
    # a template's list (not JsonPairs) is never reused whole
    plain = [[x, {"n": 5}]]
    assert [s.status for s in declare(plain).statuses.values()] == [{"n": 5}]
