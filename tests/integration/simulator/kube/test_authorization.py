"""Opt-in RBAC enforcement of the fake API (``server.auth.enable()``), through kubectl over HTTPS (it sends
tokens only over TLS) and the official client: ServiceAccount tokens, the API server's exact 403 and
401 bodies, impersonation, subresources and the verbs of list and watch."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pytest
from kubernetes import client, watch
from kubernetes.client.rest import ApiException

from simulator.kube import BackgroundServer
from simulator.kube.tls import serving_tls
from tests.support.kubectl import Kubectl

pytestmark = pytest.mark.kubectl

TEAM = """\
apiVersion: v1
kind: Namespace
metadata: {name: team}
---
apiVersion: v1
kind: Namespace
metadata: {name: other}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: bot, namespace: team}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: bot, namespace: team}
rules:
- apiGroups: [""]
  resources: [pods, configmaps]
  verbs: [get, list]
- apiGroups: [apps]
  resources: [deployments]
  verbs: [get, list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: bot, namespace: team}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: bot}
subjects: [{kind: ServiceAccount, name: bot}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: ghost, namespace: other}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: ghost}
subjects: [{kind: ServiceAccount, name: bot, namespace: team}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: team}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: nginx:1}]}
"""
BOT = "system:serviceaccount:team:bot"


@dataclass
class Secured:
    server: BackgroundServer
    admin: Kubectl
    tmp: Path
    kubectl_bin: str

    def kubectl(self, name: str, token: str | None) -> Kubectl:
        return Kubectl(self.kubectl_bin, self.server, self.tmp / name, token)

    def client(self, token: str | None) -> client.ApiClient:
        config = client.Configuration()
        config.host = self.server.url
        ca = self.tmp / "ca.crt"
        assert self.server.server is not None and self.server.server.tls is not None
        ca.write_bytes(self.server.server.tls.ca_pem)
        config.ssl_ca_cert = str(ca)
        if token:
            config.api_key = {"authorization": f"Bearer {token}"}
        return client.ApiClient(config)


@pytest.fixture
def secured(kubectl_bin: str, tmp_path: Path) -> Iterator[Secured]:
    with BackgroundServer(tls=serving_tls(datetime.now(UTC))) as server:
        assert server.server is not None
        auth = server.server.auth
        admin_token = server.call(lambda _api: auth.enable())
        admin = Kubectl(kubectl_bin, server, tmp_path / "admin", admin_token)
        admin("apply", "-f", "-", stdin=TEAM)
        yield Secured(server, admin, tmp_path, kubectl_bin)


def bot_token(secured: Secured) -> str:
    return secured.admin("create", "token", "bot", "-n", "team").stdout.strip()


def test_anonymous_requests_see_only_public_paths(secured: Secured) -> None:
    # Through the official client: kubectl prompts for a password when an HTTPS kubeconfig has no user.
    anonymous = secured.client(None)
    assert client.VersionApi(anonymous).get_code().git_version.startswith("v1.")
    with pytest.raises(ApiException) as pods:
        client.CoreV1Api(anonymous).list_namespaced_pod("team")
    assert json.loads(pods.value.body)["message"] == (
        'pods is forbidden: User "system:anonymous" cannot list resource "pods" in API group "" in the namespace '
        '"team"')
    with pytest.raises(ApiException) as discovery:
        client.ApisApi(anonymous).get_api_versions()  # GET /apis/
    assert json.loads(discovery.value.body) == {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": 'forbidden: User "system:anonymous" cannot get path "/apis/"', "reason": "Forbidden",
        "details": {}, "code": 403}


def test_service_account_token_is_authorized_by_its_role_binding(secured: Secured) -> None:
    bot = secured.kubectl("bot", bot_token(secured))
    assert bot("auth", "whoami", "-o", "jsonpath={.status.userInfo.username}").stdout == BOT
    assert bot("get", "pods", "-n", "team").returncode == 0
    assert bot("get", "deployment", "web", "-n", "team", "-o", "name").stdout.strip() == "deployment.apps/web"
    other = bot("get", "pods", "-n", "kube-system", check=False)
    assert other.returncode != 0
    assert (f'Error from server (Forbidden): pods is forbidden: User "{BOT}" cannot list resource "pods" in API '
            'group "" in the namespace "kube-system"') in other.stderr
    write = bot("create", "configmap", "x", "-n", "team", check=False)
    assert (f'configmaps is forbidden: User "{BOT}" cannot create resource "configmaps" in API group "" in the '
            'namespace "team"') in write.stderr
    scale = bot("scale", "deployment/web", "-n", "team", "--replicas=3", check=False)
    assert (f'deployments.apps "web" is forbidden: User "{BOT}" cannot patch resource "deployments/scale" in API '
            'group "apps" in the namespace "team"') in scale.stderr
    ghost = bot("get", "pods", "-n", "other", check=False)
    assert ghost.stderr.rstrip().endswith(
        f'User "{BOT}" cannot list resource "pods" in API group "" in the namespace "other": '
        'RBAC: role.rbac.authorization.k8s.io "ghost" not found')
    assert bot("auth", "can-i", "list", "pods", "-n", "team").stdout.strip() == "yes"
    assert bot("auth", "can-i", "delete", "pods", "-n", "team", check=False).stdout.strip() == "no"
    impersonate = bot("get", "pods", "-n", "team", "--as", "alice", check=False)
    assert (f'users "alice" is forbidden: User "{BOT}" cannot impersonate resource "users" in API group "" at the '
            "cluster scope") in impersonate.stderr


def test_official_client_gets_the_api_servers_status_bodies(secured: Secured) -> None:
    core = client.CoreV1Api(secured.client(bot_token(secured)))
    assert core.list_namespaced_config_map("team").items == []
    with pytest.raises(ApiException) as denied:
        core.read_namespaced_secret("creds", "team")
    assert denied.value.status == 403
    assert json.loads(denied.value.body) == {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": f'secrets "creds" is forbidden: User "{BOT}" cannot get resource "secrets" in API group "" in '
                   'the namespace "team"',
        "reason": "Forbidden", "details": {"name": "creds", "kind": "secrets"}, "code": 403}
    apps = client.AppsV1Api(secured.client(bot_token(secured)))
    with pytest.raises(ApiException) as status_write:
        apps.patch_namespaced_deployment_status("web", "team", {"status": {"replicas": 1}})
    assert json.loads(status_write.value.body)["details"] == {"name": "web", "group": "apps", "kind": "deployments"}
    # The Role grants list but not watch on config maps: a watch is refused with its own verb.
    stream = watch.Watch().stream(core.list_namespaced_config_map, "team", timeout_seconds=1)
    with pytest.raises(ApiException) as no_watch:
        next(stream)
    assert "cannot watch resource \"configmaps\"" in json.loads(no_watch.value.body)["message"]
    events = [e["object"].metadata.name for e in watch.Watch().stream(
        apps.list_namespaced_deployment, "team", timeout_seconds=1)]
    assert events == ["web"]
    with pytest.raises(ApiException) as bogus:
        client.CoreV1Api(secured.client("not-a-token")).list_namespaced_pod("team")
    assert bogus.value.status == 401
    assert json.loads(bogus.value.body)["reason"] == "Unauthorized"


def test_a_token_dies_with_its_service_account(secured: Secured) -> None:
    token = bot_token(secured)
    core = client.CoreV1Api(secured.client(token))
    assert core.list_namespaced_pod("team").items == []
    secured.admin("delete", "serviceaccount", "bot", "-n", "team")
    secured.admin("create", "serviceaccount", "bot", "-n", "team")  # same name, new uid: the old token is void
    with pytest.raises(ApiException) as gone:
        core.list_namespaced_pod("team")
    assert gone.value.status == 401
    fresh = client.CoreV1Api(secured.client(bot_token(secured)))
    assert fresh.list_namespaced_pod("team").items == []


def test_kube_api_command_with_authorization(kubectl_bin: str, tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    process = subprocess.Popen([sys.executable, "-m", "simulator.cli", "kube-api", "--authorization",
                                "--kubeconfig", str(kubeconfig)], stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        served = process.stdout.readline()
        assert served.startswith("kube-api: serving on https://127.0.0.1:") and "(RBAC enforced)" in served
        assert "kubeconfig written" in process.stdout.readline()
        env = {**os.environ, "KUBECONFIG": str(kubeconfig), "HOME": str(tmp_path)}

        def kubectl(*args: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run([kubectl_bin, "--cache-dir", str(tmp_path / "cache"), *args], capture_output=True,
                                  text=True, env=env, timeout=60, check=False)

        assert kubectl("create", "serviceaccount", "bot").returncode == 0  # the kubeconfig's admin
        token = kubectl("create", "token", "bot").stdout.strip()
        denied = kubectl("--token", token, "get", "secrets")
        assert denied.returncode != 0
        assert ('secrets is forbidden: User "system:serviceaccount:default:bot" cannot list resource "secrets" in '
                'API group "" in the namespace "default"') in denied.stderr
    finally:
        process.terminate()
        assert process.wait(20) == 0
