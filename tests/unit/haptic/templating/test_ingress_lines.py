"""The Ingress library's per-Ingress lines computed in Python (haptic/templating/ingress_lines.py) render what the
library's Jinja statements rendered before them, byte for byte, whatever the Ingresses use.

The library as it was (main e6e6caf: backends, directives and map entries written as Jinja statements) is kept in
``data/ingress_library_e6e6caf.yaml``; both are rendered over the same stores, through changes, with fragments.
"""

from __future__ import annotations

import base64
import copy
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import yaml

from haptic.k8s.store import ResourceStore
from haptic.templating import ingress_lines
from haptic.templating.engine import RenderInputs, RenderResult, TemplateEngine, TemplateSet
from haptic.templating.libraries import load_library, merge_fragment
from tests.unit.haptic.templating.dialects import test_nginx_library
from tests.unit.haptic.templating.dialects.library_render import HASH, ingress, opaque_secret, service

BEFORE = yaml.safe_load((Path(__file__).parent / "data" / "ingress_library_e6e6caf.yaml").read_text())
# What is compared is the backends, directives and map entries; the frontend's routing rules changed since
# (fewer variables per request) and are the library's own on both sides.
BEFORE["templateSnippets"]["frontend-routing"] = load_library("ingress")["templateSnippets"]["frontend-routing"]
A = "haproxy-haptic.org/"


def spec_of(names: list[str], ingress_library: dict[str, Any]) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    for name in names:
        fragment = copy.deepcopy(ingress_library) if name == "ingress" else load_library(name)
        fragment.pop("extends", None)
        spec = merge_fragment(spec, fragment)
    return spec


def engine_of(spec: dict[str, Any]) -> TemplateEngine:
    return TemplateEngine(TemplateSet.from_spec(SimpleNamespace(
        haproxy_config=spec["haproxyConfig"], template_snippets=spec["templateSnippets"], maps=spec.get("maps") or {},
        files={}, ssl_certificates={})))


def tls_secret(name: str, namespace: str = "ns") -> dict[str, Any]:
    data = {"tls.crt": "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----",
            "tls.key": "-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----"}
    return {"kind": "Secret", "type": "kubernetes.io/tls", "metadata": {"namespace": namespace, "name": name},
            "data": {k: base64.b64encode(v.encode()).decode() for k, v in data.items()}}


def haptic_ingress(name: str, annotations: dict[str, str] | None = None, **kw: Any) -> dict[str, Any]:
    kw.setdefault("cls", "haptic")
    kw.setdefault("host", f"{name}.example.test")
    return ingress(name, {A + k: v for k, v in (annotations or {}).items()}, **kw)


def every_feature() -> list[dict[str, Any]]:
    """Ingresses using every annotation and spec feature of the Ingress library, with their Services."""
    multi = haptic_ingress("multi", created="2026-01-01T00:00:01Z")
    multi["spec"]["rules"].append({"host": "multi.example.test", "http": {"paths": [
        {"path": "/exact", "pathType": "Exact", "backend": {"service": {"name": "web2", "port": {"number": 80}}}},
        {"path": "/exact", "pathType": "Exact", "backend": {"service": {"name": "web", "port": {"number": 80}}}},
        {"path": "/dir/", "pathType": "Prefix", "backend": {"service": {"name": "web2", "port": {"number": 80}}}},
        {"path": "/named", "pathType": "Prefix", "backend": {"service": {"name": "named", "port": {"name": "http"}}}},
        {"path": "/impl", "pathType": "ImplementationSpecific",
         "backend": {"service": {"name": "web", "port": {"number": 80}}}},
        {"path": "/res", "backend": {"resource": {"kind": "Bucket", "name": "b"}}}]}})
    multi["spec"]["rules"].append({"http": {"paths": [
        {"path": "/nohost", "pathType": "Prefix", "backend": {"service": {"name": "web", "port": {"number": 80}}}}]}})
    multi["spec"]["defaultBackend"] = {"service": {"name": "web", "port": {"number": 80}}}
    late_default = haptic_ingress("late-default", created="2026-01-01T00:00:02Z")
    late_default["spec"]["defaultBackend"] = {"service": {"name": "web2", "port": {"number": 80}}}
    tls = haptic_ingress("tls", {"ssl-redirect": "true"}, created="2026-01-01T00:00:03Z")
    tls["spec"]["tls"] = [{"hosts": ["tls.example.test"], "secretName": "cert"}, {"hosts": ["x.example.test"]},
                          {"secretName": "missing"}]
    redirected = haptic_ingress("redirected")
    redirected["spec"]["tls"] = [{"hosts": ["redirected.example.test"], "secretName": "cert"}]
    no_redirect = haptic_ingress("no-redirect", {"ssl-redirect": "false"})
    no_redirect["spec"]["tls"] = [{"hosts": ["no-redirect.example.test"], "secretName": "cert"}]
    other_ns = haptic_ingress("thief", host="multi.example.test", created="2026-03-01T00:00:00Z")
    other_ns["metadata"]["namespace"] = "other"
    return [
        multi, late_default, tls, redirected, no_redirect, other_ns,
        haptic_ingress("tuned", {"timeout-server": "7s", "timeout-connect": "2s", "timeout-queue": "3s",
                                 "timeout-tunnel": "1h", "balance": "leastconn",
                                 "allow-list": "10.0.0.0/8, 192.168.1.1",
                                 "request-set-header": "X-A: one; X-B: two", "server-slots": "4"}),
        haptic_ingress("checked", {"health-check-path": "/healthz", "health-check-interval": "3s",
                                   "backend-protocol": "h2c"}),
        haptic_ingress("interval", {"health-check-interval": "9s", "backend-protocol": "https"}),
        haptic_ingress("h2", {"backend-protocol": "h2", "balance": "source"}),
        haptic_ingress("plain-annotated", {"backend-protocol": "http"}),
        haptic_ingress("regex", {"path-regex": "true"}, path="/api/v[0-9]+", path_type="ImplementationSpecific"),
        haptic_ingress("canary", {"canary-service": "web2", "canary-weight": "30"}),
        haptic_ingress("canary-off", {"canary-service": "web2", "canary-weight": "0"}),
        haptic_ingress("passthrough", {"ssl-passthrough": "true"}),
        haptic_ingress("wild", host="*.wild.example.test"),
        haptic_ingress("nosvc", service="absent"),
        haptic_ingress("hostile", {"timeout-server": "1s\n    server evil 1.2.3.4:80"}),
        haptic_ingress("ignored", cls="other"),
        *service("web"), *service("web2"),
        {"kind": "Service", "metadata": {"namespace": "ns", "name": "named"},
         "spec": {"ports": [{"name": "http", "port": 81}]}},
        {"kind": "EndpointSlice", "metadata": {"namespace": "ns", "name": "named-1",
                                               "labels": {"kubernetes.io/service-name": "named"}},
         "ports": [{"name": "http", "port": 9090}],
         "endpoints": [{"addresses": [f"10.2.0.{i}"]} for i in range(1, 13)]},
        tls_secret("cert"), tls_secret("default"),
    ]


def stores_for(spec: dict[str, Any], objects: list[dict[str, Any]]) -> dict[str, ResourceStore]:
    stores = {name: ResourceStore(name, w["indexBy"], w.get("fieldSelector"), spec["watchedResourcesIgnoreFields"])
              for name, w in spec["watchedResources"].items()}
    kinds = {"Ingress": ["ingresses"], "Service": ["services"], "EndpointSlice": ["endpoints"],
             "Secret": ["secrets", "authsecrets"]}
    for obj in objects:
        for name in kinds[obj["kind"]]:
            if name in stores and (name != "secrets" or obj.get("type") == "kubernetes.io/tls") and (
                    name != "authsecrets" or obj.get("type") == "Opaque"):
                stores[name].apply(obj)
    return stores


def same(a: RenderResult, b: RenderResult) -> None:
    assert a.config == b.config
    assert a.aux == b.aux
    assert (a.warnings, a.notices, a.statuses) == (b.warnings, b.notices, b.statuses)


def changes(objects: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    """(apply|remove, object): endpoints beyond the slots, an annotation changed, an Ingress gone, a Service gone."""
    grown = copy.deepcopy(next(o for o in objects if o["kind"] == "EndpointSlice"))
    grown["endpoints"] = [{"addresses": [f"10.1.1.{i}"]} for i in range(1, 15)]
    first = next(o for o in objects if o["kind"] == "Ingress")
    retuned = copy.deepcopy(first)
    retuned["metadata"]["annotations"] = {**retuned["metadata"]["annotations"], A + "timeout-server": "9s",
                                          A + "ssl-redirect": "true"}
    return [("apply", grown), ("apply", retuned), ("remove", first),
            ("remove", next(o for o in objects if o["kind"] == "Service"))]


CASES = {
    "ingress": (["ingress"], every_feature, {"defaultTLSSecret": "ns/default", "serverSlots": 3}),
    "nginx": (["ingress", "annotations", "nginx"], test_nginx_library.everything, {}),
    "haproxytech": (["ingress", "annotations", "haproxytech"], lambda: [
        ingress("web", {"haproxy.org/" + k: v for k, v in {
            "timeout-server": "30s", "load-balance": "leastconn", "check": "true", "check-http": "/healthz",
            "check-interval": "5s", "cookie-persistence": "srv", "ssl-redirect": "true", "server-ssl": "true",
            "server-proto": "h2", "auth-type": "basic-auth", "auth-secret": "users"}.items()}, cls="haproxy"),
        ingress("moved", {"haproxy.org/request-redirect": "new.example:8443"}, host="moved.example.test",
                cls="haproxy"),
        *service("web"), opaque_secret("users", {"admin": HASH})], {}),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_library_renders_as_its_jinja_statements_did(case: str) -> None:
    names, objects_of, extra = CASES[case]
    objects = objects_of()
    specs = spec_of(names, load_library("ingress")), spec_of(names, BEFORE)
    assert specs[0]["templateSnippets"]["ingress-backends"] != specs[1]["templateSnippets"]["ingress-backends"]
    engines = [engine_of(spec) for spec in specs]
    for engine in engines:
        engine.verify_fragments = True  # and each equal to its own render without fragments
    stores = stores_for(specs[0], objects)
    context = {**specs[0]["templatingSettings"]["extraContext"], **extra}
    configs = set()
    for change in [None, *changes(objects)]:
        if change is not None:
            verb, obj = change
            for store in stores.values():
                getattr(store, verb)(obj)
        inputs = RenderInputs(stores=stores, extra_context=context)
        ours, before = (engine.render(inputs) for engine in engines)
        same(ours, before)
        configs.add(ours.config)
    assert len(configs) >= 3  # the changes changed the config


def test_bench_sized_cluster_renders_as_before() -> None:
    specs = spec_of(["ingress"], load_library("ingress")), spec_of(["ingress"], BEFORE)
    objects: list[dict[str, Any]] = []
    for i in range(60):
        annotations = [{}, {"timeout-server": "5s"}, {"backend-protocol": "h2"}][i % 3]
        objects += [haptic_ingress(f"app{i}", annotations, path=f"/p{i}", service=f"svc{i % 7}",
                                   created=f"2026-01-01T00:00:{i:02d}Z")]
    for j in range(7):
        objects += service(f"svc{j}")
    stores = stores_for(specs[0], objects)
    inputs = RenderInputs(stores=stores, extra_context=specs[0]["templatingSettings"]["extraContext"])
    ours, before = (engine_of(spec).render(inputs) for spec in specs)
    same(ours, before)
    assert ours.config.count("\nbackend ing_") == 60


def test_backend_directives_follow_the_annotations_in_the_documented_order() -> None:
    a = {A + "balance": "leastconn", A + "timeout-tunnel": "1h", A + "timeout-server": "5s",
         A + "health-check-path": "/hz", A + "allow-list": "10.0.0.1, 10.1.0.0/16",
         A + "request-set-header": "X-A: one"}
    assert ingress_lines.backend_directives(a, redirect=True) == [
        "balance leastconn", "timeout server 5s", "timeout tunnel 1h", "option httpchk GET /hz",
        "http-request deny deny_status 403 unless { src 10.0.0.1/32 10.1.0.0/16 }",
        'http-request set-header X-A "one"', ingress_lines.REDIRECT]
    assert ingress_lines.backend_directives({}, redirect=False) == ["balance roundrobin"]


def test_server_options_of_protocols_and_health_checks() -> None:
    assert ingress_lines.server_options({}) == ""
    assert ingress_lines.server_options({A + "backend-protocol": "h2"}) == " ssl verify none alpn h2"
    assert ingress_lines.server_options({A + "health-check-interval": "2s"}) == " check inter 2s"
    assert ingress_lines.server_options({A + "backend-protocol": "h2c", A + "health-check-path": "/"}) == \
        " proto h2 check"
    assert ingress_lines.server_options({A + "backend-protocol": "gopher"}) == ""


def test_map_entries_take_each_key_once_and_the_longest_prefix_first() -> None:
    routes = [
        {"type": "Exact", "key": "a/x", "host": "a", "path": "/x", "backend": "one"},
        {"type": "Exact", "key": "a/x", "host": "a", "path": "/x", "backend": "two"},
        {"type": "Prefix", "key": "a/", "host": "a", "path": "/", "backend": "root"},
        {"type": "Prefix", "key": "a/deep/", "host": "a", "path": "/deep/", "backend": "deep"},
        {"type": "ImplementationSpecific", "key": "a/deep", "host": "a", "path": "/deep", "backend": "other"},
        {"type": "Regex", "key": "a/r", "host": "a", "path": "/r", "backend": "regex"},
    ]
    assert ingress_lines.exact_map_entries(routes) == [("a/x", "one")]
    assert ingress_lines.prefix_map_entries(routes) == [("a/deep/", "deep"), ("a/", "root")]


GATEWAY_BEFORE = yaml.safe_load((Path(__file__).parent / "data" / "gateway_library_e6e6caf.yaml").read_text())


@pytest.mark.parametrize("names", [["gateway"], ["ingress", "gateway"]])
def test_the_gateway_library_renders_as_its_jinja_statements_did(names: list[str]) -> None:
    from tests.unit.haptic.templating.gateway.test_library import stores as gateway_stores
    from tests.unit.haptic.templating.gateway.test_model import BASE, backend, gateway, grpc_route, route

    def spec(gateway_library: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name in names:
            fragment = copy.deepcopy(gateway_library) if name == "gateway" else load_library(name)
            if name == "gateway" and len(names) > 1:
                fragment.pop("haproxyConfig")
            fragment.pop("haproxyConfigIsFallback", None)
            out = merge_fragment(out, fragment)
        return out

    slices = [{"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
               "metadata": {"namespace": "shop", "name": f"{svc}-1", "labels": {"kubernetes.io/service-name": svc}},
               "ports": [{"name": "http", "port": 8080}],
               "endpoints": [{"addresses": [f"10.3.{k}.{i}"]} for i in range(1, count + 1)]}
              for k, (svc, count) in enumerate((("web", 3), ("api", 12)))]
    # port 9090: the Ingress library's http frontend binds 8080
    listener = {"name": "http", "port": 9090, "protocol": "HTTP", "allowedRoutes": {"namespaces": {"from": "All"}}}
    objects = [*(o for o in BASE if o["kind"] != "Gateway"), gateway(listener), *slices,
               route("shop", {"matches": [{"path": {"type": "PathPrefix", "value": "/cart"}}],
                              "backendRefs": [backend("web", 3), backend("api", 1), backend("gone", 1)]}),
               route("exact", {"matches": [{"path": {"type": "Exact", "value": "/x"},
                                            "headers": [{"name": "X-Tenant", "value": "a"}]}],
                               "backendRefs": [backend("web")]}, hostnames=("*.shop.test",)),
               grpc_route("rpc", {"method": {"service": "shop.Cart", "method": "Add"}})]
    specs = spec(load_library("gateway")), spec(GATEWAY_BEFORE)
    assert specs[0]["templateSnippets"]["backends-gateway"] != specs[1]["templateSnippets"]["backends-gateway"]
    stores = gateway_stores(specs[0], objects)
    inputs = RenderInputs(stores=stores, extra_context=specs[0]["templatingSettings"]["extraContext"])
    ours, before = (engine_of(s).render(inputs) for s in specs)
    same(ours, before)
    assert "proto h2" in ours.config and ours.config.count("    server SRV_") >= 40


def test_an_unchanged_ingress_s_routes_are_the_same_objects_in_the_next_render() -> None:
    spec = spec_of(["ingress"], load_library("ingress"))
    objects = [haptic_ingress("a", {"timeout-server": "5s"}), haptic_ingress("b"), *service("web")]
    stores = stores_for(spec, objects)
    inputs = RenderInputs(stores=stores, extra_context=spec["templatingSettings"]["extraContext"])

    def routes(engine: TemplateEngine) -> dict[str, Any]:
        return {r["backend"]: r for r in engine.render(inputs).context["shared"].get("routes")}

    first = routes(engine_of(spec))
    again = routes(engine_of(spec))  # a new engine (a config change) over the same objects
    assert again.keys() == first.keys() and all(again[k] is first[k] for k in first)
    changed = copy.deepcopy(objects[0])
    changed["spec"]["rules"][0]["http"]["paths"][0]["path"] = "/new"
    stores["ingresses"].apply(changed)
    later = routes(engine_of(spec))
    assert later["ing_ns_a_web_80"]["path"] == "/new" and later["ing_ns_b_web_80"] is first["ing_ns_b_web_80"]
