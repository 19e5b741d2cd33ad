"""The shipped Ingress library rendered end to end with ResourceStores, including hostile fixtures."""

from __future__ import annotations

import base64
import copy
from types import SimpleNamespace
from typing import Any

import pytest

from haptic.k8s.store import ResourceStore
from haptic.names import LIBRARIES_ANNOTATION
from haptic.templating.engine import RenderInputs, RenderResult, TemplateEngine, TemplateSet
from haptic.templating.libraries import (
    LibraryError,
    available_libraries,
    expand_libraries,
    load_library,
    merge_fragment,
)

LIB = load_library("ingress")


@pytest.fixture(scope="module")
def engine() -> TemplateEngine:
    spec = SimpleNamespace(
        haproxy_config=LIB["haproxyConfig"],
        template_snippets=LIB["templateSnippets"],
        maps=LIB["maps"],
        files={},
        ssl_certificates={},
    )
    return TemplateEngine(TemplateSet.from_spec(spec))


def ingress(name: str, host: Any = "app.example.test", path: Any = "/", **extra: Any) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "Ingress",
        "metadata": {"namespace": "ns", "name": name, "annotations": extra.pop("annotations", {})},
        "spec": {
            "ingressClassName": extra.pop("cls", "haptic"),
            "rules": [
                {
                    "host": host,
                    "http": {
                        "paths": [
                            {
                                "path": path,
                                "pathType": extra.pop("path_type", "Prefix"),
                                "backend": {"service": {"name": "web", "port": {"number": 80}}},
                            }
                        ]
                    },
                }
            ],
        },
    }
    obj["spec"].update(extra)
    return obj


SERVICE = {"kind": "Service", "metadata": {"namespace": "ns", "name": "web"}, "spec": {"ports": [{"port": 80}]}}
SLICE = {
    "kind": "EndpointSlice",
    "metadata": {"namespace": "ns", "name": "web-1", "labels": {"kubernetes.io/service-name": "web"}},
    "ports": [{"port": 8080}],
    "endpoints": [{"addresses": ["10.1.0.1"]}, {"addresses": ["10.1.0.2"]}],
}


def render(
    engine: TemplateEngine, *ingresses: dict[str, Any], secrets: Any = (), current: str | None = None, **more: Any
) -> RenderResult:
    stores = {
        name: ResourceStore(name, w["indexBy"], w.get("fieldSelector"), LIB["watchedResourcesIgnoreFields"])
        for name, w in LIB["watchedResources"].items()
    }
    for obj in ingresses:
        stores["ingresses"].apply(obj)
    for obj in secrets:
        stores["secrets"].apply(obj)
    stores["services"].apply(SERVICE)
    stores["endpoints"].apply(SLICE)
    return engine.render(
        RenderInputs(stores=stores, extra_context=LIB["templatingSettings"]["extraContext"], current_config=current,
                     **more)
    )


def test_basic_ingress_routes_and_servers(engine: TemplateEngine) -> None:
    result = render(engine, ingress("shop"))
    assert "backend ing_ns_shop_web_80\n" in result.config
    servers = "    server SRV_1 10.1.0.1:8080\n    server SRV_2 10.1.0.2:8080\n    server SRV_3 127.0.0.1:1 disabled\n"
    assert servers in result.config
    assert result.aux.maps["path-prefix.map"] == "app.example.test/ ing_ns_shop_web_80\n"
    assert result.aux.maps["path-exact.map"] == ""
    assert result.warnings == ()


def test_slots_are_kept_from_the_current_config(engine: TemplateEngine) -> None:
    current = "backend ing_ns_shop_web_80\n    server SRV_7 10.1.0.2:8080\n"
    result = render(engine, ingress("shop"), current=current)
    assert "server SRV_7 10.1.0.2:8080\n" in result.config
    assert "server SRV_1 10.1.0.1:8080\n" in result.config


@pytest.mark.parametrize(
    ("hostile", "needle"),
    [
        (ingress("evil", host="x.test\n    use_backend admin"), "use_backend admin"),
        (ingress("evil", host="x.test #"), "x.test #"),
        (ingress("evil", path="/a b", path_type="Exact"), "/a b"),
        (ingress("evil", path="/a\nglobal", path_type="Exact"), "/a\nglobal"),
        (ingress("evil", annotations={"haproxy-haptic.org/timeout-server": "1s\n    server x 6.6.6.6:1"}), "6.6.6.6"),
        (ingress("evil", annotations={"haproxy-haptic.org/balance": 'roundrobin"'}), 'roundrobin"'),
        (ingress("evil", annotations={"haproxy-haptic.org/request-set-header": "X-A: %[src]"}), "%[src]"),
        (ingress("evil", annotations={"haproxy-haptic.org/allow-list": "0.0.0.0/0 } || {"}), "||"),
    ],
)
def test_hostile_ingress_is_skipped_with_a_warning_through_the_full_render(
    engine: TemplateEngine, hostile: dict[str, Any], needle: str
) -> None:
    result = render(engine, ingress("good", host="good.example.test"), hostile)
    rendered = result.config + "".join(result.aux.maps.values())
    assert needle not in rendered
    assert "ing_ns_evil_" not in rendered
    assert "backend ing_ns_good_web_80" in result.config
    assert len(result.warnings) == 1 and result.warnings[0].startswith("skipping Ingress 'ns'/'evil': ")


def test_hostile_secret_is_skipped_and_no_https_frontend_is_rendered(engine: TemplateEngine) -> None:
    payload = base64.b64encode(b"-----BEGIN CERTIFICATE-----\nfrontend evil\n").decode()
    secret = {
        "kind": "Secret",
        "type": "kubernetes.io/tls",
        "metadata": {"namespace": "ns", "name": "tls"},
        "data": {"tls.crt": payload, "tls.key": payload},
    }
    tls = [{"hosts": ["app.example.test"], "secretName": "tls"}]
    result = render(engine, ingress("shop", tls=tls), secrets=[secret])
    assert "frontend https" not in result.config
    assert dict(result.aux.certificates) == {} and dict(result.aux.crt_lists) == {}
    (notice,) = result.notices
    assert (str(notice.ref), notice.reason, notice.field, notice.excluded) == (
        "Ingress ns/shop", "TLSSecretUnusable", "spec.tls[0].secretName", False)
    assert notice.message == (
        "TLS Secret tls skipped: tls.crt is not a PEM certificate; tls.key is not an unencrypted PEM private key")
    assert result.warnings == (notice.text(),)
    assert "redirect scheme https" not in result.config


def test_other_ingress_classes_are_ignored_silently(engine: TemplateEngine) -> None:
    result = render(engine, ingress("mine"), ingress("theirs", host="b.example.test", cls="nginx"))
    assert "ing_ns_theirs" not in result.config and "ing_ns_mine_web_80" in result.config
    assert result.warnings == ()


def test_render_is_deterministic(engine: TemplateEngine) -> None:
    objs = [ingress(f"i{i}", host=f"h{i}.example.test", path=f"/p{i}") for i in range(20)]
    first, second = render(engine, *objs), render(engine, *reversed(objs))
    assert first.config == second.config and first.aux == second.aux


def test_library_listing_and_unknown_library() -> None:
    assert "ingress" in available_libraries()
    with pytest.raises(LibraryError, match="unknown template library 'nope'"):
        load_library("nope")


def test_expand_libraries_merges_under_the_config() -> None:
    obj = {
        "apiVersion": "haproxy-haptic.org/v1alpha1",
        "kind": "HAProxyTemplateConfig",
        "metadata": {"name": "c", "annotations": {LIBRARIES_ANNOTATION: "ingress"}},
        "spec": {
            "templateSnippets": {"frontend-routing": {"template": "mine"}, "extra": {"template": "x"}},
            "templatingSettings": {"extraContext": {"httpPort": 80}},
            "watchedResourcesIgnoreFields": ["metadata.annotations"],
        },
    }
    original = copy.deepcopy(obj)
    spec = expand_libraries(obj)["spec"]
    assert obj == original, "the input is not modified"
    assert spec["templateSnippets"]["frontend-routing"] == {"template": "mine"}
    assert spec["templateSnippets"]["extra"] == {"template": "x"}
    assert "ingress-backends" in spec["templateSnippets"]
    assert spec["templatingSettings"]["extraContext"]["httpPort"] == 80
    assert spec["templatingSettings"]["extraContext"]["serverSlots"] == 10
    assert spec["watchedResourcesIgnoreFields"] == ["metadata.managedFields", "metadata.annotations"]
    assert spec["haproxyConfig"] == LIB["haproxyConfig"]
    assert expand_libraries({"spec": {"x": 1}}) == {"spec": {"x": 1}}
    assert merge_fragment({"haproxyConfig": {"template": "lib"}}, {"haproxyConfig": {"template": "own"}}) == {
        "haproxyConfig": {"template": "own"}
    }


def _pod(name: str, ip: str, phase: str = "Running", **meta: Any) -> dict[str, Any]:
    return {"kind": "Pod", "metadata": {"namespace": "haptic", "name": name, **meta},
            "status": {"phase": phase, "podIP": ip}}


def _statuses(result: RenderResult) -> dict[str, Any]:
    return {s.ref.name: s.status["loadBalancer"]["ingress"] for s in result.statuses if s.ref.kind == "Ingress"}


def test_ingress_statuses_publish_the_running_pods_and_the_reason_of_those_left_out(engine: TemplateEngine) -> None:
    pods = ResourceStore("haproxy-pods", ["metadata.namespace", "metadata.name"])
    for pod in (_pod("b", "10.0.0.11"), _pod("a", "10.0.0.10"), _pod("pending", "10.0.0.12", "Pending"),
                _pod("going", "10.0.0.13", deletionTimestamp="2026-01-01T00:00:00Z")):
        pods.apply(pod)
    hostile = ingress("evil", host="x.test\n    use_backend admin")
    other_class = ingress("theirs", cls="nginx")
    isolated = ingress("bad", host="bad.example.test")
    result = render(engine, ingress("shop"), hostile, other_class, isolated, haproxy_pods=pods,
                    skip=frozenset({("Ingress", "ns", "bad")}))
    points = [{"ip": "10.0.0.10"}, {"ip": "10.0.0.11"}]
    statuses = _statuses(result)
    assert statuses["shop"] == points
    assert "theirs" not in statuses, "another class's Ingress is left to its controller"
    error = {"port": 8080, "protocol": "TCP", "error": "haproxy-haptic.org/UnsafeInput"}
    assert statuses["evil"] == [{**p, "ports": [error]} for p in points]
    assert statuses["bad"][0]["ports"][0]["error"] == "haproxy-haptic.org/RejectedByHAProxy"
    assert "ing_ns_bad_" not in result.config


def test_ingress_statuses_use_the_publish_address_and_wait_for_one(engine: TemplateEngine) -> None:
    assert _statuses(render(engine, ingress("shop"))) == {}, "no HAProxy pod yet: nothing to publish"
    named = render(engine, ingress("shop"), publish_address="lb.example.test")
    assert _statuses(named) == {"shop": [{"hostname": "lb.example.test"}]}
    assert _statuses(render(engine, ingress("shop"), publish_address="192.0.2.7")) == {"shop": [{"ip": "192.0.2.7"}]}
