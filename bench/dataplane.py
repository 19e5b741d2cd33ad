"""Benchmark of the Dataplane sync planner: ``plan()`` on generated configs of growing size.

Prints, for 300 / 3,000 / 10,000 backends of 10 servers each, the time ``plan()`` takes for a
one-server address change (cold: both texts parsed; warm: parses served from plan()'s cache), and
the parse time alone. Targets: 60 / 250 / 1,000 ms cold.
"""

from __future__ import annotations

import statistics
import sys
import time
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


def _measure(fn: object, repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()  # type: ignore[operator]
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


def main() -> int:
    print(f"{'backends':>9} {'lines':>8} {'parse ms':>9} {'plan cold ms':>13} {'plan warm ms':>13} {'target':>7}  ok")
    all_ok = True
    for backends, target in TARGET_MS.items():
        current = generate(backends)
        desired = generate(backends, changed=backends // 2)
        result = plan(current, desired)
        assert len(result.operations) == 1 and not result.reload_required, result
        repeat = 5 if backends < 10_000 else 3

        def cold(current: str = current, desired: str = desired) -> None:
            clear_parse_cache()
            plan(current, desired)

        def warm(current: str = current, desired: str = desired) -> None:
            plan(current, desired)

        parse_ms = _measure(lambda current=current: parse_config(current), repeat)
        cold_ms = _measure(cold, repeat)
        plan(current, desired)
        warm_ms = _measure(warm, repeat)
        ok = cold_ms < target
        all_ok &= ok
        lines = current.count("\n")
        verdict = "yes" if ok else "NO"
        print(f"{backends:>9} {lines:>8} {parse_ms:>9.1f} {cold_ms:>13.1f} {warm_ms:>13.1f} {target:>7.0f}  {verdict}")
    return 0 if all_ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
