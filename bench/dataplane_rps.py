"""Requests per second through real haproxy: the Ingress library's config for 10,000 hosts vs one backend.

    python bench/dataplane_rps.py [--hosts 10000] [--seconds 5] [--connections 32] [--rounds 3]
                                  [--session-requests 100]

Both configs run on the same haproxy binary with ``nbthread 1`` (one core), behind them one upstream
haproxy answering 200 itself (so the upstream costs the same in both). The generated config is the
library's render of ``--hosts`` Ingresses (one host and path each, its own Service, 3 endpoints pointed
at the upstream), logging off; the one-backend config has the same ``global``/``defaults`` and one
frontend sending everything to one backend. The load is ``wrk`` (Debian package; ``scripts/ensure-tools.sh
--bench`` installs it) on loopback with ``--connections`` connections (one wrk thread each, so each
thread's Lua script drives exactly one connection). Best of ``--rounds`` for each config, alternating.
Every answer must be a 200 (a routing mistake would be a 404 from the default backend): the bench fails
otherwise.

Two client models, the same requests for every config:

* ``sessions`` (the ratio named ``routing_10000_hosts_over_single_backend``, target >= 0.8): a client
  connection talks to one host, as HTTP clients do (a connection belongs to one origin). Each
  connection sends ``--session-requests`` requests (100: Apache's ``MaxKeepAliveRequests`` default, and
  nginx's ``keepalive_requests`` before 1.19.10) to one host and path, the last with ``Connection:
  close``, then reconnects for another host drawn at random (seeded per connection) from all of them.
* ``hopping``: every request on a connection goes to another host (a fixed stride over all of them), as
  from a proxy in front of haproxy that pools its connections across hosts. With 30,000 servers each
  request then finds no idle upstream connection to its server and opens one (haproxy keeps idle
  connections per server, at most ``tune.pool-high-fd-ratio`` of its file descriptors): that ratio
  shows the cost of upstream connection set-up, not of routing.

Where the difference goes: a third config, ``frontend``, is the generated one whose routed requests all go
to one backend (the frontend's rules and map lookups, without 10,000 backends behind them); for each config
the CPU time the haproxy under test spent per request (less sensitive than requests per second to other
processes on the machine) and the connections the upstream accepted per request.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from render import build

from haptic.validation.haproxy_check import HAProxyValidator

# One Lua state per wrk thread and one connection per thread: `id` comes from setup().
_COMMON_LUA = """
local n, per = {hosts}, {per}
local count = 0
function setup(thread)
  thread:set("id", count)
  count = count + 1
end
local function ask(k, close)
  local headers = {{Host = "app" .. k .. ".example.test"}}
  if close then headers["Connection"] = "close" end
  return wrk.format("GET", "/p" .. k .. "/x", headers)
end
"""

LUA = {
    "sessions": _COMMON_LUA + """
local sent, k = 0, 0
function init(args)
  math.randomseed(7919 + id)
  k = math.random(0, n - 1)
end
request = function()
  sent = sent + 1
  if sent % per ~= 0 then return ask(k, false) end
  local last = ask(k, true)
  k = math.random(0, n - 1)
  return last
end
""",
    "hopping": _COMMON_LUA + """
local i = 0
request = function()
  i = i + 1
  return ask((i * 7919 + id * 104729) % n, false)
end
""",
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def generated(root: Path, hosts: int, port: int, upstream: int, haproxy: str) -> str:
    engine, inputs = build(hosts)
    result = engine.render(inputs)
    validator = HAProxyValidator(haproxy)
    for name, content in result.aux.maps.items():
        target = root / validator.dirs.maps_dir.lstrip("/") / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content)
    text = validator.relocate(result.config, root)
    text = re.sub(r"\b10\.\d+\.\d+\.\d+:8080\b", f"127.0.0.1:{upstream}", text)
    text = text.replace("bind *:8080", f"bind 127.0.0.1:{port}")
    text = re.sub(r"bind \*:(8404|8443)", lambda _: f"bind 127.0.0.1:{free_port()}", text)
    return _one_core(text)


def _one_core(text: str) -> str:
    # no logging (a line per request would be what is measured); maxconn within this machine's FD limit
    text = "\n".join(line for line in text.splitlines() if not line.strip().startswith("log stdout"))
    text = re.sub(r"^    maxconn \d+$", "    maxconn 4096", text, flags=re.M)
    return text.replace("global\n", "global\n    nbthread 1\n", 1) + "\n"


def frontend_only(generated_text: str, upstream: int) -> str:
    """The generated config with every routed request sent to one backend: the cost of the routing rules."""
    routed = "use_backend %[var(txn.backend)] if { var(txn.backend) -m found }"
    if routed not in generated_text:
        raise RuntimeError(f"the generated frontend has no '{routed}' rule any more: update frontend_only")
    return generated_text.replace(routed, "use_backend one if { var(txn.backend) -m found }") + (
        f"\nbackend one\n    mode http\n    server s1 127.0.0.1:{upstream}\n")


def single(generated_text: str, port: int, upstream: int) -> str:
    head = generated_text.split("\nfrontend ", 1)[0]
    return head + (f"\nfrontend http\n    bind 127.0.0.1:{port}\n    default_backend one\n\nbackend one\n"
                   f"    mode http\n    server s1 127.0.0.1:{upstream}\n")


def upstream_config(port: int, stats: Path) -> str:
    return (f"global\n    nbthread 1\n    stats socket {stats}\n\n"
            f"defaults\n    mode http\n    timeout connect 5s\n    timeout client 50s\n"
            f"    timeout server 50s\n\nfrontend up\n    bind 127.0.0.1:{port}\n"
            f"    http-request return status 200 content-type text/plain string ok\n")


def start(haproxy: str, path: Path, port: int) -> subprocess.Popen[bytes]:
    process = subprocess.Popen([haproxy, "-db", "-f", str(path)], stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, start_new_session=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            said = process.stderr.read().decode() if process.stderr else ""
            raise RuntimeError(f"haproxy {path.name} exited: {said}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return process
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"haproxy {path.name} did not listen on {port}")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def accepted_connections(stats: Path) -> int:
    with socket.socket(socket.AF_UNIX) as s:
        s.connect(str(stats))
        s.sendall(b"show info\n")
        info = b"".join(iter(lambda: s.recv(65536), b"")).decode()
    found = re.search(r"^CumConns: (\d+)$", info, flags=re.M)
    return int(found.group(1)) if found else 0


@dataclass
class Run:
    rps: float
    non2xx: str
    cpu_us_per_request: float
    upstream_connections_per_request: float


def wrk(port: int, script: Path, seconds: int, connections: int, pid: int, stats: Path) -> Run:
    cpu, accepted = cpu_seconds(pid), accepted_connections(stats)
    out = subprocess.run(["wrk", f"-t{connections}", f"-c{connections}", f"-d{seconds}s", "-s", str(script),
                          f"http://127.0.0.1:{port}/"], capture_output=True, text=True, check=True).stdout
    cpu, accepted = cpu_seconds(pid) - cpu, accepted_connections(stats) - accepted
    rps = re.search(r"Requests/sec:\s+([\d.]+)", out)
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    requests = re.search(r"(\d+) requests in", out)
    count = max(int(requests.group(1)) if requests else 0, 1)
    return Run(float(rps.group(1)) if rps else 0.0, non2xx.group(1) if non2xx else "0",
               cpu * 1e6 / count, accepted / count)


def measure(root: Path, configs: list[str], script: Path, args: argparse.Namespace, port: int,
            stats: Path) -> dict[str, Run]:
    best: dict[str, Run] = {}
    for _ in range(args.rounds):
        for name in configs:
            process = start(args.haproxy, root / f"{name}.cfg", port)
            try:
                run = wrk(port, script, args.seconds, args.connections, process.pid, stats)
            finally:
                process.terminate()
                process.wait()
            if run.non2xx != "0":
                raise RuntimeError(f"{name} config with {script.stem}: {run.non2xx} answers were not 200")
            if name not in best or run.rps > best[name].rps:
                best[name] = run
    return best


def report(mix: str, best: dict[str, Run], hosts: int, named: str) -> None:
    for name, label in (("routing", f"{hosts} hosts"), ("frontend", f"{hosts} hosts' rules, one backend"),
                        ("single", "one backend")):
        r = best[name]
        print(f"  {mix}, {label}: {r.rps:.0f} rps, {r.cpu_us_per_request:.1f} us haproxy CPU per request, "
              f"{r.upstream_connections_per_request:.2f} upstream connections per request")
    single_rps = max(best["single"].rps, 1e-9)
    print(f"ratio {named}: {best['routing'].rps / single_rps:.2f}" + (" (target >= 0.8)" if mix == "sessions" else ""))
    print(f"ratio {mix}_routing_rules_{hosts}_hosts_over_single_backend: {best['frontend'].rps / single_rps:.2f} "
          "(the frontend's rules and lookups alone)")
    print(f"ratio {mix}_single_backend_cpu_over_routing_{hosts}_hosts_cpu: "
          f"{best['single'].cpu_us_per_request / max(best['routing'].cpu_us_per_request, 1e-9):.2f} "
          "(haproxy CPU per request; requests per second also count wrk and the upstream)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hosts", type=int, default=10000)
    parser.add_argument("--seconds", type=int, default=5)
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--session-requests", type=int, default=100)
    parser.add_argument("--haproxy", default=shutil.which("haproxy") or "/usr/sbin/haproxy")
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        print("dataplane_rps: skipped, no wrk (scripts/ensure-tools.sh --bench installs it)")
        return 0
    results: dict[str, dict[str, Run]] = {}
    with tempfile.TemporaryDirectory(prefix="haptic-rps-") as tmp:
        root = Path(tmp)
        up, port = free_port(), free_port()
        text = generated(root, args.hosts, port, up, args.haproxy)
        configs = {"routing": text, "frontend": frontend_only(text, up), "single": single(text, port, up)}
        for name, content in configs.items():
            (root / f"{name}.cfg").write_text(content)
        stats = root / "up.sock"
        (root / "up.cfg").write_text(upstream_config(up, stats))
        upstream = start(args.haproxy, root / "up.cfg", up)
        try:
            for mix, lua in LUA.items():
                script = root / f"{mix}.lua"
                script.write_text(lua.format(hosts=args.hosts, per=args.session_requests))
                results[mix] = measure(root, list(configs), script, args, port, stats)
        finally:
            upstream.terminate()
            upstream.wait()
    print(f"data plane, haproxy nbthread 1, wrk {args.connections} connections (a thread each), {args.seconds} s, "
          f"best of {args.rounds}, load average {os.getloadavg()[0]:.2f}:")
    report("sessions", results["sessions"], args.hosts, f"routing_{args.hosts}_hosts_over_single_backend")
    print(f"  (sessions: {args.session_requests} requests per client connection, to one host; hopping: every "
          "request to another host)")
    report("hopping", results["hopping"], args.hosts, f"hopping_routing_{args.hosts}_hosts_over_single_backend")
    return 0


if __name__ == "__main__":
    sys.exit(main())
