"""The controller alone, in its own process, at many Ingresses: peak resident memory (prints it; asserts nothing).

    python bench/controller_memory.py [--ingresses 10000]

The local tier: the fake Kubernetes API over HTTP, one real haproxy pod with its fake Dataplane API, and
``haptic run`` as a subprocess with the Ingress library; ``--ingresses`` Ingresses (one Service per ten,
each with an EndpointSlice) exist before it starts. Once the pod has the last Ingress's host, prints the
controller's peak RSS (``VmHWM`` of its process; target < 300 MiB at 10,000) and the time it took; then changes
one Service's endpoints ``--changes`` times (each waited for on the pod) and prints the RSS after them: a
controller that kept its rendered configs (4 MB each at 10,000 Ingresses) grows with every change.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from pathlib import Path

from simulator.local import LocalStack, StackOptions, objects


def _status(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])  # kB
    raise RuntimeError(f"{field} not in /proc/{pid}/status")


async def _churn(stack: LocalStack, changes: int, limit: float) -> bool:
    """``changes`` EndpointSlice changes of one Service, each until the pod's config has the new address."""
    fake = stack.pods[0].fake
    for k in range(changes):
        address = f"127.1.0.{200 + k % 2}"
        stack.apply(objects.endpoint_slice("svc0", "bench", [address], stack.echo_port))
        started = time.perf_counter()
        while f" {address}:" not in fake.raw():
            if time.perf_counter() - started > limit:
                print(f"bench: endpoint change {k + 1} never reached the pod")
                return False
            await asyncio.sleep(0.05)
    return True


async def main(n: int, limit: float, changes: int) -> int:
    stack = LocalStack(StackOptions(pods=1, start_controller=False, log_level="warning"))
    async with stack:
        stack.apply(objects.namespace("bench"))
        services = max(1, n // 10)
        for s in range(services):
            stack.apply(objects.service(f"svc{s}", "bench"))
            stack.apply(objects.endpoint_slice(f"svc{s}", "bench", [f"127.1.{s // 250}.{s % 250 + 1}"],
                                               stack.echo_port))
        last = f"app{n - 1}.bench.test"
        for i in range(n):
            stack.apply(objects.ingress(f"app{i}", "bench", f"app{i}.bench.test", f"svc{i % services}"))
        started = time.perf_counter()
        process = await stack.start_controller()
        assert process.process is not None
        pid = process.process.pid
        def served() -> bool:
            stored = stack.pods[0].fake.storage.get("maps", "hosts.map")
            return stored is not None and last in stored.content

        while not served():
            if not process.running:
                print("\n".join(list(process.lines)[-20:]))
                return 1
            if time.perf_counter() - started > limit:
                print("bench: the pod never got the last Ingress; the controller's last lines:")
                print("\n".join(list(process.lines)[-20:]))
                return 1
            await asyncio.sleep(0.5)
        took = time.perf_counter() - started
        await asyncio.sleep(2.0)  # what follows the first deployment (status updates) counts too
        peak, now = _status(pid, "VmHWM") / 1024, _status(pid, "VmRSS") / 1024
        if not await _churn(stack, changes, limit):
            return 1
        await asyncio.sleep(2.0)
        churned, churn_peak = _status(pid, "VmRSS") / 1024, _status(pid, "VmHWM") / 1024
    print(f"controller alone (haptic run), {n} Ingresses, {services} Services: peak RSS {peak:.0f} MiB, "
          f"RSS after the first deployment {now:.0f} MiB (target peak < 300 MiB); start -> pod has every host "
          f"{took:.1f} s wall, load average {os.getloadavg()[0]:.2f}")
    print(f"after {changes} endpoint changes: RSS {churned:.0f} MiB, peak {churn_peak:.0f} MiB")
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ingresses", type=int, default=10000)
    parser.add_argument("--limit", type=float, default=600.0, help="seconds to wait for the deployment")
    parser.add_argument("--changes", type=int, default=40, help="endpoint changes after the first deployment")
    args = parser.parse_args()
    sys.exit(asyncio.run(main(args.ingresses, args.limit, args.changes)))
