"""Benchmark of the Dataplane sync planner: ``plan()`` on generated configs of growing size.

Prints, for 300 / 3,000 / 10,000 backends of 10 servers each, the time ``plan()`` takes for a
one-server address change (cold: parse cache cleared, so the desired text is parsed in full and the
current one reusing its unchanged sections; warm: both parses served from plan()'s cache), and a
full parse alone. Targets (median wall, cold): 60 / 250 / 1,000 ms. CPU time is printed too because
wall time inflates on a shared machine.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from haptic.dataplane import parse_config, plan
from haptic.dataplane.planner import clear_parse_cache

TARGET_MS = {300: 60.0, 3_000: 250.0, 10_000: 1_000.0}
SERVERS = 10


def generate(backends: int, changed: int | None = None) -> str:
    """A realistic ingress-style config; ``changed`` moves server 5 of that backend elsewhere."""
    out = [
        "global",
        "  daemon",
        "  maxconn 100000",
        "  log stdout format raw local0",
        "",
        "defaults",
        "  mode http",
        "  log global",
        "  option httplog",
        "  timeout connect 5s",
        "  timeout client 30s",
        "  timeout server 30s",
        "",
        "frontend http",
        "  bind :80 name http",
        "  http-request set-header X-Forwarded-Proto http",
    ]
    for b in range(backends):
        out.append(f"  use_backend ns_svc{b}_80 if {{ req.hdr(host) -i svc{b}.example.com }}")
    for b in range(backends):
        out += [
            "",
            f"backend ns_svc{b}_80",
            "  balance roundrobin",
            "  option httpchk GET /healthz",
            "  default-server check inter 2s",
        ]
        for s in range(SERVERS):
            address = f"10.{b // 250 % 250}.{b % 250}.{s + 1}"
            if changed == b and s == 5:
                address = "10.250.250.250"
            out.append(f"  server SRV_{s + 1} {address}:8080 weight 1")
    return "\n".join(out) + "\n"


def _measure(fn: Callable[[], object], repeat: int) -> tuple[float, float, float]:
    """Median wall ms, best wall ms and best CPU ms over ``repeat`` runs."""
    wall: list[float] = []
    cpu: list[float] = []
    for _ in range(repeat):
        start, start_cpu = time.perf_counter(), time.process_time()
        fn()
        wall.append((time.perf_counter() - start) * 1000)
        cpu.append((time.process_time() - start_cpu) * 1000)
    return statistics.median(wall), min(wall), min(cpu)


def main() -> int:
    print("plan() for a one-server address change; ms as median wall / best wall / best CPU")
    print(f"{'backends':>9} {'lines':>8} {'parse (full)':>22} {'plan cold':>22} {'plan warm':>18} {'target':>7}  ok")
    for backends, target in TARGET_MS.items():
        current = generate(backends)
        desired = generate(backends, changed=backends // 2)
        result = plan(current, desired)
        assert len(result.operations) == 1 and not result.reload_required, result
        repeat = 7 if backends < 10_000 else 5

        def cold(current: str = current, desired: str = desired) -> None:
            clear_parse_cache()
            plan(current, desired)

        def warm(current: str = current, desired: str = desired) -> None:
            plan(current, desired)

        def parse(text: str = current) -> None:
            parse_config(text)

        parse_ms = _measure(parse, repeat)
        cold_ms = _measure(cold, repeat)
        plan(current, desired)
        warm_ms = _measure(warm, repeat)
        ok = cold_ms[0] < target
        lines = current.count("\n")
        verdict = "yes" if ok else "NO"
        print(
            f"{backends:>9} {lines:>8} {_fmt(parse_ms):>22} {_fmt(cold_ms):>22} {_fmt(warm_ms[:2]):>18}"
            f" {target:>7.0f}  {verdict}"
        )
    # Figures are reported, never asserted: a loaded machine must not fail `make bench`.
    return 0


def _fmt(values: tuple[float, ...]) -> str:
    return " / ".join(f"{v:.1f}" for v in values)


if __name__ == "__main__":
    raise SystemExit(main())
