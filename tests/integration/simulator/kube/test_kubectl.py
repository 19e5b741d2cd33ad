"""The real ``kubectl`` against the fake API: apply, get, watch, patch, server-side apply, delete, selectors."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
import yaml

from simulator.kube import BackgroundServer
from simulator.kube.gateway_api import gateway_api_crds
from tests.integration.kube_helpers import WIDGET_CRD, wait_until
from tests.support.kubectl import Kubectl

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

    assert 'namespace "shop" deleted' in kubectl("delete", "namespace", "shop").stdout
    gone = kubectl("get", "configmaps", "-n", "shop", "-o", "name").stdout
    assert gone.strip() == "", "namespace deletion removes what it contained"


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


WIDGETS = """\
apiVersion: example.com/v1
kind: Widget
metadata:
  name: sprocket
spec:
  size: 3
"""


def test_custom_resources_after_their_crd(kubectl: Kubectl, tmp_path: Path) -> None:
    crd = dict(WIDGET_CRD)
    crd["spec"] = {**WIDGET_CRD["spec"], "versions": [{
        **WIDGET_CRD["spec"]["versions"][0],
        "additionalPrinterColumns": [{"name": "Size", "type": "integer", "jsonPath": ".spec.size"},
                                     {"name": "Created", "type": "date", "jsonPath": ".metadata.creationTimestamp"}]}]}
    (tmp_path / "crd.yaml").write_text(yaml.safe_dump(crd))
    kubectl("apply", "-f", str(tmp_path / "crd.yaml"))
    kubectl("apply", "-f", "-", stdin=WIDGETS)
    table = kubectl("get", "wd").stdout.split("\n")
    # Declared columns replace the default Age, as on a real API server; date columns show ages.
    assert table[0].split() == ["NAME", "SIZE", "CREATED"]
    assert table[1].split()[:2] == ["sprocket", "3"]
    assert re.fullmatch(r"\d+[smhd]", table[1].split()[2])
    kubectl("apply", "-f", "-", stdin=WIDGETS.replace("size: 3", "size: 4"))
    assert kubectl.stored("example.com/v1", "widgets", "default", "sprocket")["spec"] == {"size": 4}
    kubectl("patch", "widget", "sprocket", "--subresource", "status", "--type", "merge", "-p",
            '{"status":{"ready":true}}')
    stored = kubectl.stored("example.com/v1", "widgets", "default", "sprocket")
    assert stored["status"] == {"ready": True} and stored["metadata"]["generation"] == 2


def test_server_dry_run_changes_nothing(kubectl: Kubectl) -> None:
    rv = kubectl.server.call(lambda api: api.resource_version)
    out = kubectl("apply", "--dry-run=server", "-f", "-", stdin=CFG).stdout
    assert "created (server dry run)" in out
    assert kubectl.server.call(lambda api: api.resource_version) == rv
    missing = kubectl("get", "configmap", "cfg", check=False)
    assert missing.returncode != 0


def test_kube_api_command_serves_loaded_objects(kubectl_bin: str, tmp_path: Path) -> None:
    objects = tmp_path / "objects.yaml"
    objects.write_text(MANIFEST)
    kubeconfig = tmp_path / "kubeconfig"
    process = subprocess.Popen(
        [sys.executable, "-m", "simulator.cli", "kube-api", "--port", "0", "--load", str(objects),
         "--kubeconfig", str(kubeconfig)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        lines = [process.stdout.readline() for _ in range(3)]
        assert "loaded 4 object(s)" in lines[0]
        assert lines[1].startswith("kube-api: serving on http://127.0.0.1:")
        env = {**os.environ, "KUBECONFIG": str(kubeconfig), "HOME": str(tmp_path)}
        out = subprocess.run([kubectl_bin, "--cache-dir", str(tmp_path / "cache"), "get", "deployments", "-n", "shop",
                              "-o", "name"], capture_output=True, text=True, env=env, timeout=60)
        assert out.stdout.split() == ["deployment.apps/web"], out.stderr
    finally:
        process.terminate()
        assert process.wait(20) == 0


def test_imperative_create_sends_protobuf_that_is_understood(kubectl: Kubectl) -> None:
    kubectl("create", "configmap", "made", "--from-literal=a=1", "--from-literal=b=two")
    kubectl("create", "secret", "generic", "pw", "--from-literal=password=s3cret")
    kubectl("create", "namespace", "made-ns")
    assert kubectl.stored("v1", "configmaps", "default", "made")["data"] == {"a": "1", "b": "two"}
    assert kubectl.stored("v1", "secrets", "default", "pw")["data"] == {"password": "czNjcmV0"}
    assert kubectl.stored("v1", "namespaces", None, "made-ns")["status"] == {"phase": "Active"}
    # Workloads with their pod templates (these answered 415 before the field tables).
    kubectl("create", "deployment", "web", "--image=nginx", "--port=8080", "--replicas=0", "--", "sleep", "10")
    deployment = kubectl.stored("apps/v1", "deployments", "default", "web")
    assert deployment["spec"]["replicas"] == 0, "a pointer field set to zero stays set"
    assert deployment["spec"]["selector"] == {"matchLabels": {"app": "web"}}
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    assert (container["name"], container["image"], container["command"]) == ("nginx", "nginx", ["sleep", "10"])
    assert container["ports"] == [{"containerPort": 8080, "protocol": "TCP"}] and container["resources"] == {}
    kubectl("create", "cronjob", "tick", "--image=busybox", "--schedule=*/5 * * * *", "--", "date")
    cronjob = kubectl.stored("batch/v1", "cronjobs", "default", "tick")
    assert cronjob["spec"]["schedule"] == "*/5 * * * *"
    assert cronjob["spec"]["jobTemplate"]["spec"]["template"]["spec"]["restartPolicy"] == "OnFailure"
    kubectl("create", "job", "once", "--from=cronjob/tick")
    job = kubectl.stored("batch/v1", "jobs", "default", "once")
    assert job["metadata"]["annotations"] == {"cronjob.kubernetes.io/instantiate": "manual"}
    assert [(r["kind"], r["name"], r["controller"]) for r in job["metadata"]["ownerReferences"]] == \
        [("CronJob", "tick", True)]
    assert job["spec"]["template"]["spec"]["containers"][0]["command"] == ["date"]
    kubectl("create", "service", "nodeport", "web", "--tcp=80:8080", "--node-port=30080")
    service = kubectl.stored("v1", "services", "default", "web")
    assert service["spec"]["ports"] == [{"name": "80-8080", "protocol": "TCP", "port": 80, "targetPort": 8080,
                                         "nodePort": 30080}]
    assert (service["spec"]["type"], service["spec"]["selector"]) == ("NodePort", {"app": "web"})
    kubectl("create", "ingress", "web", "--class=haptic", "--rule=a.example/=web:80",
            "--rule=b.example/api*=api:http,tls=cert")
    ingress = kubectl.stored("networking.k8s.io/v1", "ingresses", "default", "web")["spec"]
    assert ingress["ingressClassName"] == "haptic"
    assert ingress["tls"] == [{"hosts": ["b.example"], "secretName": "cert"}]
    assert ingress["rules"][1] == {"host": "b.example", "http": {"paths": [{  # IngressRuleValue is inlined
        "path": "/api", "pathType": "Prefix", "backend": {"service": {"name": "api", "port": {"name": "http"}}}}]}}
    kubectl("create", "pdb", "web", "--selector=app=web", "--min-available=50%")
    assert kubectl.stored("policy/v1", "poddisruptionbudgets", "default", "web")["spec"] == {
        "minAvailable": "50%", "selector": {"matchLabels": {"app": "web"}}}
    kubectl("autoscale", "deployment", "web", "--min=1", "--max=3", "--cpu-percent=50")
    hpa = kubectl.stored("autoscaling/v2", "horizontalpodautoscalers", "default", "web")["spec"]  # stored as v2
    assert (hpa["minReplicas"], hpa["maxReplicas"], hpa["scaleTargetRef"]["name"]) == (1, 3, "web")
    assert hpa["metrics"][0]["resource"]["target"] == {"type": "Utilization", "averageUtilization": 50}


GATEWAY_OBJECTS = """\
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata:
  name: haptic
spec:
  controllerName: haproxy-haptic.org/gateway-controller
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata:
  name: edge
spec:
  gatewayClassName: haptic
  listeners:
  - {name: http, port: 80, protocol: HTTP}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: web
spec:
  parentRefs: [{name: edge}]
  rules:
  - backendRefs: [{name: web, port: 80}]
"""


def test_gateway_objects_after_the_gateway_api_crds(kubectl: Kubectl, tmp_path: Path) -> None:
    # As on a real cluster: Gateway kinds are unknown until their CRDs are applied (without
    # --validate=false kubectl stops earlier, at the openapi/v2 fallback the fake does not serve).
    refused = kubectl("apply", "--validate=false", "-f", "-", stdin=GATEWAY_OBJECTS, check=False)
    assert refused.returncode != 0 and 'no matches for kind "GatewayClass"' in refused.stderr, refused.stderr
    crds = tmp_path / "gateway-api.yaml"
    crds.write_text(yaml.safe_dump_all(list(gateway_api_crds().values())))
    kubectl("apply", "--server-side", "-f", str(crds))
    out = kubectl("apply", "-f", "-", stdin=GATEWAY_OBJECTS).stdout
    assert "httproute.gateway.networking.k8s.io/web created" in out, out
    route = kubectl.stored("gateway.networking.k8s.io/v1", "httproutes", "default", "web")
    assert route["spec"]["rules"][0]["matches"] == [{"path": {"type": "PathPrefix", "value": "/"}}], "CRD defaults"
    # A client-side re-apply patches a custom resource with a merge patch (no strategic merge for CRDs).
    changed = GATEWAY_OBJECTS.replace("port: 80}]\n", "port: 8080}]\n")
    assert "httproute.gateway.networking.k8s.io/web configured" in kubectl("apply", "-f", "-", stdin=changed).stdout
    route = kubectl.stored("gateway.networking.k8s.io/v1", "httproutes", "default", "web")
    assert route["spec"]["rules"][0]["backendRefs"][0]["port"] == 8080
    assert kubectl("get", "gtw", "-o", "name").stdout.split() == ["gateway.gateway.networking.k8s.io/edge"]
