"""The shipped ``gateway`` library: alone and combined with the Ingress library, in either order."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from haptic.k8s.store import ResourceStore
from haptic.names import LIBRARIES_ANNOTATION
from haptic.templating.engine import RenderInputs, TemplateEngine, TemplateSet
from haptic.templating.libraries import expand_libraries
from tests.unit.haptic.templating.gateway.test_model import BASE, route


def config(libraries: str) -> dict[str, Any]:
    return {"apiVersion": "haproxy-haptic.org/v1alpha1", "kind": "HAProxyTemplateConfig",
            "metadata": {"name": "c", "annotations": {LIBRARIES_ANNOTATION: libraries}}, "spec": {}}


def engine_of(spec: dict[str, Any]) -> TemplateEngine:
    return TemplateEngine(TemplateSet.from_spec(SimpleNamespace(
        haproxy_config=spec["haproxyConfig"], template_snippets=spec["templateSnippets"],
        maps=spec.get("maps") or {}, files={}, ssl_certificates={})))


def stores(spec: dict[str, Any], objects: list[dict[str, Any]]) -> dict[str, ResourceStore]:
    out = {}
    for name, watched in spec["watchedResources"].items():
        store = ResourceStore(name, watched["indexBy"], watched.get("fieldSelector"))
        for obj in objects:
            plural = obj["kind"].lower() + ("es" if obj["kind"].endswith("s") else "s")
            if obj["apiVersion"] == watched["apiVersion"] and plural == watched["resources"]:
                store.apply(obj)
        out[name] = store
    return out


INGRESS = {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
           "metadata": {"name": "legacy", "namespace": "shop"},
           "spec": {"ingressClassName": "haptic", "rules": [{"host": "legacy.test", "http": {"paths": [
               {"path": "/", "pathType": "Prefix",
                "backend": {"service": {"name": "web", "port": {"number": 80}}}}]}}]}}


@pytest.mark.parametrize("libraries", ["ingress,gateway", "gateway,ingress"])
def test_combined_with_the_ingress_library_in_either_order(libraries: str) -> None:
    spec = expand_libraries(config(libraries))["spec"]
    assert "ingress-select" in spec["templateSnippets"] and "gateway-select" in spec["templateSnippets"]
    result = engine_of(spec).render(RenderInputs(stores=stores(spec, [*BASE, route("web"), INGRESS]),
                                                 extra_context=spec["templatingSettings"]["extraContext"]))
    assert "\nfrontend http\n" in result.config and "\nfrontend gw_8080\n" not in result.config
    # the gateway's 8080 listener is refused: the Ingress library's http frontend binds 8080
    gateway_status = next(s for s in result.statuses if s.ref.kind == "Gateway")
    listener = gateway_status.status["listeners"][0]
    assert {c["type"]: c["reason"] for c in listener["conditions"]}["Accepted"] == "PortUnavailable"
    assert "backend ing_shop_legacy_web_80" in result.config and "backend gw_500" in result.config


def test_alone_it_brings_its_own_skeleton() -> None:
    spec = expand_libraries(config("gateway"))["spec"]
    result = engine_of(spec).render(RenderInputs(stores=stores(spec, [*BASE, route("web")]),
                                                 extra_context=spec["templatingSettings"]["extraContext"]))
    assert "\nfrontend gw_8080\n" in result.config and "\nfrontend http\n" not in result.config
    assert result.aux.maps["gw_8080-prefix.map"] == "shop.test/ 1\n"


def test_routes_the_controller_isolates_are_left_out() -> None:
    spec = expand_libraries(config("gateway"))["spec"]
    inputs = RenderInputs(stores=stores(spec, [*BASE, route("web")]),
                          extra_context=spec["templatingSettings"]["extraContext"],
                          skip=frozenset({("HTTPRoute", "shop", "web")}))
    result = engine_of(spec).render(inputs)
    assert "backend gw_shop_web_80" not in result.config
    assert "backend gw_shop_web_80" in engine_of(spec).render(
        RenderInputs(stores=inputs.stores, extra_context=inputs.extra_context)).config


def _slice(service: str, *addresses: str) -> dict[str, Any]:
    return {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
            "metadata": {"namespace": "shop", "name": f"{service}-x",
                         "labels": {"kubernetes.io/service-name": service}},
            "addressType": "IPv4", "ports": [{"name": "http", "port": 8080}],
            "endpoints": [{"addresses": [a], "conditions": {"ready": True}} for a in addresses]}


def test_each_backend_is_rendered_again_only_when_what_it_reads_changed() -> None:
    spec = expand_libraries(config("gateway"))["spec"]
    api = route("api", {"backendRefs": [{"group": "", "kind": "Service", "name": "api", "port": 80}]},
                hostnames=("api.test",))
    objects = [*BASE, route("web"), api, _slice("web", "10.0.0.1"), _slice("api", "10.0.1.1")]
    inputs = RenderInputs(stores=stores(spec, objects), extra_context=spec["templatingSettings"]["extraContext"])
    engine = engine_of(spec)
    first = engine.render(inputs)
    assert "server SRV_1 10.0.0.1:8080\n" in first.config and "server SRV_1 10.0.1.1:8080\n" in first.config
    engine.render(inputs)
    reused = engine.fragment_cache.hits
    assert reused >= 2  # both backends
    inputs.stores["endpoints"].apply(_slice("web", "10.0.0.2"))
    changed = engine.render(inputs)
    assert "server SRV_1 10.0.0.2:8080\n" in changed.config and "10.0.0.1:8080" not in changed.config
    assert engine.fragment_cache.hits == reused - 1  # the api backend only
    full = engine_of(spec)
    full.fragments = False
    assert changed.config == full.render(inputs).config
    # the Service changes: its backend's server lines are computed again from the new object
    inputs.stores["services"].apply({**BASE[2], "spec": {"ports": [{"name": "other", "port": 80}]}})
    gone = engine.render(inputs)
    assert "10.0.0.2:8080" not in gone.config and "server SRV_1 10.0.1.1:8080\n" in gone.config
    assert gone.config == full.render(inputs).config


def test_a_new_engine_gives_the_sorted_statuses_of_the_last_render_only_while_they_are_the_same() -> None:
    spec = expand_libraries(config("gateway"))["spec"]
    inputs = RenderInputs(stores=stores(spec, [*BASE, route("web")]),
                          extra_context=spec["templatingSettings"]["extraContext"])
    first = engine_of(spec).render(inputs)
    again = engine_of(spec).render(inputs)  # a config change: a new engine over the same objects
    assert again.statuses is first.statuses
    inputs.stores["httproutes"].apply({**route("web"), "metadata": {**route("web")["metadata"], "generation": 4}})
    changed = engine_of(spec).render(inputs)
    assert changed.statuses is not first.statuses and changed.statuses != first.statuses
    web = next(s for s in changed.statuses if s.ref.kind == "HTTPRoute")
    assert web.status["parents"][0]["conditions"][0]["observedGeneration"] == 4
