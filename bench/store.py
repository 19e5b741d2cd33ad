"""Throughput of ResourceStore with 10,000 Ingress-like objects: apply, update, fetch, list, remove.

Prints figures; asserts nothing about time. Run: ``.venv/bin/python bench/store.py``.
"""

from __future__ import annotations

import time
from typing import Any

from haptic.k8s.store import ResourceStore

N = 10_000


def ingress(i: int, generation: int = 1) -> dict[str, Any]:
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "Ingress",
        "metadata": {
            "name": f"ing-{i}",
            "namespace": f"ns-{i % 100}",
            "generation": generation,
            "labels": {"app": f"app-{i % 50}", "kubernetes.io/service-name": f"svc-{i}"},
            "managedFields": [{"manager": "kubectl", "operation": "Update", "fieldsV1": {"f:spec": {}}}],
        },
        "spec": {
            "ingressClassName": "haproxy" if i % 10 else "nginx",
            "rules": [
                {
                    "host": f"host-{i}.example.com",
                    "http": {
                        "paths": [
                            {
                                "path": "/",
                                "pathType": "Prefix",
                                "backend": {"service": {"name": f"svc-{i}", "port": {"number": 80}}},
                            }
                        ]
                    },
                }
            ],
        },
    }


def rate(count: int, seconds: float) -> str:
    return f"{count / seconds:>12,.0f} ops/s  ({seconds * 1000:8.1f} ms for {count:,})"


def main() -> None:
    objs = [ingress(i) for i in range(N)]
    updates = [ingress(i, 2) for i in range(N)]
    store = ResourceStore(
        "ingresses",
        ["metadata.namespace", "metadata.name"],
        field_selector="spec.ingressClassName=haproxy",
        ignore_fields=["metadata.managedFields"],
    )
    by_host = ResourceStore("ingresses-by-host", ["spec.rules[*].host"])

    t = time.perf_counter()
    for obj in objs:
        store.apply(obj)
    print("apply (new, selector+strip, 2 keys)  ", rate(N, time.perf_counter() - t))

    t = time.perf_counter()
    for obj in objs:
        store.apply(obj)
    print("apply (unchanged)                    ", rate(N, time.perf_counter() - t))

    t = time.perf_counter()
    for obj in updates:
        store.apply(obj)
    print("apply (modified)                     ", rate(N, time.perf_counter() - t))

    t = time.perf_counter()
    for obj in objs:
        by_host.apply(obj)
    print("apply (new, wildcard key)            ", rate(N, time.perf_counter() - t))

    t = time.perf_counter()
    for i in range(N):
        store.fetch(f"ns-{i % 100}", f"ing-{i}")
    print("fetch exact (ns, name)               ", rate(N, time.perf_counter() - t))

    t = time.perf_counter()
    for i in range(N):
        store.fetch(f"ns-{i % 100}")
    print("fetch prefix (ns, ~90 results)       ", rate(N, time.perf_counter() - t))

    t = time.perf_counter()
    for i in range(N):
        by_host.get_single(f"host-{i}.example.com")
    print("get_single by host                   ", rate(N, time.perf_counter() - t))

    t = time.perf_counter()
    for _ in range(100):
        store.list()
    print("list (all, cached)                   ", rate(100, time.perf_counter() - t))

    t = time.perf_counter()
    for obj in objs:
        store.remove(obj)
    print("remove                               ", rate(N, time.perf_counter() - t))
    print(f"stored after remove: {len(store)}; by-host store: {len(by_host)} objects")


if __name__ == "__main__":
    main()
