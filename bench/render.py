"""Render (and haproxy -c) figures for the Ingress library at 300 / 3,000 / 10,000 Ingresses, and for the
Gateway API library at 300 / 3,000 / 10,000 HTTPRoutes.

Each Ingress has one host and one path, its own Service and an EndpointSlice with 3 endpoints. Each HTTPRoute
likewise (one hostname, one PathPrefix rule, its own Service and slice), attached to one Gateway whose HTTP
listener allows all namespaces; every tenth route adds a header match (an ACL line instead of a map entry).
Prints the full render time after a config change (a new engine over the same objects; best of 3 after a warm-up;
wall clock and process CPU time), the first render's CPU time (a fresh process, every memo cold: startup), the
re-render CPU time of the same stores (fragments reused),
haproxy -c time, and
the peak RSS of the process (one fresh interpreter per size, so sizes do not add up; it includes the
stores and the fixtures themselves). Neither render figure includes collector passes, as in the controller: the
engine turns the cyclic GC off for the length of a render whoever calls it (and the controller also holds full
collections off until its first deployment, ``StartupHeap``); the first render does include what a startup pays
for its growing heap (page faults) and every memo filled for the first time.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
import time
from typing import Any

from haptic.k8s.store import ResourceStore
from haptic.templating.engine import RenderInputs, TemplateEngine, TemplateSet
from haptic.templating.libraries import load_library
from haptic.validation.haproxy_check import HAProxyValidator


def ingress(i: int) -> dict[str, Any]:
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "Ingress",
        "metadata": {"namespace": f"ns{i % 50}", "name": f"app{i}"},
        "spec": {
            "ingressClassName": "haptic",
            "rules": [
                {
                    "host": f"app{i}.example.test",
                    "http": {
                        "paths": [
                            {
                                "path": f"/p{i}",
                                "pathType": "Prefix",
                                "backend": {"service": {"name": f"svc{i}", "port": {"number": 80}}},
                            }
                        ]
                    },
                }
            ],
        },
    }


def service(i: int) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"namespace": f"ns{i % 50}", "name": f"svc{i}"},
        "spec": {"ports": [{"name": "http", "port": 80, "targetPort": 8080}]},
    }


def slice_(i: int) -> dict[str, Any]:
    return {
        "apiVersion": "discovery.k8s.io/v1",
        "kind": "EndpointSlice",
        "metadata": {
            "namespace": f"ns{i % 50}",
            "name": f"svc{i}-x",
            "labels": {"kubernetes.io/service-name": f"svc{i}"},
        },
        "addressType": "IPv4",
        "ports": [{"name": "http", "port": 8080}],
        "endpoints": [
            {"addresses": [f"10.{i // 250 % 250}.{i % 250}.{k}"], "conditions": {"ready": True}} for k in (1, 2, 3)
        ],
    }


def httproute(i: int) -> dict[str, Any]:
    match: dict[str, Any] = {"path": {"type": "PathPrefix", "value": f"/p{i}"}}
    if i % 10 == 0:
        match["headers"] = [{"type": "Exact", "name": "X-Tenant", "value": f"t{i}"}]
    return {
        "apiVersion": "gateway.networking.k8s.io/v1",
        "kind": "HTTPRoute",
        "metadata": {"namespace": f"ns{i % 50}", "name": f"app{i}", "generation": 1,
                     "creationTimestamp": f"2026-01-01T00:{i // 60 % 60:02d}:{i % 60:02d}Z"},
        "spec": {
            "parentRefs": [{"group": "gateway.networking.k8s.io", "kind": "Gateway", "namespace": "infra",
                            "name": "public"}],
            "hostnames": [f"app{i}.example.test"],
            "rules": [{"matches": [match],
                       "backendRefs": [{"group": "", "kind": "Service", "name": f"svc{i}", "port": 80, "weight": 1}]}],
        },
    }


GATEWAY_OBJECTS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("gatewayclasses", {"apiVersion": "gateway.networking.k8s.io/v1", "kind": "GatewayClass",
                        "metadata": {"name": "haptic", "generation": 1},
                        "spec": {"controllerName": "haproxy-haptic.org/gateway-controller"}}),
    ("gateways", {"apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
                  "metadata": {"namespace": "infra", "name": "public", "generation": 1},
                  "spec": {"gatewayClassName": "haptic", "listeners": [
                      {"name": "http", "port": 8080, "protocol": "HTTP",
                       "allowedRoutes": {"namespaces": {"from": "All"}}}]}}),
)


def _library(library: str) -> dict[str, Any]:
    lib = load_library(library)
    if library == "gateway":
        lib.pop("haproxyConfigIsFallback", None)
    return lib


def new_engine(library: str = "ingress") -> TemplateEngine:
    """The library's templates compiled anew, as the controller does for a config change."""
    return TemplateEngine(TemplateSet.from_spec(_Spec(_library(library))))


def build(n: int, library: str = "ingress") -> tuple[TemplateEngine, RenderInputs]:
    lib = _library(library)
    engine = new_engine(library)
    stores = {
        name: ResourceStore(name, w["indexBy"], w.get("fieldSelector"), lib.get("watchedResourcesIgnoreFields", []))
        for name, w in lib["watchedResources"].items()
    }
    for i in range(n):
        if library == "gateway":
            stores["httproutes"].apply(httproute(i))
        else:
            stores["ingresses"].apply(ingress(i))
        stores["services"].apply(service(i))
        stores["endpoints"].apply(slice_(i))
    if library == "gateway":
        for store, obj in GATEWAY_OBJECTS:
            stores[store].apply(obj)
    return engine, RenderInputs(stores=stores, extra_context=lib["templatingSettings"]["extraContext"])


class _Spec:
    def __init__(self, lib: dict[str, Any]) -> None:
        self.haproxy_config = lib["haproxyConfig"]
        self.template_snippets = lib["templateSnippets"]
        self.maps = lib.get("maps", {})
        self.files = lib.get("files", {})
        self.ssl_certificates = lib.get("sslCertificates", {})


def measure(n: int, library: str = "ingress") -> dict[str, Any]:
    engine, inputs = build(n, library)
    # The first render of a fresh process (startup): every memo cold.
    start_cpu = time.process_time()
    engine.render(inputs)
    first_cpu = time.process_time() - start_cpu
    times, cpu = [], []
    # A config change: a new engine (templates compiled anew, no fragment cached) over the same store objects,
    # as the controller builds one for a new configuration; what it starts from is what any engine leaves.
    for _ in range(3):
        engine = new_engine(library)
        start, start_cpu = time.perf_counter(), time.process_time()
        result = engine.render(inputs)
        times.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    warm = []
    # The same stores rendered again: every fragment reused (what a change outside the templates' reads costs).
    for _ in range(3):
        start_cpu = time.process_time()
        engine.render(inputs)
        warm.append(time.process_time() - start_cpu)
    figures: dict[str, Any] = {
        "objects": n,
        "render_ms": round(min(times) * 1000, 1),
        "render_cpu_ms": round(min(cpu) * 1000, 1),
        "first_render_cpu_ms": round(first_cpu * 1000, 1),
        "rerender_cpu_ms": round(min(warm) * 1000, 1),
    }
    figures["config_bytes"] = len(result.config)
    haproxy = shutil.which("haproxy") or shutil.which("haproxy", path="/usr/sbin")
    if haproxy:
        start = time.perf_counter()
        check = HAProxyValidator(haproxy).validate(result.config, result.aux)
        figures["haproxy_c_ms"] = round((time.perf_counter() - start) * 1000, 1)
        figures["haproxy_valid"] = check.valid
    figures["peak_rss_mib"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    return figures


def machine_reference_ms() -> float:
    """CPU time of a fixed pure-Python workload (calls, dict look-ups, small strings: what a render is made of), best
    of 9: the render targets are absolute CPU times, and this VM's speed changes from day to day, so the figure says
    how fast Python runs here now and lets the figures of two runs be compared."""
    table = {i: f"k{i}" for i in range(1000)}

    def item(i: int) -> str:
        return table.get(i % 1000, "") + str(i)

    best = float("inf")
    for _ in range(9):
        start = time.process_time()
        for i in range(100_000):
            item(i)
        best = min(best, time.process_time() - start)
    return best * 1000


def main() -> int:
    if len(sys.argv) > 1:
        library = sys.argv[2] if len(sys.argv) > 2 else "ingress"
        print(json.dumps(measure(int(sys.argv[1]), library)))
        return 0
    print(f"load average: {os.getloadavg()[0]:.2f} (wall times inflate on a busy machine; CPU time less so); "
          f"machine reference {machine_reference_ms():.0f} ms CPU (a fixed pure-Python workload: compare runs by it)")
    for library, label in (("ingress", "ingresses"), ("gateway", "httproutes")):
        print(
            f"{label:>10} {'render ms':>10} {'render CPU ms':>14} {'first render CPU':>17} {'re-render CPU':>14} "
            f"{'haproxy -c ms':>14} "
            f"{'valid':>6} "
            f"{'peak RSS MiB':>13} {'cfg KiB':>8}"
        )
        for n in (300, 3000, 10000):
            out = subprocess.run([sys.executable, __file__, str(n), library], capture_output=True, text=True)
            if out.returncode != 0:
                print(out.stderr)
                return 1
            f = json.loads(out.stdout)
            print(
                f"{f['objects']:>10} {f['render_ms']:>10} {f['render_cpu_ms']:>14} {f['first_render_cpu_ms']:>17} "
                f"{f['rerender_cpu_ms']:>14} "
                f"{f.get('haproxy_c_ms', '-'):>14} "
                f"{f.get('haproxy_valid', '-')!s:>6} {f['peak_rss_mib']:>13} {f['config_bytes'] // 1024:>8}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
