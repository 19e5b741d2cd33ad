"""Validation and immutability of built-in kinds, worded as the API server words them; refusals store nothing."""

from __future__ import annotations

from typing import Any

import pytest

from haptic.k8s.api import Invalid
from simulator.kube import FakeKubeAPI

TEMPLATE = {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "web", "image": "nginx"}]}}


@pytest.fixture
def api() -> FakeKubeAPI:
    return FakeKubeAPI()


def refused(api: FakeKubeAPI, api_version: str, plural: str, body: dict[str, Any], old: bool = False) -> str:
    rt = api.resolve(api_version, plural)
    rv = api.resource_version
    with pytest.raises(Invalid) as info:
        if old:
            api.update(rt, "default", body["metadata"]["name"], body)
        else:
            api.create(rt, "default" if rt.namespaced else None, body)
    assert api.resource_version == rv, "a refused write stores nothing"
    return info.value.message


def test_deployment_selector_is_required_matching_and_immutable(api: FakeKubeAPI) -> None:
    assert refused(api, "apps/v1", "deployments", {"metadata": {"name": "d"}, "spec": {"template": TEMPLATE}}) == \
        'Deployment.apps "d" is invalid: spec.selector: Required value'
    other = {"metadata": {"name": "d"}, "spec": {"selector": {"matchLabels": {"app": "api"}}, "template": TEMPLATE}}
    assert refused(api, "apps/v1", "deployments", other) == (
        'Deployment.apps "d" is invalid: spec.template.metadata.labels: Invalid value: map[string]string{"app":"web"}:'
        " `selector` does not match template `labels`")
    rt = api.resolve("apps/v1", "deployments")
    good = {"metadata": {"name": "d"}, "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": TEMPLATE}}
    api.create(rt, "default", good)
    moved = {"metadata": {"name": "d"}, "spec": {"selector": {"matchLabels": {"app": "web", "v": "2"}},
                                                 "template": {**TEMPLATE, "metadata": {"labels": {"app": "web",
                                                                                                  "v": "2"}}}}}
    assert refused(api, "apps/v1", "deployments", moved, old=True) == (
        'Deployment.apps "d" is invalid: spec.selector: Invalid value: &LabelSelector{MatchLabels:map[string]string'
        "{app: web,v: 2,},MatchExpressions:[]LabelSelectorRequirement{},}: field is immutable")
    bad_pod = {**good, "spec": {**good["spec"], "replicas": -1,
                                "template": {**TEMPLATE, "spec": {"containers": [{"name": "Web"}],
                                                                  "restartPolicy": "Never"}}}}
    assert refused(api, "apps/v1", "deployments", {**bad_pod, "metadata": {"name": "e"}}) == (
        'Deployment.apps "e" is invalid: [spec.replicas: Invalid value: -1: must be greater than or equal to 0, '
        'spec.template.spec.containers[0].name: Invalid value: "Web": a lowercase RFC 1123 label must consist of '
        "lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. "
        "'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?'), "
        "spec.template.spec.containers[0].image: Required value, spec.template.spec.restartPolicy: Unsupported "
        'value: "Never": supported values: "Always"]')


def test_immutable_config_maps_and_secrets(api: FakeKubeAPI) -> None:
    rt = api.resolve("v1", "configmaps")
    api.create(rt, "default", {"metadata": {"name": "c"}, "data": {"a": "1"}, "immutable": True})
    assert refused(api, "v1", "configmaps", {"metadata": {"name": "c"}, "data": {"a": "2"}, "immutable": True},
                   old=True) == 'ConfigMap "c" is invalid: data: Forbidden: field is immutable when `immutable` is set'
    assert refused(api, "v1", "configmaps", {"metadata": {"name": "d"}, "data": {"bad key": "1"}}) == (
        "ConfigMap \"d\" is invalid: data[bad key]: Invalid value: \"bad key\": a valid config key must consist of "
        "alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for "
        "validation is '[-._a-zA-Z0-9]+')")
    secrets = api.resolve("v1", "secrets")
    assert refused(api, "v1", "secrets", {"metadata": {"name": "t"}, "type": "kubernetes.io/tls",
                                          "data": {"tls.crt": "YQ=="}}) == \
        'Secret "t" is invalid: data[tls.key]: Required value'
    api.create(secrets, "default", {"metadata": {"name": "s"}, "stringData": {"k": "v"}})
    assert refused(api, "v1", "secrets", {"metadata": {"name": "s"}, "type": "kubernetes.io/basic-auth",
                                          "data": {"username": "YQ=="}}, old=True) == \
        'Secret "s" is invalid: type: Invalid value: "kubernetes.io/basic-auth": field is immutable'


def test_services_ingresses_and_friends(api: FakeKubeAPI) -> None:
    assert refused(api, "v1", "services", {"metadata": {"name": "s"}, "spec": {"ports": [
        {"port": 0}, {"port": 80, "protocol": "tcp"}]}}) == (
        'Service "s" is invalid: [spec.ports[0].name: Required value, spec.ports[0].port: Invalid value: 0: must be '
        "between 1 and 65535, inclusive, spec.ports[0].targetPort: Invalid value: 0: must be between 1 and 65535, "
        "inclusive, spec.ports[1].name: Required value, spec.ports[1].protocol: Unsupported "
        'value: "tcp": supported values: "SCTP", "TCP", "UDP"]')
    path = {"path": "api", "backend": {"service": {"name": "web", "port": {}}}}
    assert refused(api, "networking.k8s.io/v1", "ingresses", {"metadata": {"name": "i"}, "spec": {"rules": [
        {"host": "Shop.example", "http": {"paths": [path, {**path, "path": "/api", "pathType": "Prefix"}]}}]}}) == (
        'Ingress.networking.k8s.io "i" is invalid: [spec.rules[0].host: Invalid value: "Shop.example": a lowercase '
        "RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end "
        "with an alphanumeric character (e.g. 'example.com', regex used for validation is "
        "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'), spec.rules[0].http.paths[0].pathType: "
        "Required value: pathType must be specified, spec.rules[0].http.paths[1].backend.service.port: Required "
        "value: port name or number is required]")
    assert refused(api, "networking.k8s.io/v1", "ingressclasses", {"metadata": {"name": "c"}, "spec": {}}) == \
        'IngressClass.networking.k8s.io "c" is invalid: spec.controller: Required value'
    assert refused(api, "discovery.k8s.io/v1", "endpointslices", {
        "metadata": {"name": "e"}, "addressType": "IPv4", "endpoints": [{"addresses": ["10.0.0.300"]}]}) == (
        'EndpointSlice.discovery.k8s.io "e" is invalid: endpoints[0].addresses[0]: Invalid value: "10.0.0.300": '
        "must be a valid IPv4 address")
    assert refused(api, "coordination.k8s.io/v1", "leases", {"metadata": {"name": "l"},
                                                             "spec": {"leaseDurationSeconds": 0}}) == \
        'Lease.coordination.k8s.io "l" is invalid: spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0'
    assert refused(api, "v1", "pods", {"metadata": {"name": "p"}, "spec": {}}) == \
        'Pod "p" is invalid: spec.containers: Required value'
