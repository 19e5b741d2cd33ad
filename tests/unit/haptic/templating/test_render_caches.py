"""Per-render caches must never change a result: verdicts by object identity, slots by value."""

from __future__ import annotations

import copy
from typing import Any

from haptic.templating.context import Endpoint, EndpointsMemo, ServerSlots
from haptic.templating.current_config import parse_current_config
from haptic.templating.safety import reject_unsafe


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
