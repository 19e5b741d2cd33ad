"""RBAC evaluation, request attributes and ServiceAccount tokens of the fake API, without HTTP."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from haptic.k8s.api import Invalid
from simulator.kube import FakeKubeAPI
from simulator.kube.authorization import Authorization, forbidden, request_attributes
from simulator.kube.rbac import RequestAttributes, UserInfo, authorize, rule_allows, rules_for
from simulator.kube.tokens import TokenIssuer

RBAC = "rbac.authorization.k8s.io/v1"


def test_request_attributes_follow_the_api_servers_request_info() -> None:
    ns = request_attributes("GET", "/api/v1/namespaces/team", {})
    assert (ns.verb, ns.resource, ns.name, ns.namespace) == ("get", "namespaces", "team", "team")
    finalize = request_attributes("PUT", "/api/v1/namespaces/team/finalize", {})
    assert (finalize.resource, finalize.subresource, finalize.verb) == ("namespaces", "finalize", "update")
    watch = request_attributes("GET", "/apis/apps/v1/namespaces/a/deployments",
                               {"watch": "1", "fieldSelector": "metadata.name=web"})
    assert (watch.verb, watch.api_group, watch.resource, watch.name) == ("watch", "apps", "deployments", "web")
    not_a_name = request_attributes("GET", "/api/v1/pods", {"fieldSelector": "metadata.name!=web"})
    assert (not_a_name.verb, not_a_name.name, not_a_name.namespace) == ("list", "", "")
    sweep = request_attributes("DELETE", "/api/v1/namespaces/a/configmaps", {})
    assert sweep.verb == "deletecollection"
    scale = request_attributes("PATCH", "/apis/apps/v1/namespaces/a/deployments/web/scale", {})
    assert (scale.verb, scale.subresource) == ("patch", "scale")
    path = request_attributes("GET", "/apis/apps/v1", {})
    assert (path.resource_request, path.verb, path.path) == (False, "get", "/apis/apps/v1")


def test_rule_matching() -> None:
    attrs = RequestAttributes("get", api_group="apps", resource="deployments", subresource="scale", name="web",
                              namespace="a")
    assert rule_allows({"verbs": ["get"], "apiGroups": ["apps"], "resources": ["*/scale"]}, attrs)
    assert not rule_allows({"verbs": ["get"], "apiGroups": ["apps"], "resources": ["deployments"]}, attrs)
    assert rule_allows({"verbs": ["*"], "apiGroups": ["*"], "resources": ["deployments/scale"],
                        "resourceNames": ["web"]}, attrs)
    assert not rule_allows({"verbs": ["get"], "apiGroups": ["apps"], "resources": ["deployments/scale"],
                            "resourceNames": ["db"]}, attrs)
    assert not rule_allows({"verbs": ["list"], "apiGroups": ["apps"], "resources": ["*"]}, attrs)
    path = RequestAttributes("get", resource_request=False, path="/apis/apps/v1")
    assert rule_allows({"verbs": ["get"], "nonResourceURLs": ["/apis/*"]}, path)
    assert not rule_allows({"verbs": ["get"], "nonResourceURLs": ["/api/*"]}, path)
    wildcard_verb = RequestAttributes("*", resource="pods")
    assert not rule_allows({"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods"]}, wildcard_verb)


def _api_with_roles() -> FakeKubeAPI:
    api = FakeKubeAPI()
    api.apply_object({"apiVersion": RBAC, "kind": "ClusterRole",
                      "metadata": {"name": "monitoring-view", "labels": {"aggregate-to-view": "true"}},
                      "rules": [{"apiGroups": ["monitoring.coreos.com"], "resources": ["servicemonitors"],
                                 "verbs": ["get"]}]})
    api.apply_object({"apiVersion": RBAC, "kind": "ClusterRole", "metadata": {"name": "view"},
                      "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"aggregate-to-view": "true"}}]},
                      "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]}]})
    api.apply_object({"apiVersion": RBAC, "kind": "RoleBinding",
                      "metadata": {"name": "dev-view", "namespace": "default"},
                      "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
                      "subjects": [{"kind": "Group", "name": "dev"}]})
    return api


def test_cluster_role_bound_in_a_namespace_with_aggregated_rules() -> None:
    api = _api_with_roles()
    dev = UserInfo("carol", ("dev", "system:authenticated"))
    monitors = RequestAttributes("get", api_group="monitoring.coreos.com", resource="servicemonitors",
                                 namespace="default")
    decision = authorize(api, dev, monitors)
    assert decision.allowed
    assert decision.reason == 'RBAC: allowed by RoleBinding "dev-view/default" of ClusterRole "view" to Group "dev"'
    elsewhere = RequestAttributes("list", resource="pods", namespace="kube-system")
    assert not authorize(api, dev, elsewhere).allowed
    resource_rules, _paths, errors = rules_for(api, dev, "default")
    monitor_rule = {"verbs": ["get"], "apiGroups": ["monitoring.coreos.com"], "resources": ["servicemonitors"]}
    assert monitor_rule in resource_rules
    assert errors == []
    masters = UserInfo("root", ("system:masters",))
    assert authorize(api, masters, elsewhere).allowed


def test_forbidden_messages_for_each_scope() -> None:
    user = UserInfo("alice")
    cluster = forbidden(user, RequestAttributes("list", api_group="apps", resource="deployments"))
    assert cluster.message == ('deployments.apps is forbidden: User "alice" cannot list resource "deployments" in API '
                               'group "apps" at the cluster scope')
    assert cluster.details == {"group": "apps", "kind": "deployments"}
    path = forbidden(user, RequestAttributes("post", resource_request=False, path="/logs"), "no luck")
    assert path.message == 'forbidden: User "alice" cannot post path "/logs": no luck'


def test_tokens_expire_on_the_fakes_clock_and_carry_the_account() -> None:
    now = [datetime(2026, 3, 1, tzinfo=UTC)]
    api = FakeKubeAPI(now=lambda: now[0])
    sa = api.create(api.resolve("v1", "serviceaccounts"), "default", {"metadata": {"name": "bot"}})
    issuer = TokenIssuer(api)
    answer = issuer.request("default", "bot", {"spec": {"expirationSeconds": 600, "audiences": ["vault"]}})
    assert answer["status"]["expirationTimestamp"] == "2026-03-01T00:10:00Z"
    token = answer["status"]["token"]
    user, _ = issuer.verify(token, ["vault"])
    assert user is not None and user.name == "system:serviceaccount:default:bot"
    assert user.uid == sa["metadata"]["uid"]
    assert issuer.verify(token, ["kubernetes"])[0] is None  # not for this audience
    assert TokenIssuer(api).verify(token, ["vault"])[0] is None  # another issuer's key
    now[0] += timedelta(seconds=600)
    assert issuer.verify(token, ["vault"]) == (None, "invalid bearer token, service account token has expired")
    with pytest.raises(Invalid) as short:
        issuer.request("default", "bot", {"spec": {"expirationSeconds": 60}})
    assert short.value.details["causes"][0]["field"] == "spec.expirationSeconds"


def test_enabling_creates_the_bootstrap_policy_once() -> None:
    api = FakeKubeAPI()
    auth = Authorization(api)
    assert auth.authenticate(None).name == "kubernetes-admin"  # not enforcing: the admin
    token = auth.enable()
    assert auth.enable() == token
    names = [r["metadata"]["name"] for r in api.objects(api.resolve(RBAC, "clusterroles"))]
    assert names == ["cluster-admin", "system:basic-user", "system:discovery", "system:public-info-viewer"]
    assert auth.authenticate(None).name == "system:anonymous"
    assert auth.authenticate(f"Bearer {token}").name == "kubernetes-admin"
    anonymous = UserInfo("system:anonymous", ("system:unauthenticated",))
    assert authorize(api, anonymous, RequestAttributes("get", resource_request=False, path="/version")).allowed
    assert not authorize(api, anonymous, RequestAttributes("get", resource_request=False, path="/api")).allowed
