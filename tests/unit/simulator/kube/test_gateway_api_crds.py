"""The fake API serves the Gateway API CRDs: objects validate against their schemas and CEL rules, and get
the defaults a cluster with the standard-channel bundle gives them."""

from __future__ import annotations

from typing import Any

import pytest

from haptic.k8s.api import ApiError
from simulator.kube import FakeKubeAPI
from simulator.kube.gateway_api import gateway_api_crds, serve_gateway_api_for, wants_gateway_api
from simulator.kube.resources import ResourceType

G = "gateway.networking.k8s.io/v1"


@pytest.fixture
def api() -> FakeKubeAPI:
    fake = FakeKubeAPI()
    crd = fake.types.by_kind("apiextensions.k8s.io/v1", "CustomResourceDefinition")
    assert crd is not None
    for obj in gateway_api_crds().values():
        fake.create(crd, None, obj)
    return fake


def rt(api: FakeKubeAPI, kind: str, version: str = G) -> ResourceType:
    found = api.types.by_kind(version, kind)
    assert found is not None, kind
    return found


def route(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": G, "kind": "HTTPRoute", "metadata": {"name": "r", "namespace": "default"}, "spec": spec}


def test_every_kind_is_served_in_its_standard_versions(api: FakeKubeAPI) -> None:
    for kind in ("GatewayClass", "Gateway", "HTTPRoute", "GRPCRoute"):
        assert rt(api, kind).has_status
    assert rt(api, "HTTPRoute", "gateway.networking.k8s.io/v1beta1")
    assert not rt(api, "ReferenceGrant", "gateway.networking.k8s.io/v1beta1").has_status
    assert not rt(api, "GatewayClass").namespaced


def test_defaults_as_the_bundle_declares_them(api: FakeKubeAPI) -> None:
    created = api.create(rt(api, "HTTPRoute"), "default", route(parentRefs=[{"name": "gw"}],
                                                               rules=[{"backendRefs": [{"name": "web", "port": 80}]}]))
    assert created["spec"]["parentRefs"] == [{"name": "gw", "group": "gateway.networking.k8s.io", "kind": "Gateway"}]
    rule = created["spec"]["rules"][0]
    assert rule["matches"] == [{"path": {"type": "PathPrefix", "value": "/"}}]
    assert rule["backendRefs"][0] == {"name": "web", "port": 80, "group": "", "kind": "Service", "weight": 1}
    gw = api.create(rt(api, "Gateway"), "default", {
        "apiVersion": G, "kind": "Gateway", "metadata": {"name": "gw", "namespace": "default"},
        "spec": {"gatewayClassName": "c", "listeners": [{"name": "http", "port": 80, "protocol": "HTTP"}]}})
    assert gw["spec"]["listeners"][0]["allowedRoutes"] == {"namespaces": {"from": "Same"}}


@pytest.mark.parametrize(("spec", "message"), [
    ({"rules": [{"matches": [{"path": {"type": "Exact", "value": "no-slash"}}]}]}, "must be an absolute path"),
    ({"rules": [{"matches": [{"path": {"type": "PathPrefix", "value": "/a//b"}}]}]}, "must not contain '//'"),
    ({"rules": [{"backendRefs": [{"name": "web"}]}]}, "Must have port for Service reference"),
    ({"rules": [{"backendRefs": [{"name": "web", "port": 80, "weight": -1}]}]}, "should be greater than or equal to 0"),
    ({"rules": [{"matches": [{"method": "BREW"}]}]}, "Unsupported value"),
    ({"rules": [{"filters": [{"type": "RequestHeaderModifier"}]}]},
     "filter.requestHeaderModifier must be specified for RequestHeaderModifier filter.type"),
    ({"hostnames": ["Bad_Host"]}, "spec.hostnames[0]"),
])
def test_invalid_routes_are_refused(api: FakeKubeAPI, spec: dict[str, Any], message: str) -> None:
    with pytest.raises(ApiError) as err:
        api.create(rt(api, "HTTPRoute"), "default", route(**spec))
    assert err.value.code == 422 and message in str(err.value)


def test_listener_rules(api: FakeKubeAPI) -> None:
    def gateway(*listeners: dict[str, Any]) -> dict[str, Any]:
        return {"apiVersion": G, "kind": "Gateway", "metadata": {"name": "gw", "namespace": "default"},
                "spec": {"gatewayClassName": "c", "listeners": list(listeners)}}

    with pytest.raises(ApiError, match="tls must not be specified for protocols"):
        api.create(rt(api, "Gateway"), "default", gateway(
            {"name": "a", "port": 80, "protocol": "HTTP", "tls": {"certificateRefs": [{"name": "x"}]}}))
    with pytest.raises(ApiError, match="port, protocol and hostname must be unique"):
        api.create(rt(api, "Gateway"), "default", gateway({"name": "a", "port": 80, "protocol": "HTTP"},
                                                          {"name": "b", "port": 80, "protocol": "HTTP"}))


def test_controller_name_is_immutable(api: FakeKubeAPI) -> None:
    gc = rt(api, "GatewayClass")
    api.create(gc, None, {"apiVersion": G, "kind": "GatewayClass", "metadata": {"name": "c"},
                          "spec": {"controllerName": "example.com/a"}})
    with pytest.raises(ApiError, match="Value is immutable"):
        api.patch(gc, None, "c", "merge", {"spec": {"controllerName": "example.com/b"}})


def test_simulated_clusters_serve_them_for_configs_that_read_them() -> None:
    gateway = {"metadata": {"annotations": {"haproxy-haptic.org/template-libraries": "ingress, gateway"}}}
    assert wants_gateway_api(gateway)
    assert wants_gateway_api({"spec": {"watchedResources": {"r": {"apiVersion": G}}}})
    assert not wants_gateway_api({"metadata": {"annotations": {"haproxy-haptic.org/template-libraries": "ingress"}}})


def test_serving_them_for_a_config_is_idempotent() -> None:
    fake = FakeKubeAPI()
    config = {"metadata": {"annotations": {"haproxy-haptic.org/template-libraries": "gateway"}}}
    assert serve_gateway_api_for(fake, config)
    assert not serve_gateway_api_for(fake, config)
    assert rt(fake, "GatewayClass").schema is not None, "the CRD's schema replaces the schemaless built-in entry"
    assert not serve_gateway_api_for(FakeKubeAPI(), {"metadata": {}})
