"""Fleet fan-out on the simulator (prints figures; asserts nothing).

    python bench/fleet.py [--pods 100] [--ingresses 3000] [--max-parallel 10]

``--pods`` HAProxy pods (fake Dataplane APIs), the Ingress library with ``--ingresses`` Ingresses; once
settled, one new Ingress. Prints how many plans the deployment computed (pods on one configuration
version share one), the most pods synchronized at once (``dataplane.maxParallel`` is ``--max-parallel``;
spans from a pod's first to its last Dataplane request), whether the deployment completed on every pod,
and the CPU of the process for it: total, the fake Dataplane APIs' share, ``haproxy -c``, and the
controller's (the rest; target < 2 s).
"""

from __future__ import annotations

import argparse
import logging
import os
import shutil
from typing import Any

from _meter import children_cpu, cpu, meter_pods
from reconcile import _until_deployed, seed_ingresses

import haptic.dataplane.synchronizer as synchronizer
from haptic.core import VirtualClock
from simulator.cluster_objects import ingress, ingress_library_config
from simulator.harness import Harness


async def bench(pods: int, n: int, max_parallel: int, haproxy: str) -> None:
    config = ingress_library_config(extra_spec={})
    config["spec"]["dataplane"]["maxParallel"] = max_parallel
    h = await Harness(pods=pods, haproxy_binary=haproxy, config=config).start()
    meter = meter_pods(h)
    seed_ingresses(h, n)
    await h.settle()
    plans = 0
    plan_parsed = synchronizer.plan_parsed

    def counted(current: Any, desired: Any) -> Any:
        nonlocal plans
        plans += 1
        return plan_parsed(current, desired)

    synchronizer.plan_parsed = counted  # type: ignore[assignment]
    done = len(h.events("deployment.completed"))
    meter.reset()
    start, child = cpu(), children_cpu()
    h.apply(ingress("ing-new", "new.example", "svc-1"))
    await _until_deployed(h, done)
    total, haproxy_c, fake = cpu() - start, children_cpu() - child, meter.cpu
    completed = h.events("deployment.completed")[-1]
    served = sum("new.example" in (h.stored_file(p, "maps", "hosts.map") or "") for p in range(pods))
    print(f"{pods} pods, {n} Ingresses, maxParallel {max_parallel}, load average {os.getloadavg()[0]:.2f}")
    print(f"one new Ingress: plans computed {plans} for {pods} pods; most pods synchronized at once "
          f"{meter.most_at_once()} (maxParallel {max_parallel}); deployment {getattr(completed, 'succeeded', '?')}"
          f"/{getattr(completed, 'total', '?')} pods succeeded, {served} pods have the new host")
    print(f"fleet fan-out CPU: {total * 1000:.0f} ms total, fake Dataplane APIs {fake * 1000:.0f} ms, haproxy -c "
          f"{haproxy_c * 1000:.0f} ms, controller {(total - fake - haproxy_c) * 1000:.0f} ms (target < 2000 ms)")
    await h.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pods", type=int, default=100)
    parser.add_argument("--ingresses", type=int, default=3000)
    parser.add_argument("--max-parallel", type=int, default=10)
    parser.add_argument("--haproxy", default=shutil.which("haproxy") or "/usr/sbin/haproxy")
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)
    VirtualClock.run(bench(args.pods, args.ingresses, args.max_parallel, args.haproxy))


if __name__ == "__main__":
    main()
