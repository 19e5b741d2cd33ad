"""``same_call``: a render's pass over the very objects of the last call is answered from it, and only then."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import pytest

from haptic.templating.context import CURRENT_RENDER, RenderState
from haptic.templating.engine import RenderInputs, TemplateEngine
from haptic.templating.list_memo import same_call
from tests.unit.haptic.templating.test_fragments import Library, _ingress


@pytest.fixture
def rendering() -> Iterator[None]:
    token = CURRENT_RENDER.set(RenderState())
    try:
        yield
    finally:
        CURRENT_RENDER.reset(token)


def _counting() -> tuple[list[int], Any]:
    calls: list[int] = []

    def compute(group: Sequence[Any]) -> list[Any]:
        calls.append(len(group))
        return [obj["name"] for obj in group]

    return calls, compute


@pytest.mark.usefixtures("rendering")
def test_the_same_objects_are_answered_from_the_last_call() -> None:
    calls, compute = _counting()
    objects = [{"name": "a"}, {"name": "b"}]
    first = same_call("test:same", objects, 1, compute)
    again = same_call("test:same", list(objects), 1, compute)
    assert again is first and calls == [2]


@pytest.mark.usefixtures("rendering")
def test_equal_but_other_objects_other_order_or_other_arguments_are_computed_again() -> None:
    calls, compute = _counting()
    objects = [{"name": "a"}, {"name": "b"}]
    same_call("test:other", objects, 1, compute)
    assert same_call("test:other", [dict(o) for o in objects], 1, compute) == ["a", "b"]  # equal, not the same
    assert same_call("test:other", objects[::-1], 1, compute) == ["b", "a"]
    same_call("test:other", objects[::-1], 2, compute)
    assert calls == [2, 2, 2, 2]


def test_outside_a_render_nothing_is_kept() -> None:
    calls, compute = _counting()
    objects = [{"name": "a"}]
    same_call("test:outside", objects, None, compute)
    objects[0]["name"] = "b"  # a caller of its own may change its objects
    assert same_call("test:outside", objects, None, compute) == ["b"] and calls == [1, 1]


def test_a_config_change_reports_the_unsafe_ingresses_again() -> None:
    lib = Library(3)
    lib.stores["ingresses"].apply(_ingress(7, "bad host.example"))
    first = lib.render()
    # a new engine over the same objects (a config change): the verdicts come from the last call, and are reported
    engine = TemplateEngine(lib.engine.templates)
    again = engine.render(RenderInputs(stores=lib.stores, extra_context=lib.extra))
    assert [n.reason for n in first.notices] == ["UnsafeInput"] and again.notices == first.notices
    assert any("bad host.example" in w for w in again.warnings) and again.warnings == first.warnings
    assert again.config == first.config


def test_an_unsafe_ingress_that_changes_is_judged_again() -> None:
    lib = Library(2)
    lib.stores["ingresses"].apply(_ingress(5, "bad host.example"))
    assert [n.reason for n in lib.render().notices] == ["UnsafeInput"]
    lib.stores["ingresses"].apply(_ingress(5, "good.example"))
    fixed = lib.render()
    assert fixed.notices == () and "good.example" in fixed.aux.maps["path-prefix.map"]


def test_the_gateway_model_s_statuses_are_taken_as_json_and_a_template_s_are_checked() -> None:
    from haptic.templating.statuses import JsonPairs, set_statuses

    route = {"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute",
             "metadata": {"namespace": "ns", "name": "r"}}
    token = CURRENT_RENDER.set(state := RenderState())
    try:
        set_statuses(JsonPairs([[route, {"parents": []}]]))
        assert [s.status for s in state.statuses.values()] == [{"parents": []}]
        with pytest.raises(Exception, match="not JSON"):
            set_statuses([[dict(route), {"parents": [object()]}]])
    finally:
        CURRENT_RENDER.reset(token)
