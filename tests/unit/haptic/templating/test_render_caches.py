"""Per-render caches must never change a result: verdicts by object identity, slots by value."""

from __future__ import annotations

import copy
from typing import Any

from haptic.templating.context import Endpoint, EndpointsMemo, RenderState, ServerSlots, SlotMemo
from haptic.templating.current_config import parse_current_config
from haptic.templating.notices import object_ref
from haptic.templating.safety import reject_unsafe
from haptic.templating.statuses import ObjectStatus


def _ingress(path: str, rv: str = "7") -> dict[str, Any]:
    return {
        "kind": "Ingress",
        "metadata": {"namespace": "shop", "name": "web", "resourceVersion": rv, "uid": "u-1"},
        "spec": {"rules": [{"host": "shop.example", "http": {"paths": [
            {"path": path, "pathType": "Prefix", "backend": {"service": {"name": "web", "port": {"number": 80}}}}]}}]},
    }


def test_a_proposed_object_with_the_stored_resource_version_is_judged_on_its_content() -> None:
    stored = _ingress("/")
    warnings: list[str] = []
    assert reject_unsafe([stored], "ingress", warnings.append) == [stored]
    # An admission review's object carries the stored resourceVersion and uid, with new content.
    proposed = _ingress("/x y")
    assert reject_unsafe([proposed], "ingress", warnings.append) == []
    assert len(warnings) == 1 and "'shop'/'web'" in warnings[0]
    # The stored object is still safe, and a repeated hostile object still warns every render.
    assert reject_unsafe([stored, proposed], "ingress", warnings.append) == [stored]
    assert len(warnings) == 2


def test_kinds_do_not_share_verdicts() -> None:
    obj = _ingress("/x y")
    assert reject_unsafe([obj], "any", lambda _: None) == [obj]
    assert reject_unsafe([obj], "ingress", lambda _: None) == []
    assert reject_unsafe([obj], "any", lambda _: None) == [obj]


def test_slot_memo_reuses_only_identical_inputs() -> None:
    deployed = parse_current_config("backend b\n    server SRV_1 10.0.0.2:80\n    server SRV_2 10.0.0.1:80\n")
    endpoints = [Endpoint("10.0.0.1", 80), Endpoint("10.0.0.2", 80)]
    first = ServerSlots(deployed)
    slots = first.assign("b", endpoints, 4)
    assert [s.spec for s in slots[:2]] == ["SRV_1 10.0.0.2:80", "SRV_2 10.0.0.1:80"]

    again = ServerSlots(deployed, first.memo)
    assert again.assign("b", list(endpoints), 4) == slots
    assert again.memo["b"][3] is first.memo["b"][3], "unchanged inputs reuse the previous assignment"

    grown = ServerSlots(deployed, first.memo).assign("b", [*endpoints, Endpoint("10.0.0.3", 80)], 4)
    assert [s.spec for s in grown[:3]] == ["SRV_1 10.0.0.2:80", "SRV_2 10.0.0.1:80", "SRV_3 10.0.0.3:80"]

    # A different deployed config (another object, even with equal content) is assigned against afresh.
    redeployed = parse_current_config("backend b\n    server SRV_1 10.0.0.1:80\n    server SRV_2 10.0.0.2:80\n")
    moved = ServerSlots(redeployed, first.memo).assign("b", endpoints, 4)
    assert [s.spec for s in moved[:2]] == ["SRV_1 10.0.0.1:80", "SRV_2 10.0.0.2:80"]
    fewer_slots = ServerSlots(deployed, copy.copy(first.memo)).assign("b", endpoints, 2)
    assert len(fewer_slots) == 2


def test_a_carried_slot_memo_shares_the_last_table_and_keeps_every_answer() -> None:
    entry = (None, (), 10, False, (), 0)
    first = SlotMemo({"a": entry, "b": entry})
    second = SlotMemo()
    second["c"] = (None, (), 4, False, (), 0)
    second.carry(first)
    assert second.base is first.own, "carrying shares the last memo's table, it does not copy it"
    assert second["a"] is entry and second.get("c") is not None and second.get("z", "none") == "none"
    third = SlotMemo()
    newer = (None, (), 20, False, (), 0)
    third["a"] = newer
    third.carry(second)
    # the second memo's own entries joined the shared table: the first and second memos answer as before
    assert third.base is first.own and first.own["c"] == second["c"]
    assert second["a"] is entry and third["a"] is newer and third["c"] == second["c"]
    assert list(third.entries(["a", "b", "z"], None)) == [newer, entry, None]


def test_a_render_reuses_its_sorted_statuses_only_for_the_very_same_declared_dict() -> None:
    web = object_ref({"kind": "Ingress", "metadata": {"namespace": "shop", "name": "web"}})
    assert web is not None
    declared = {web.key: ObjectStatus(web, {"loadBalancer": {}}, "networking.k8s.io/v1")}
    state = RenderState()
    state.declare_statuses(declared)
    assert state.statuses == declared and state.statuses_from is declared
    # statuses declared before: the render's statuses are not that dict alone
    mixed = RenderState()
    mixed.declare_status(("Ingress", "shop", "api"), declared[web.key])
    mixed.declare_statuses(declared)
    assert mixed.statuses_from is None and len(mixed.statuses) == 2


def _service() -> dict[str, Any]:
    return {"metadata": {"name": "web"}, "spec": {"ports": [{"name": "http", "port": 80}]}}


def _slice(*addresses: str) -> dict[str, Any]:
    return {"ports": [{"name": "http", "port": 8080}], "endpoints": [{"addresses": list(addresses)}]}


def test_endpoints_memo_follows_object_identity_and_port() -> None:
    memo = EndpointsMemo()
    service, first = _service(), _slice("10.0.0.2", "10.0.0.1")
    assert memo(service, {"number": 80}, [first]) == [Endpoint("10.0.0.1", 8080), Endpoint("10.0.0.2", 8080)]
    memo.next_render()
    assert memo(service, {"number": 80}, iter([first])) == [Endpoint("10.0.0.1", 8080), Endpoint("10.0.0.2", 8080)]
    assert memo(service, {"number": 81}, [first]) == []
    # A changed EndpointSlice is a new object: recomputed even though it replaces the same slice.
    memo.next_render()
    assert memo(service, {"number": 80}, [_slice("10.0.0.3")]) == [Endpoint("10.0.0.3", 8080)]
    assert memo(service, "http", [first, _slice("10.0.0.3")]) == [
        Endpoint("10.0.0.1", 8080), Endpoint("10.0.0.2", 8080), Endpoint("10.0.0.3", 8080)]


def test_endpoints_memo_keys_each_kind_of_port_reference_apart() -> None:
    # the key is one flat tuple of the reference's kind and parts, then the objects' ids: references that look
    # alike (80, "80", {"number": 80}, {"number": "80"}) must not share an answer
    memo = EndpointsMemo()
    service, first = _service(), _slice("10.0.0.1")
    found = [Endpoint("10.0.0.1", 8080)]
    assert memo(service, {"number": 80}, [first]) == found
    assert memo(service, "80", [first]) == []  # a port name
    assert memo(service, 80, [first]) == found
    assert memo(service, {"number": "80"}, [first]) == []
    assert memo(service, {"name": "http"}, [first]) == found
    assert memo(service, {"name": "80"}, [first]) == []
    kept = memo.answer(service, {"number": 80}, (first,))
    assert memo.answer(service, {"number": 80}, [first]) is kept


def test_a_status_declared_next_to_the_same_statuses_again_is_published() -> None:
    from haptic.templating.engine import RenderInputs
    from haptic.templating.statuses import JsonPairs

    from .helpers import engine_for

    route = {"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute",
             "metadata": {"namespace": "ns", "name": "r"}}
    service = {"apiVersion": "v1", "kind": "Service", "metadata": {"namespace": "ns", "name": "s"}}
    pairs = JsonPairs([[route, {"parents": []}]])
    engine = engine_for("{% do set_statuses(extraContext.pairs) %}"
                        "{% if extraContext.more %}{% do set_status(extraContext.svc, {'x': 1}) %}{% endif %}")

    def statuses(more: bool) -> tuple[object, ...]:
        return engine.render(RenderInputs(extra_context={"pairs": pairs, "svc": service, "more": more})).statuses

    first = statuses(False)
    assert statuses(False) is first, "the very same declared statuses give the last render's tuple"
    more = statuses(True)
    assert [s.ref.kind for s in more] == ["HTTPRoute", "Service"]  # type: ignore[attr-defined]
    assert [s.ref.kind for s in statuses(False)] == ["HTTPRoute"]  # type: ignore[attr-defined]
