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


# Every pass answered by ``same_call``: the same objects with another argument, or another version of one object,
# give a new answer (what the answer depends on is all in the memo's key).

def _ing(name: str, namespace: str = "ns", host: str = "a.test", cls: str | None = "haptic",
         **annotations: str) -> dict[str, Any]:
    spec: dict[str, Any] = {"rules": [{"host": host, "http": {"paths": [
        {"path": "/", "pathType": "Prefix", "backend": {"service": {"name": "svc", "port": {"number": 80}}}}]}}]}
    if cls is not None:
        spec["ingressClassName"] = cls
    marks = {f"haproxy-haptic.org/{k.replace('_', '-')}": v for k, v in annotations.items()}
    return {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
            "metadata": {"namespace": namespace, "name": name, "creationTimestamp": f"2026-01-01T00:00:0{len(name)}Z",
                         "annotations": marks},
            "spec": spec}


@pytest.mark.usefixtures("rendering")
def test_each_memoized_pass_answers_anew_for_another_argument_or_object() -> None:
    from haptic.templating.filters import ingress_class, reject_unsafe_filter, with_field
    from haptic.templating.ingress_helpers import passthrough_routes, regex_routes, route_ownership, weighted_routes
    from haptic.templating.ingress_lines import exact_map_entries, prefix_map_entries

    old, other = _ing("a"), _ing("bb", namespace="other")
    pair = [old, other]
    assert len(route_ownership(pair, [])["conflicts"]) == 1
    assert route_ownership(pair, ["*"])["conflicts"] == []  # the setting changed: a new answer
    assert route_ownership(pair, ["ns", "other"])["conflicts"] == []

    plain = [old]
    assert regex_routes(plain) == [] and weighted_routes(plain) == [] and passthrough_routes(plain) == []
    assert ingress_class(plain, "haptic") == plain and ingress_class(plain, "other") == []
    unclassed = [_ing("a", cls=None)]
    assert ingress_class(unclassed, "haptic") == [] and ingress_class(unclassed, "haptic", True) == unclassed
    assert with_field(plain, "spec.rules") == plain and with_field(plain, "spec.tls") == []
    assert reject_unsafe_filter(plain) == plain

    # another version of the same Ingress (store objects are replaced on change): new answers
    regex = [_ing("a", path_regex="true")]
    regex[0]["spec"]["rules"][0]["http"]["paths"][0]["pathType"] = "ImplementationSpecific"
    assert [r["type"] for r in regex_routes(regex)] == ["Regex"]
    assert [w["weight"] for w in weighted_routes([_ing("a", canary_service="c", canary_weight="5")])] == [5]
    assert [p["host"] for p in passthrough_routes([_ing("a", ssl_passthrough="true")])] == ["a.test"]
    tls = [{**old, "spec": {**old["spec"], "tls": [{"hosts": ["a.test"]}]}}]
    assert with_field(tls, "spec.tls") == tls
    assert reject_unsafe_filter([_ing("a", host="bad host")]) == []

    routes = [{"type": "Exact", "key": "a.test/x", "host": "a.test", "path": "/x", "backend": "b1"}]
    assert exact_map_entries(routes) == [("a.test/x", "b1")] and prefix_map_entries(routes) == []
    moved = [{**routes[0], "type": "Prefix", "backend": "b2"}]
    assert exact_map_entries(moved) == [] and prefix_map_entries(moved) == [("a.test/x/", "b2")]


def test_a_config_change_of_the_class_or_the_shared_namespaces_renders_anew() -> None:
    lib = Library(2)
    lib.stores["ingresses"].apply(_ingress(10, "app0.example"))  # ns1 claims ns0's host: a conflict
    first = lib.render()
    assert [n.reason for n in first.notices] == ["HostConflict"] and "ing_ns0_app0_svc0_80" in first.config

    def config_change(**extra: Any) -> Any:
        engine = TemplateEngine(lib.engine.templates)
        engine.verify_fragments = True
        return engine.render(RenderInputs(stores=lib.stores, extra_context={**lib.extra, **extra}))

    shared = config_change(sharedHostNamespaces=["*"])
    assert shared.notices == () and "ing_ns1_app10_svc10_80" in shared.config
    other = config_change(ingressClass="other")
    assert "ing_ns0_app0_svc0_80" not in other.config and other.notices == ()
    assert config_change().config == first.config


def test_a_new_engine_takes_the_last_engine_s_slots_and_endpoints_only_where_their_inputs_hold(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from haptic.templating import context as context_mod
    from haptic.templating import engine as engine_mod
    from tests.unit.haptic.templating.test_fragments import _slice

    lib = Library(2)
    first = lib.render()
    assert first.config.count("server SRV_") == 20  # 2 backends of 10 slots
    resolved: list[str] = []
    resolve = context_mod.service_endpoints

    def counting(service: Any, port_ref: Any, slices: Any) -> Any:
        resolved.append(service["metadata"]["name"])
        return resolve(service, port_ref, slices)

    monkeypatch.setattr(context_mod, "service_endpoints", counting)

    def config_change(**extra: Any) -> Any:
        inputs = RenderInputs(stores=lib.stores, extra_context={**lib.extra, **extra})
        carried = TemplateEngine(lib.engine.templates).render(inputs)
        with monkeypatch.context() as without:  # the same render by an engine that was handed nothing
            without.setattr(engine_mod, "_CARRIED", engine_mod._Carried())
            alone = TemplateEngine(lib.engine.templates)
            alone.fragments = False
            assert alone.render(inputs).config == carried.config
        return carried

    resolved.clear()
    assert config_change(serverSlots=4).config.count("server SRV_") == 8  # another step: assigned anew
    assert resolved.count("svc0") == 1  # the carried engine resolved none: only the one handed nothing did
    lib.stores["endpoints"].apply(_slice(0, 3))  # another EndpointSlice: its endpoints found anew
    resolved.clear()
    grown = config_change()
    assert "SRV_3 10.0.0.3:8080" in grown.config and grown.config.count("server SRV_") == 20
    assert resolved.count("svc0") == 2 and resolved.count("svc1") == 1  # svc0 anew in both; svc1 carried


@pytest.mark.parametrize("blank", ["", " ", "\n\t \r\n", "\x1c\u3000"])
def test_a_blank_deployed_config_is_none_as_strip_said(blank: str) -> None:
    from haptic.templating.current_config import coerce_current_config

    assert not blank.strip() and coerce_current_config(blank) is None


def test_a_memoized_answer_a_template_sets_and_appends_to_is_never_grown_in_place() -> None:
    from types import SimpleNamespace

    from haptic.k8s.store import ResourceStore
    from haptic.templating.engine import TemplateSet

    template = ('{% set ings = resources.ingresses.list() | with_field("spec.tls") %}{% do shared.set("x", ings) %}'
                '{% do shared.append("x", 1) %}{{ shared.get("x") | length }}')
    spec = SimpleNamespace(haproxy_config={"template": template}, template_snippets={}, maps={}, files={},
                           ssl_certificates={})
    store = ResourceStore("ingresses", ["metadata.namespace", "metadata.name"], None, [])
    store.apply({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": {"namespace": "a", "name": "b"},
                 "spec": {"tls": [{}]}})
    engine = TemplateEngine(TemplateSet.from_spec(spec))
    engine.fragments = False
    assert [engine.render(RenderInputs(stores={"ingresses": store})).config for _ in range(3)] == ["2", "2", "2"]


@pytest.mark.usefixtures("rendering")
def test_a_few_calls_per_name_and_a_bounded_number_of_names_are_kept() -> None:
    from haptic.templating import list_memo

    calls, compute = _counting()
    first, second = [{"name": "a"}], [{"name": "b"}]
    for _ in range(3):  # two lists in turn: neither evicts the other
        same_call("test:two", first, None, compute)
        same_call("test:two", second, None, compute)
    assert calls == [1, 1]
    for i in range(list_memo._NAMES + 10):
        same_call(f"test:name{i}", first, None, compute)
    assert len(list_memo._LAST_CALLS) == list_memo._NAMES
    for i in range(list_memo._CALLS + 3):
        same_call("test:many", [{"name": str(i)}], None, compute)
    assert len(list_memo._LAST_CALLS["test:many"]) == list_memo._CALLS


@pytest.mark.usefixtures("rendering")
def test_the_very_list_of_a_call_is_answered_without_comparing_its_items(monkeypatch: pytest.MonkeyPatch) -> None:
    """A store's list (``StoreView.list`` hands out the same one while the store is unchanged) or a memo's answer
    passed on: no copy and no comparison of 10,000 items; another list of the same objects still compares."""
    import haptic.templating.list_memo as list_memo

    calls, compute = _counting()
    objects = [{"name": f"n{i}"} for i in range(50)]
    first = same_call("test:very", objects, None, compute)
    compared: list[int] = []
    real = list_memo.same_items
    monkeypatch.setattr(list_memo, "same_items", lambda a, b: compared.append(len(a)) or real(a, b))
    assert same_call("test:very", objects, None, compute) is first and compared == []
    assert same_call("test:very", list(objects), None, compute) is first and compared == [50]
    assert same_call("test:very", objects, "other", compute) is not first and calls == [50, 50]


def test_a_store_view_lists_the_same_list_while_the_store_is_unchanged() -> None:
    from haptic.k8s.store import ResourceStore
    from haptic.templating.context import StoreView

    store = ResourceStore("things", ["metadata.namespace", "metadata.name"])
    store.apply({"apiVersion": "v1", "kind": "Thing", "metadata": {"namespace": "ns", "name": "a"}})
    view = StoreView(store)
    first = view.list()
    assert view.list() is first and StoreView(store).list() is first
    store.apply({"apiVersion": "v1", "kind": "Thing", "metadata": {"namespace": "ns", "name": "b"}})
    assert [o["metadata"]["name"] for o in view.list()] == ["a", "b"] and len(first) == 1


@pytest.mark.usefixtures("rendering")
def test_a_list_grown_since_the_last_call_is_not_taken_for_it() -> None:
    """``shared.append`` grows its list in place: the same object with more items is other items."""
    calls, compute = _counting()
    grown = [{"name": "a"}]
    first = same_call("test:grown", grown, None, compute)
    grown.append({"name": "b"})
    assert same_call("test:grown", grown, None, compute) == ["a", "b"] != first and calls == [1, 2]
