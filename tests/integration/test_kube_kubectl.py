"""The real ``kubectl`` against the fake API: apply, get, watch, patch, server-side apply, delete, selectors."""

from __future__ import annotations

import os
import subprocess
import threading
from pathlib import Path
from typing import Any

import pytest
import yaml

from simulator.kube import BackgroundServer, write_kubeconfig
from tests.integration.kube_helpers import wait_until

pytestmark = pytest.mark.kubectl

MANIFEST = """\
apiVersion: v1
kind: Namespace
metadata:
  name: shop
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: shop
  labels: {app: web, tier: front}
data:
  color: blue
---
apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: shop
  labels: {app: web}
spec:
  selector: {app: web}
  ports:
  - {name: http, port: 80, targetPort: 8080}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
  labels: {app: api}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: nginx:1
        env: [{name: MODE, value: a}]
"""


class Kubectl:
    def __init__(self, binary: str, server: BackgroundServer, tmp: Path) -> None:
        self.binary = binary
        self.server = server
        self.kubeconfig = write_kubeconfig(tmp / "kubeconfig", server.url)
        self.cache = tmp / "cache"
        self.env = {**os.environ, "KUBECONFIG": str(self.kubeconfig), "HOME": str(tmp)}

    def args(self, *args: str) -> list[str]:
        return [self.binary, "--cache-dir", str(self.cache), "--request-timeout", "20s", *args]

    def __call__(self, *args: str, check: bool = True, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        result = subprocess.run(self.args(*args), capture_output=True, text=True, env=self.env, input=stdin,
                                timeout=60)
        if check and result.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed ({result.returncode}): {result.stderr}")
        return result

    def stored(self, api_version: str, plural: str, namespace: str | None, name: str) -> Any:
        def read(api: Any) -> Any:
            return api.get(api.resolve(api_version, plural), namespace, name)

        return self.server.call(read)


@pytest.fixture
def kubectl(kubectl_bin: str, tmp_path: Path) -> Any:
    with BackgroundServer() as server:
        yield Kubectl(kubectl_bin, server, tmp_path)


def test_apply_multi_document_then_reapply(kubectl: Kubectl, tmp_path: Path) -> None:
    manifest = tmp_path / "app.yaml"
    manifest.write_text(MANIFEST)
    out = kubectl("apply", "-f", str(manifest)).stdout
    assert "namespace/shop created" in out
    assert "deployment.apps/web created" in out
    service = kubectl.stored("v1", "services", "shop", "web")
    assert service["spec"]["ports"][0]["targetPort"] == 8080
    manifest.write_text(MANIFEST.replace("color: blue", "color: red").replace("port: 80,", "port: 81,")
                        .replace("value: a", "value: b"))
    out = kubectl("apply", "-f", str(manifest)).stdout
    assert "configmap/settings configured" in out
    assert "namespace/shop unchanged" in out
    assert kubectl.stored("v1", "configmaps", "shop", "settings")["data"] == {"color": "red"}
    assert [p["port"] for p in kubectl.stored("v1", "services", "shop", "web")["spec"]["ports"]] == [81]
    deployment = kubectl.stored("apps/v1", "deployments", "shop", "web")
    assert deployment["spec"]["template"]["spec"]["containers"][0]["env"] == [{"name": "MODE", "value": "b"}]
    assert deployment["metadata"]["generation"] == 2


def test_get_yaml_and_label_selectors(kubectl: Kubectl, tmp_path: Path) -> None:
    (tmp_path / "app.yaml").write_text(MANIFEST)
    kubectl("apply", "-f", str(tmp_path / "app.yaml"))
    doc = yaml.safe_load(kubectl("get", "configmap", "settings", "-n", "shop", "-o", "yaml").stdout)
    assert doc["kind"] == "ConfigMap"
    assert doc["data"] == {"color": "blue"}
    assert doc["metadata"]["uid"] == kubectl.stored("v1", "configmaps", "shop", "settings")["metadata"]["uid"]

    def names(selector: str) -> list[str]:
        out = kubectl("get", "configmaps,services,deployments", "-n", "shop", "-l", selector, "-o", "name").stdout
        return sorted(out.split())

    assert names("app=web") == ["configmap/settings", "service/web"]
    assert names("app!=web") == ["deployment.apps/web"]
    assert names("app in (api, other)") == ["deployment.apps/web"]
    assert names("app notin (api),tier") == ["configmap/settings"]
    assert names("!tier") == ["deployment.apps/web", "service/web"]


WATCHED = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: watched\ndata:\n  k: one\n"
CFG = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\ndata:\n  a: '1'\n"


def test_watch_sees_change_by_other_client(kubectl: Kubectl) -> None:
    kubectl("apply", "-f", "-", stdin=WATCHED)
    process = subprocess.Popen(
        kubectl.args("get", "configmap", "watched", "-w", "-o", "custom-columns=NAME:.metadata.name,K:.data.k",
                     "--no-headers"),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=kubectl.env)
    lines: list[list[str]] = []

    def read() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            lines.append(line.split())

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        wait_until(lambda: ["watched", "one"] in lines, what="kubectl's initial listing")
        wait_until(lambda: kubectl.server.call(lambda api: api.watcher_count()) == 1, what="kubectl's watch")

        def change(api: Any) -> Any:
            return api.patch(api.resolve("v1", "configmaps"), "default", "watched", "merge", {"data": {"k": "two"}})

        kubectl.server.call(change)
        wait_until(lambda: ["watched", "two"] in lines, what="the change in kubectl's watch output")
    finally:
        process.terminate()
        process.wait(10)


def test_patch_merge_server_side_apply_and_delete(kubectl: Kubectl, tmp_path: Path) -> None:
    kubectl("apply", "-f", "-", stdin=CFG)
    kubectl("patch", "configmap", "cfg", "--type", "merge", "-p", '{"data":{"b":"2"}}')
    assert kubectl.stored("v1", "configmaps", "default", "cfg")["data"] == {"a": "1", "b": "2"}

    applied = tmp_path / "ssa.yaml"
    applied.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: owned\ndata:\n  x: '1'\n")
    assert "serverside-applied" in kubectl("apply", "--server-side", "-f", str(applied)).stdout
    managed = kubectl.stored("v1", "configmaps", "default", "owned")["metadata"]["managedFields"]
    assert [(m["manager"], m["operation"]) for m in managed] == [("kubectl", "Apply")]
    kubectl("patch", "configmap", "owned", "--type", "merge", "-p", '{"data":{"x":"2"}}')
    conflict = kubectl("apply", "--server-side", "-f", str(applied), check=False)
    assert conflict.returncode != 0
    assert "conflict" in conflict.stderr.lower() and ".data.x" in conflict.stderr
    assert kubectl.stored("v1", "configmaps", "default", "owned")["data"] == {"x": "2"}
    kubectl("apply", "--server-side", "--force-conflicts", "-f", str(applied))
    assert kubectl.stored("v1", "configmaps", "default", "owned")["data"] == {"x": "1"}

    assert 'configmap "cfg" deleted' in kubectl("delete", "configmap", "cfg").stdout
    missing = kubectl("get", "configmap", "cfg", check=False)
    assert missing.returncode != 0 and "NotFound" in missing.stderr


def test_unknown_type_and_invalid_name_are_reported(kubectl: Kubectl, tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: Bad_Name\n")
    result = kubectl("apply", "-f", str(bad), check=False)
    assert result.returncode != 0
    assert "Bad_Name" in result.stderr and "RFC 1123" in result.stderr
    result = kubectl("get", "frobnicators", check=False)
    assert result.returncode != 0 and "frobnicators" in result.stderr
