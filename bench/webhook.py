"""Admission webhook figures for the Ingress example at 100 / 1,000 / 3,000 live Ingresses.

Per size: the time to answer a review that is allowed (overlay + render + ``haproxy -c``, a new
Ingress each time so the validation cache never hits), one denied as hostile by the templates
(render only), and one denied at the basic checks; then reviews over HTTPS on 127.0.0.1 (sequential,
one client, keep-alive) at 100 Ingresses. Median of the runs; the validationTests run once before.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import ssl
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

from haptic.live.certs import generate_webhook_certs
from haptic.live.webhook_server import WebhookServer
from haptic.validation.config_file import read_config_file
from haptic.webhook.admission import AdmissionValidator
from haptic.webhook.proposal_check import DryRunCheck

ROOT = Path(__file__).resolve().parents[1]
RUNS = 9


def ingress(i: int, **annotations: str) -> dict[str, Any]:
    meta: dict[str, Any] = {"namespace": f"ns{i % 50}", "name": f"app{i}"}
    if annotations:
        meta["annotations"] = annotations
    path = {"path": f"/p{i}", "pathType": "Prefix", "backend": {"service": {"name": f"svc{i}", "port": {"number": 80}}}}
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "Ingress",
        "metadata": meta,
        "spec": {"ingressClassName": "haptic", "rules": [{"host": f"app{i}.example.test", "http": {"paths": [path]}}]},
    }


def service(i: int) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"namespace": f"ns{i % 50}", "name": f"svc{i}"},
            "spec": {"ports": [{"name": "http", "port": 80, "targetPort": 8080}]}}


def slice_(i: int) -> dict[str, Any]:
    return {
        "apiVersion": "discovery.k8s.io/v1",
        "kind": "EndpointSlice",
        "metadata": {"namespace": f"ns{i % 50}", "name": f"svc{i}-x",
                     "labels": {"kubernetes.io/service-name": f"svc{i}"}},
        "addressType": "IPv4",
        "ports": [{"name": "http", "port": 8080}],
        "endpoints": [{"addresses": [f"10.{i // 250 % 250}.{i % 250}.{k}"], "conditions": {"ready": True}}
                      for k in (1, 2, 3)],
    }


def review(uid: str, obj: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": uid,
            "kind": {"group": "networking.k8s.io", "version": "v1", "kind": "Ingress"},
            "resource": {"group": "networking.k8s.io", "version": "v1", "resource": "ingresses"},
            "name": obj["metadata"].get("name", ""),
            "namespace": obj["metadata"]["namespace"],
            "operation": "CREATE",
            "object": obj,
        },
    }


async def build(n: int, haproxy: str) -> AdmissionValidator:
    config = read_config_file(ROOT / "examples" / "ingress" / "haproxytemplateconfig.yaml")
    stores = config.spec.make_stores()
    for i in range(n):
        stores["ingresses"].apply(ingress(i))
        stores["services"].apply(service(i))
        stores["endpoints"].apply(slice_(i))
    check = DryRunCheck.from_spec(config.spec, haproxy)
    problems = await check.test_problems()
    if problems:
        raise SystemExit(f"validationTests fail: {problems}")
    return AdmissionValidator.from_spec(config.spec, stores, check)


async def timed(validator: AdmissionValidator, bodies: list[dict[str, Any]], expect: bool) -> float:
    times = []
    for body in bodies:
        start = time.perf_counter()
        decision = await validator.review(body)
        times.append(time.perf_counter() - start)
        if decision.allowed != expect:
            raise SystemExit(f"unexpected decision: {decision}")
    return statistics.median(times) * 1000


async def over_https(validator: AdmissionValidator, count: int) -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as tmp:
        certs = generate_webhook_certs(datetime.now(UTC), directory=Path(tmp))
        assert certs.cert_path and certs.key_path
        server = WebhookServer(validator.review, certfile=certs.cert_path, keyfile=certs.key_path, port=0)
        await server.start()
        try:
            context = ssl.create_default_context(cadata=certs.ca_pem.decode())
            async with httpx.AsyncClient(verify=context, timeout=30) as http:
                hostile = [review(f"h{k}", ingress(900_000 + k, **{"haproxy-haptic.org/balance": "x\ny"}))
                           for k in range(count)]
                start = time.perf_counter()
                for body in hostile:
                    answer = await http.post(server.url, json=body)
                    assert answer.json()["response"]["allowed"] is False
                basic = (time.perf_counter() - start) / count * 1000
                allowed = [review(f"a{k}", ingress(800_000 + k)) for k in range(count // 5)]
                start = time.perf_counter()
                for body in allowed:
                    answer = await http.post(server.url, json=body)
                    assert answer.json()["response"]["allowed"] is True
                full = (time.perf_counter() - start) / len(allowed) * 1000
        finally:
            await server.stop()
    return basic, full


async def main() -> int:
    haproxy = shutil.which("haproxy") or shutil.which("haproxy", path="/usr/sbin")
    if haproxy is None:
        print("haproxy not found: install Debian's haproxy package")
        return 1
    print(f"load average: {os.getloadavg()[0]:.2f}; median of {RUNS} reviews each")
    print(f"{'ingresses':>10} {'allowed ms':>11} {'hostile ms':>11} {'basic-deny ms':>14}")
    small: AdmissionValidator | None = None
    for n in (100, 1000, 3000):
        validator = await build(n, haproxy)
        small = small or validator
        allowed = await timed(validator, [review(f"a{k}", ingress(n + k)) for k in range(RUNS)], True)
        bad_path = [review(f"h{k}", {**ingress(n + k)}) for k in range(RUNS)]
        for body in bad_path:
            body["request"]["object"]["spec"]["rules"][0]["http"]["paths"][0]["path"] = "/x y"
        hostile = await timed(validator, bad_path, False)
        basic = await timed(
            validator, [review(f"b{k}", ingress(n + k, **{"haproxy-haptic.org/balance": "x\ny"})) for k in range(RUNS)],
            False,
        )
        print(f"{n:>10} {allowed:>11.1f} {hostile:>11.1f} {basic:>14.2f}")
    assert small is not None
    basic_ms, full_ms = await over_https(small, 100)
    print(f"HTTPS at 100 Ingresses: {basic_ms:.2f} ms per basic-deny review ({1000 / basic_ms:.0f}/s), "
          f"{full_ms:.1f} ms per allowed review ({1000 / full_ms:.0f}/s)")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
