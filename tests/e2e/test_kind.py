"""deploy/ on a Kind cluster: build the controller image, apply the manifests, route traffic to an echo
Deployment through HAProxy and follow a scale-up.

Skipped (reason printed by conftest.py) where `kind` or a Docker engine is missing; the cluster comes
from the session fixture ``deployed`` (tests/e2e/kind_cluster.py).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

import httpx
import pytest
import yaml

from tests.e2e import kind_cluster

pytestmark = pytest.mark.e2e

HOST = "echo.e2e.test"
NODE_HTTP = "http://127.0.0.1:30080"  # kind-config.yaml maps the HAProxy Service's nodePort here
T = TypeVar("T")

ECHO_APP = f"""
apiVersion: v1
kind: Namespace
metadata: {{name: e2e}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {{name: echo, namespace: e2e}}
spec:
  replicas: 1
  selector: {{matchLabels: {{app: echo}}}}
  template:
    metadata: {{labels: {{app: echo}}}}
    spec:
      containers:
        - name: echo
          image: registry.k8s.io/e2e-test-images/agnhost:2.39
          args: ["netexec", "--http-port=8080"]
          ports: [{{name: http, containerPort: 8080}}]
          readinessProbe: {{httpGet: {{path: /hostname, port: http}}, periodSeconds: 2}}
---
apiVersion: v1
kind: Service
metadata: {{name: echo, namespace: e2e}}
spec:
  selector: {{app: echo}}
  ports: [{{name: http, port: 80, targetPort: http}}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {{name: echo, namespace: e2e}}
spec:
  ingressClassName: haptic
  rules:
    - host: {HOST}
      http:
        paths:
          - path: /
            pathType: Prefix
            backend: {{service: {{name: echo, port: {{number: 80}}}}}}
"""


def kubectl(*args: str, stdin: str | None = None) -> str:
    return kind_cluster.kubectl(*args, stdin=stdin)


def eventually(probe: Callable[[], T | None], within: float, what: str) -> T:
    deadline = time.monotonic() + within
    last: Exception | None = None
    while time.monotonic() < deadline:
        try:
            result = probe()
            if result is not None:
                return result
        except (httpx.HTTPError, AssertionError) as exc:
            last = exc
        time.sleep(2)
    raise AssertionError(f"{what} not reached within {within:g}s (last error: {last!r})")


@pytest.fixture(scope="module")
def echo_app(deployed: None) -> None:
    kubectl("apply", "-f", "-", stdin=ECHO_APP)
    kubectl("-n", "e2e", "rollout", "status", "deployment/echo", "--timeout=300s")


def hostnames(count: int) -> set[str]:
    seen = set()
    with httpx.Client(timeout=5) as client:
        for _ in range(count):
            response = client.get(f"{NODE_HTTP}/hostname", headers={"Host": HOST})
            assert response.status_code == 200, f"{response.status_code} {response.text[:200]}"
            seen.add(response.text.strip())
    return seen


def echo_pods() -> set[str]:
    pods = yaml.safe_load(kubectl("-n", "e2e", "get", "pods", "-l", "app=echo", "-o", "yaml"))["items"]
    return {p["metadata"]["name"] for p in pods if p["status"].get("phase") == "Running"}


def test_ingress_traffic_reaches_the_echo_pod(echo_app: None) -> None:
    served = eventually(lambda: hostnames(4) or None, 180, "traffic through HAProxy")
    assert served == echo_pods()


def test_scaling_the_backend_spreads_traffic(echo_app: None) -> None:
    kubectl("-n", "e2e", "scale", "deployment/echo", "--replicas=3")
    kubectl("-n", "e2e", "rollout", "status", "deployment/echo", "--timeout=300s")
    expected = echo_pods()
    assert len(expected) == 3
    eventually(lambda: True if hostnames(12) == expected else None, 120, "all three echo pods serving")


def test_the_controller_published_what_it_deployed(echo_app: None) -> None:
    published = yaml.safe_load(kubectl("-n", "haptic-system", "get", "haproxycfgs", "-o", "yaml"))["items"]
    assert published, "no HAProxyCfg published"
    status = yaml.safe_load(kubectl("-n", "haptic-system", "get", "haproxytemplateconfig", "haptic-config",
                                    "-o", "yaml")).get("status", {})
    assert status.get("validationStatus") == "Valid", status
