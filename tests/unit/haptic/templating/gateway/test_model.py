"""``gateway_model``: attachment, precedence, references and the statuses the spec requires."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from haptic.templating.context import PathResolver, StorageDirs
from haptic.templating.gateway import CONTROLLER_NAME, gateway_model
from tests.unit.haptic.templating.helpers import ListStore

G = "gateway.networking.k8s.io/v1"


def gateway_class(name: str = "haptic", controller: str = CONTROLLER_NAME) -> dict[str, Any]:
    return {"apiVersion": G, "kind": "GatewayClass", "metadata": {"name": name, "generation": 1},
            "spec": {"controllerName": controller}}


def gateway(*listeners: dict[str, Any], name: str = "gw", namespace: str = "infra",
            created: str = "2026-01-01T00:00:00Z", cls: str = "haptic") -> dict[str, Any]:
    return {"apiVersion": G, "kind": "Gateway",
            "metadata": {"name": name, "namespace": namespace, "generation": 2, "creationTimestamp": created},
            "spec": {"gatewayClassName": cls, "listeners": list(listeners) or [
                {"name": "http", "port": 8080, "protocol": "HTTP", "allowedRoutes": {"namespaces": {"from": "All"}}}]}}


def route(name: str, *rules: dict[str, Any], namespace: str = "shop", hostnames: Any = ("shop.test",),
          created: str = "2026-01-02T00:00:00Z", parent: dict[str, Any] | None = None) -> dict[str, Any]:
    ref = {"group": "gateway.networking.k8s.io", "kind": "Gateway", "namespace": "infra", "name": "gw",
           **(parent or {})}
    return {"apiVersion": G, "kind": "HTTPRoute",
            "metadata": {"name": name, "namespace": namespace, "generation": 3, "creationTimestamp": created},
            "spec": {"parentRefs": [ref], "hostnames": list(hostnames),
                     "rules": list(rules) or [{"backendRefs": [backend("web")]}]}}


def backend(name: str, weight: int = 1, **extra: Any) -> dict[str, Any]:
    return {"group": "", "kind": "Service", "name": name, "port": 80, "weight": weight, **extra}


def service(name: str, namespace: str = "shop") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": namespace},
            "spec": {"ports": [{"name": "http", "port": 80}]}}


def model(*objects: dict[str, Any], reserved: dict[int, str] | None = None,
          isolated: tuple[dict[str, Any], ...] = (), addresses: tuple[str, ...] = ()) -> dict[str, Any]:
    plural = {"GatewayClass": "gatewayclasses", "Gateway": "gateways", "HTTPRoute": "httproutes",
              "GRPCRoute": "grpcroutes", "ReferenceGrant": "referencegrants", "Namespace": "namespaces",
              "Service": "services", "Secret": "secrets"}
    stores: dict[str, list[dict[str, Any]]] = {k: [] for k in plural.values()}
    for obj in objects:
        stores[plural[obj["kind"]]].append(copy.deepcopy(obj))
    resources = {name: ListStore(items) for name, items in stores.items()}
    return gateway_model(resources, {}, PathResolver(StorageDirs()), reserved or {8404: "frontend stats"},
                         addresses, isolated=isolated)


def status_of(result: dict[str, Any], kind: str, name: str) -> dict[str, Any]:
    found = [s for obj, s in result["statuses"] if obj["kind"] == kind and obj["metadata"]["name"] == name]
    assert len(found) == 1, f"{kind} {name}: {len(found)} statuses"
    return found[0]


def conditions(status: dict[str, Any]) -> dict[str, tuple[str, str]]:
    return {c["type"]: (c["status"], c["reason"]) for c in status["conditions"]}


BASE = (gateway_class(), gateway(), service("web"), service("api"))


def test_classes_of_other_controllers_are_left_alone() -> None:
    result = model(*BASE, gateway_class("theirs", "example.com/other"), gateway(name="theirs", cls="theirs"))
    assert conditions(status_of(result, "GatewayClass", "haptic")) == {"Accepted": ("True", "Accepted")}
    assert not [o for o, _ in result["statuses"] if o["metadata"]["name"] == "theirs"]


def test_gateway_and_route_statuses_carry_generations_and_attached_routes() -> None:
    result = model(*BASE, route("web"))
    gw = status_of(result, "Gateway", "gw")
    assert conditions(gw) == {"Accepted": ("True", "Accepted"), "Programmed": ("True", "Programmed")}
    assert {c["observedGeneration"] for c in gw["conditions"]} == {2}
    assert gw["listeners"][0]["attachedRoutes"] == 1
    assert gw["listeners"][0]["supportedKinds"] == [{"group": "gateway.networking.k8s.io", "kind": "HTTPRoute"},
                                                    {"group": "gateway.networking.k8s.io", "kind": "GRPCRoute"}]
    parent = status_of(result, "HTTPRoute", "web")["parents"][0]
    assert parent["controllerName"] == CONTROLLER_NAME
    assert conditions(parent) == {"Accepted": ("True", "Accepted"), "ResolvedRefs": ("True", "ResolvedRefs")}
    assert {c["observedGeneration"] for c in parent["conditions"]} == {3}


def test_precedence_exact_regex_prefix_method_headers_query_then_age() -> None:
    r_old = route("old", {"matches": [{"path": {"type": "PathPrefix", "value": "/"},
                                        "queryParams": [{"name": "q", "value": "1"}]}],
                          "backendRefs": [backend("web")]}, created="2026-01-01T00:00:00Z")
    r_new = route("new",
                  {"matches": [{"path": {"type": "PathPrefix", "value": "/"}, "method": "GET"}],
                   "backendRefs": [backend("api")]},
                  {"matches": [{"path": {"type": "PathPrefix", "value": "/"},
                                "headers": [{"name": "X-A", "value": "1"}, {"name": "X-B", "value": "2"}]}],
                   "backendRefs": [backend("api")]},
                  {"matches": [{"path": {"type": "RegularExpression", "value": "/r/[0-9]+"}}],
                   "backendRefs": [backend("api")]},
                  {"matches": [{"path": {"type": "Exact", "value": "/x"}}], "backendRefs": [backend("api")]},
                  {"matches": [{"path": {"type": "PathPrefix", "value": "/long/er"}}], "backendRefs": [backend("api")]},
                  created="2026-01-05T00:00:00Z")
    fe = model(*BASE, r_new, r_old)["frontends"][0]
    acl = [line for line in fe["lines"] if "set-var(txn.gw_match) int(" in line and "-m int gt" in line]
    order = [line.split(" if ")[1] for line in acl]
    assert "path -m reg '^(?:/r/[0-9]+)$'" in order[0]          # regex after Exact (map), before prefixes
    assert "method GET" in order[1]                              # then the method match on /
    assert "X-A" in order[2] and "X-B" in order[2]              # then two headers
    assert "urlp(q)" in order[3]                                 # then a query parameter, older route last
    assert fe["maps"]["gw_8080-exact.map"] == "shop.test/x 1\n"
    # /long/er is longer than /: a better id than every match on /, and first in the map_beg file
    assert fe["maps"]["gw_8080-prefix.map"].splitlines()[0] == "shop.test/long/er/ 3"


def test_identical_matches_go_to_the_oldest_route() -> None:
    older = route("older", {"backendRefs": [backend("web")]}, created="2026-01-01T00:00:00Z")
    newer = route("newer", {"backendRefs": [backend("api")]}, created="2026-01-03T00:00:00Z")
    result = model(*BASE, newer, older)
    fe = result["frontends"][0]
    rule = dict(line.split() for line in fe["maps"]["gw_8080-rules.map"].splitlines())
    match = fe["maps"]["gw_8080-prefix.map"].split()[1]
    backends = dict(line.split() for line in fe["maps"]["gw_8080-backends.map"].splitlines())
    assert backends[rule[match]] == "gw_shop_web_80"


def test_prefix_matching_respects_path_segments() -> None:
    fe = model(*BASE, route("web", {"matches": [{"path": {"type": "PathPrefix", "value": "/api/"}},
                                                {"path": {"type": "PathPrefix", "value": "/v1"},
                                                 "method": "POST"}],
                                    "backendRefs": [backend("web")]}))["frontends"][0]
    assert fe["maps"]["gw_8080-prefix-exact.map"] == "shop.test/api 1\n"
    assert fe["maps"]["gw_8080-prefix.map"] == "shop.test/api/ 1\n"
    assert any("path -m reg '^/v1(/|$)'" in line for line in fe["lines"])


@pytest.mark.parametrize(("allowed", "namespace", "ok"), [
    ({"namespaces": {"from": "Same"}}, "infra", True),
    ({"namespaces": {"from": "Same"}}, "shop", False),
    ({"namespaces": {"from": "Selector", "selector": {"matchLabels": {"team": "shop"}}}}, "shop", True),
    ({"namespaces": {"from": "Selector", "selector": {"matchLabels": {"team": "shop"}}}}, "other", False),
    ({"namespaces": {"from": "All"}, "kinds": [{"kind": "GRPCRoute"}]}, "shop", False),
])
def test_allowed_routes(allowed: dict[str, Any], namespace: str, ok: bool) -> None:
    namespaces = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": n, "labels": {"team": n}}}
                  for n in ("shop", "other", "infra")]
    listener = {"name": "http", "port": 8080, "protocol": "HTTP", "allowedRoutes": allowed}
    result = model(gateway_class(), gateway(listener), service("web", namespace), *namespaces,
                   route("web", namespace=namespace))
    accepted = conditions(status_of(result, "HTTPRoute", "web")["parents"][0])["Accepted"]
    assert accepted == (("True", "Accepted") if ok else ("False", "NotAllowedByListeners"))
    assert status_of(result, "Gateway", "gw")["listeners"][0]["attachedRoutes"] == (1 if ok else 0)


def test_parent_ref_section_and_port_and_hostnames() -> None:
    listeners = [{"name": "a", "port": 8080, "protocol": "HTTP", "hostname": "*.shop.test",
                  "allowedRoutes": {"namespaces": {"from": "All"}}},
                 {"name": "b", "port": 8081, "protocol": "HTTP", "allowedRoutes": {"namespaces": {"from": "All"}}}]
    result = model(gateway_class(), gateway(*listeners), service("web"),
                   route("missing", parent={"sectionName": "c"}),
                   route("port", parent={"port": 8081}),
                   route("nohost", hostnames=["other.test"], parent={"sectionName": "a"}))
    assert conditions(status_of(result, "HTTPRoute", "missing")["parents"][0])["Accepted"] == (
        "False", "NoMatchingParent")
    assert conditions(status_of(result, "HTTPRoute", "port")["parents"][0])["Accepted"] == ("True", "Accepted")
    assert conditions(status_of(result, "HTTPRoute", "nohost")["parents"][0])["Accepted"] == (
        "False", "NoMatchingListenerHostname")
    assert [fe["port"] for fe in result["frontends"]] == [8080, 8081]


def test_cross_namespace_backends_need_a_reference_grant() -> None:
    cross = route("web", {"backendRefs": [backend("db", namespace="data")]})
    denied = model(*BASE, service("db", "data"), cross)
    parent = status_of(denied, "HTTPRoute", "web")["parents"][0]
    assert conditions(parent)["ResolvedRefs"] == ("False", "RefNotPermitted")
    assert "gw_500" in denied["frontends"][0]["maps"]["gw_8080-backends.map"]
    grant = {"apiVersion": "gateway.networking.k8s.io/v1beta1", "kind": "ReferenceGrant",
             "metadata": {"name": "g", "namespace": "data"},
             "spec": {"from": [{"group": "gateway.networking.k8s.io", "kind": "HTTPRoute", "namespace": "shop"}],
                      "to": [{"group": "", "kind": "Service"}]}}
    allowed = model(*BASE, service("db", "data"), cross, grant)
    assert conditions(status_of(allowed, "HTTPRoute", "web")["parents"][0])["ResolvedRefs"] == (
        "True", "ResolvedRefs")
    assert [b["name"] for b in allowed["backends"]] == ["gw_data_db_80"]


@pytest.mark.parametrize(("ref", "reason"), [
    (backend("nope"), "BackendNotFound"),
    (backend("web", port=81), "BackendNotFound"),
    ({"group": "example.com", "kind": "Bucket", "name": "b", "weight": 1}, "InvalidKind"),
])
def test_invalid_backends_answer_500(ref: dict[str, Any], reason: str) -> None:
    result = model(*BASE, route("web", {"backendRefs": [ref]}))
    assert conditions(status_of(result, "HTTPRoute", "web")["parents"][0])["ResolvedRefs"] == ("False", reason)
    assert result["frontends"][0]["maps"]["gw_8080-backends.map"] == "1 gw_500\n"


def test_weights_split_including_invalid_shares() -> None:
    fe = model(*BASE, route("web", {"backendRefs": [backend("web", 3), backend("gone", 1), backend("api", 0)]}))[
        "frontends"][0]
    assert "http-request set-var(txn.gw_pick) rand(4) if { var(txn.gw_rule) -m str 1 }" in fe["lines"]
    assert any(line.startswith("use_backend gw_shop_web_80 if") and "-m int lt 3" in line for line in fe["lines"])
    assert "use_backend gw_500 if { var(txn.gw_rule) -m str 1 }" in fe["lines"]
    assert not any("gw_shop_api_80" in line for line in fe["lines"])


def test_listener_conflicts_and_reserved_ports() -> None:
    first = gateway({"name": "a", "port": 8080, "protocol": "HTTP"}, name="first")
    second = gateway({"name": "a", "port": 8080, "protocol": "HTTP"},
                     {"name": "b", "port": 8404, "protocol": "HTTP"},
                     {"name": "c", "port": 9000, "protocol": "TCP"}, name="second", created="2026-01-02T00:00:00Z")
    result = model(gateway_class(), second, first)
    listeners = {item["name"]: item for item in status_of(result, "Gateway", "second")["listeners"]}
    assert conditions(listeners["a"])["Conflicted"] == ("True", "HostnameConflict")
    assert conditions(listeners["b"])["Accepted"] == ("False", "PortUnavailable")
    assert conditions(listeners["c"])["Accepted"] == ("False", "UnsupportedProtocol")
    assert conditions(status_of(result, "Gateway", "second"))["Accepted"] == ("True", "ListenersNotValid")
    assert conditions(status_of(result, "Gateway", "first"))["Programmed"] == ("True", "Programmed")


def test_unsupported_filters_and_hostile_values_refuse_the_route() -> None:
    mirror = route("mirror", {"filters": [{"type": "RequestMirror", "requestMirror": {"backendRef": backend("web")}}],
                              "backendRefs": [backend("web")]})
    custom = route("custom", {"filters": [{"type": "ExtensionRef", "extensionRef": {
        "group": "example.com", "kind": "Auth", "name": "a"}}], "backendRefs": [backend("web")]})
    hostile = route("hostile", {"filters": [{"type": "RequestHeaderModifier", "requestHeaderModifier": {
        "set": [{"name": "X-A", "value": "a\n    http-request deny"}]}}], "backendRefs": [backend("web")]},
        hostnames=["evil.test"])
    result = model(*BASE, mirror, custom, hostile)
    # Its only rule dropped (HAProxy cannot mirror), the route is not accepted; the spec's reason for filters.
    accepted = status_of(result, "HTTPRoute", "mirror")["parents"][0]["conditions"][0]
    assert (accepted["status"], accepted["reason"]) == ("False", "IncompatibleFilters")
    assert accepted["message"].startswith("Dropped Rule(s) 0: spec.rules[0].filters[0]: RequestMirror")
    for name in ("custom", "hostile"):
        assert conditions(status_of(result, "HTTPRoute", name)["parents"][0])["Accepted"] == (
            "False", "UnsupportedValue")
    assert [e[0]["metadata"]["name"] for e in result["excluded"]] == ["hostile"]
    assert result["excluded"][0][3] == "spec.rules[0].filters[0].requestHeaderModifier.set[0].value"
    assert result["frontends"] == [{"name": "gw_8080", "port": 8080, "tls": False,
                                    "lines": ["default_backend haptic_default"], "maps": {}, "certificates": [],
                                    "crtList": ""}]


def test_a_rule_with_request_mirror_is_dropped_and_the_route_partially_invalid() -> None:
    mirrored = {"matches": [{"path": {"type": "PathPrefix", "value": "/shadow"}}],
                "filters": [{"type": "RequestMirror", "requestMirror": {"backendRef": backend("api")}}],
                "backendRefs": [backend("api")]}
    plain = {"matches": [{"path": {"type": "PathPrefix", "value": "/"}}], "backendRefs": [backend("web")]}
    result = model(*BASE, route("web", mirrored, plain))
    found = conditions(status_of(result, "HTTPRoute", "web")["parents"][0])
    assert found == {"Accepted": ("True", "Accepted"), "ResolvedRefs": ("True", "ResolvedRefs"),
                     "PartiallyInvalid": ("True", "UnsupportedValue")}
    partial = status_of(result, "HTTPRoute", "web")["parents"][0]["conditions"][2]
    assert partial["message"].startswith("Dropped Rule(s) 0: spec.rules[0].filters[0]: RequestMirror")
    assert [b["service"] for b in result["backends"]] == ["web"], "the dropped rule's backend is not rendered"
    assert "/shadow" not in str(result["frontends"])
    assert [(w[0]["metadata"]["name"], w[1], w[3]) for w in result["warnings"]] == [
        ("web", "UnsupportedValue", "spec.rules[0].filters[0]")], "a Warning Event and an admission warning"
    assert "PartiallyInvalid" not in conditions(status_of(model(*BASE, route("ok")), "HTTPRoute", "ok")["parents"][0])


def test_routes_isolation_leaves_out_or_holds_back_are_not_accepted() -> None:
    # The engine's stores hide a route left out and show the last valid version of one held back; the
    # current versions come as ``isolated`` (controller.isolated). set_statuses keeps the last status per object.
    new = route("new", hostnames=["new.test"])
    old = route("changed", hostnames=["changed.test"])
    changed = copy.deepcopy(old)
    changed["metadata"]["generation"] = 4
    result = model(*BASE, old, isolated=(new, changed, service("web")))
    last = {obj["metadata"]["name"]: status for obj, status in result["statuses"] if obj["kind"] == "HTTPRoute"}
    for name, gen, why in (("new", 3, "it is left out"), ("changed", 4, "its last valid version stays deployed")):
        (accepted, resolved) = last[name]["parents"][0]["conditions"]
        assert (accepted["status"], accepted["reason"], accepted["observedGeneration"]) == (
            "False", "UnsupportedValue", gen)
        assert "haproxy -c rejected" in accepted["message"] and why in accepted["message"]
        assert resolved["type"] == "ResolvedRefs"
    assert "changed.test" in str(result["frontends"]) and "new.test" not in str(result["frontends"])
    listener = status_of(result, "Gateway", "gw")["listeners"][0]
    assert listener["attachedRoutes"] == 1, "only the served version counts"


def test_gateway_addresses_are_the_published_ones_typed() -> None:
    status = status_of(model(*BASE, addresses=("10.0.0.10", "lb.example.test", "fd00::1")), "Gateway", "gw")
    assert status["addresses"] == [{"type": "IPAddress", "value": "10.0.0.10"},
                                   {"type": "Hostname", "value": "lb.example.test"},
                                   {"type": "IPAddress", "value": "fd00::1"}]


def test_other_controllers_parent_statuses_are_kept() -> None:
    theirs = {"parentRef": {"name": "elsewhere"}, "controllerName": "example.com/other", "conditions": []}
    obj = route("web")
    obj["status"] = {"parents": [theirs]}
    parents = status_of(model(*BASE, obj), "HTTPRoute", "web")["parents"]
    assert [p["controllerName"] for p in parents] == [CONTROLLER_NAME, "example.com/other"]


def grpc_route(name: str, *matches: dict[str, Any], created: str = "2026-01-02T00:00:00Z") -> dict[str, Any]:
    obj = route(name, {"matches": list(matches), "backendRefs": [backend("api")]}, created=created)
    obj["kind"] = "GRPCRoute"
    return obj


def test_grpc_routes_match_service_and_method_paths_and_use_h2c_backends() -> None:
    result = model(*BASE, grpc_route("rpc", {"method": {"service": "shop.Cart", "method": "Add"}},
                                     {"method": {"service": "shop.Orders"}},
                                     {"method": {"method": "Watch"}, "headers": [{"name": "X-Env", "value": "a"}]},
                                     {"method": {"type": "RegularExpression", "service": "shop\\..*"}}))
    fe = result["frontends"][0]
    assert fe["maps"]["gw_8080-exact.map"] == "shop.test/shop.Cart/Add 1\n"
    assert "shop.test/shop.Orders/ " in fe["maps"]["gw_8080-prefix.map"]
    acl = [line for line in fe["lines"] if "-m int gt" in line]
    assert "path -m reg '^(?:/(?:shop\\..*)/(?:[^/]+))$'" in acl[0]
    assert "path -m reg '^(?:/[^/]+/Watch)$'" in acl[1] and "req.fhdr(X-Env)" in acl[1]
    assert result["backends"] == [{"name": "gw_h2c_shop_api_80", "namespace": "shop", "service": "api", "port": 80,
                                   "h2c": True, "serviceObject": service("api")}]
    parent = status_of(result, "GRPCRoute", "rpc")["parents"][0]
    assert conditions(parent) == {"Accepted": ("True", "Accepted"), "ResolvedRefs": ("True", "ResolvedRefs")}


def test_grpc_names_that_are_not_grpc_names_refuse_the_route() -> None:
    result = model(*BASE, grpc_route("rpc", {"method": {"service": "shop Cart'", "method": "Add"}}))
    assert conditions(status_of(result, "GRPCRoute", "rpc")["parents"][0])["Accepted"] == (
        "False", "UnsupportedValue")
    assert result["excluded"][0][3] == "spec.rules[0].matches[0].method.service"


def test_the_model_is_computed_again_only_when_what_it_reads_changed() -> None:
    from haptic.templating.gateway import model as module

    objects = [*BASE, route("web"), {"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/tls",
                                     "metadata": {"namespace": "infra", "name": "cert"}, "data": {}}]
    plural = {"GatewayClass": "gatewayclasses", "Gateway": "gateways", "HTTPRoute": "httproutes",
              "Service": "services", "Secret": "secrets"}
    stores = {name: ListStore([o for o in objects if plural[o["kind"]] == name]) for name in plural.values()}
    stores.update({name: ListStore([]) for name in ("grpcroutes", "referencegrants", "namespaces")})
    paths = PathResolver(StorageDirs())

    def run(resources: dict[str, Any] = stores, extra: dict[str, Any] | None = None,
            dirs: PathResolver = paths, reserved: dict[int, str] | None = None) -> dict[str, Any]:
        return gateway_model(resources, extra or {}, dirs, reserved or {8404: "frontend stats"}, ("10.0.0.1",))

    first = run()
    assert run() is first  # unchanged inputs: the same answer, nothing recomputed
    assert run(extra={"unrelated": 1}) is first
    changed = []
    for name, obj in (("services", service("web")), ("secrets", {**objects[-1], "data": {"x": "eA=="}}),
                      ("httproutes", route("web")), ("gateways", gateway())):
        others = [o for o in stores[name].list() if o["metadata"]["name"] != obj["metadata"]["name"]]
        changed.append(run({**stores, name: ListStore([*others, copy.deepcopy(obj)])}))
    changed.append(run(extra={"gatewayControllerName": "example.com/other"}))
    changed.append(run(dirs=PathResolver(StorageDirs(maps_dir="/srv/maps"))))
    changed.append(run(reserved={8080: "frontend http"}))
    assert all(answer is not first for answer in changed)
    assert module.model(stores, {}, paths, {8404: "frontend stats"}, ("10.0.0.1",)) == first
    assert changed[-1]["frontends"] != first["frontends"] or changed[-1]["statuses"] != first["statuses"]


def test_a_model_computed_again_keeps_the_dict_of_each_unchanged_backend() -> None:
    stores = {"gatewayclasses": ListStore([gateway_class()]), "gateways": ListStore([gateway()]),
              "services": ListStore([service("web"), service("api")]),
              "httproutes": ListStore([route("web")])}
    stores.update({name: ListStore([]) for name in ("grpcroutes", "referencegrants", "namespaces", "secrets")})

    def backends(resources: dict[str, Any]) -> dict[str, dict[str, Any]]:
        found = gateway_model(resources, {}, PathResolver(StorageDirs()), {8404: "frontend stats"})["backends"]
        return {b["name"]: b for b in found}

    first = backends(stores)
    api = route("api", {"backendRefs": [backend("api")]}, hostnames=("api.test",))
    added = backends({**stores, "httproutes": ListStore([route("web"), api])})
    # a route more: the model is computed again, the web backend's dict (its fragment's key) is the same object
    assert added["gw_shop_web_80"] is first["gw_shop_web_80"] and set(added) == {"gw_shop_web_80", "gw_shop_api_80"}
    web = service("web")
    changed = backends({**stores, "services": ListStore([web, service("api")])})
    # another Service object: another dict, holding it
    assert changed["gw_shop_web_80"] is not first["gw_shop_web_80"]
    assert changed["gw_shop_web_80"]["serviceObject"] is web
    assert {k: v for k, v in changed["gw_shop_web_80"].items() if k != "serviceObject"} == {
        k: v for k, v in first["gw_shop_web_80"].items() if k != "serviceObject"}


def test_routes_of_one_model_asking_other_namespaces_kinds_or_sections_are_each_answered_for_themselves() -> None:
    # one listener selection serves every route asking the same; any difference in what is asked, another one
    listeners = [{"name": "same", "port": 8080, "protocol": "HTTP"},
                 {"name": "all", "port": 8081, "protocol": "HTTP",
                  "allowedRoutes": {"namespaces": {"from": "All"}, "kinds": [{"kind": "HTTPRoute"}]}}]
    parent_same, parent_all = {"sectionName": "same"}, {"sectionName": "all"}
    routes = [route("a", namespace="infra", parent=parent_same), route("b", namespace="shop", parent=parent_same),
              route("c", namespace="shop", parent=parent_all), route("d", namespace="infra", parent=parent_same),
              route("e", namespace="shop", parent={"sectionName": ["unhashable"]})]
    grpc = {"apiVersion": G, "kind": "GRPCRoute", "metadata": {"name": "f", "namespace": "shop", "generation": 1},
            "spec": {"parentRefs": [{"group": "gateway.networking.k8s.io", "kind": "Gateway", "namespace": "infra",
                                     "name": "gw", "sectionName": "all"}],
                     "rules": [{"backendRefs": [backend("web")]}]}}
    result = model(gateway_class(), gateway(*listeners), service("web"), service("web", "infra"), *routes, grpc)
    accepted = {name: conditions(status_of(result, kind, name)["parents"][0])["Accepted"][1]
                for kind, name in [("HTTPRoute", n) for n in "abcde"] + [("GRPCRoute", "f")]}
    assert accepted == {"a": "Accepted", "b": "NotAllowedByListeners", "c": "Accepted", "d": "Accepted",
                        "e": "NoMatchingParent", "f": "NotAllowedByListeners"}
