"""Requests per second through real haproxy: the Ingress library's config for 10,000 hosts vs one backend.

    python bench/dataplane_rps.py [--hosts 10000] [--seconds 5] [--connections 32] [--rounds 3]
                                  [--session-requests 100] [--mix sessions|hopping]

Both configs run on the same haproxy binary with ``nbthread 1`` (one core), behind them an upstream
answering 200 itself (so the upstream costs the same in both; a few haproxy processes on the same ports,
so that their file descriptors hold every connection the haproxy under test keeps; the generated
config's endpoints spread over ``UPSTREAM_PORTS`` ports, as 30,000 pods have their own addresses). The
generated config is the library's render of ``--hosts`` Ingresses (one host and path each, its own
Service, 3 endpoints pointed at the upstream), logging off; the one-backend config has the same
``global``/``defaults`` and one frontend sending everything to one backend. The load is ``wrk`` (Debian
package; ``scripts/ensure-tools.sh --bench`` installs it) on loopback with ``--connections`` connections (one wrk
thread each, so each thread's Lua script drives exactly one connection). Best of ``--rounds`` for each
config, alternating. Every answer must be a 200 (a routing mistake would be a 404 from the default
backend): the bench fails otherwise.

The library's ``maxconn`` (50,000) needs ~100,000 file descriptors; the bench lowers it to what this
machine's limit allows. haproxy sizes the pool of idle server connections it keeps for reuse as a share
of those descriptors (``tune.pool-low-fd-ratio`` 20 % / ``tune.pool-high-fd-ratio`` 25 %: ~20,000
connections at the library's ``maxconn``), and past that share it closes each server connection after
its response. So that lowering ``maxconn`` does not also shrink that pool, both configs get the shares
that keep the library's pool size in connections, as far as the descriptors allow
(``idle_pool_ratios``). With 30,000 servers the pool holds each session's connections to its 3 servers,
and for 10-15 s after the session (3 purges of haproxy's 5 s ``pool-purge-delay``) the ones it leaves
behind: ~600 a second at 20,000 requests/s.

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
the CPU time the haproxy under test and the upstream spent per request (less sensitive than requests per
second to other processes on the machine) and the connections the upstream accepted per request.
"""

from __future__ import annotations

import argparse
import itertools
import math
import os
import re
import resource
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


#: upstream ports the generated config's endpoints are spread over: each (address, port) has its own ~28,000
#: local ports for connections to it, and one would not hold the idle pool and the closed connections'
#: TIME_WAIT entries (connect() then searches long for a free local port) as 30,000 pods' addresses would
UPSTREAM_PORTS = 16


def generated(root: Path, hosts: int, port: int, upstream: list[int], haproxy: str) -> str:
    engine, inputs = build(hosts)
    result = engine.render(inputs)
    validator = HAProxyValidator(haproxy)
    for name, content in result.aux.maps.items():
        target = root / validator.dirs.maps_dir.lstrip("/") / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content)
    text = validator.relocate(result.config, root)
    endpoints = itertools.count()
    text = re.sub(r"\b10\.\d+\.\d+\.\d+:8080\b",
                  lambda _: f"127.0.0.1:{upstream[next(endpoints) % len(upstream)]}", text)
    text = text.replace("bind *:8080", f"bind 127.0.0.1:{port}")
    text = re.sub(r"bind \*:(8404|8443)", lambda _: f"bind 127.0.0.1:{free_port()}", text)
    return _one_core(text)


#: haproxy's defaults for the share of its descriptors idle server connections may hold (%): below the
#: low one a connection goes back to the pool after its response, above the high one it is closed
_IDLE_POOL_LOW, _IDLE_POOL_HIGH = 20, 25
#: descriptors left for the listeners, the stats socket and the connections in use
_SPARE_FDS = 200


def fd_limit() -> int:
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def bench_maxconn(library_maxconn: int, fds: int) -> int:
    """The library's maxconn, or less if haproxy could not get the ~2 descriptors per connection it needs."""
    return min(library_maxconn, (fds - _SPARE_FDS) // 2)


def idle_pool_ratios(library_maxconn: int, maxconn: int) -> tuple[int, int]:
    """``tune.pool-low-fd-ratio`` / ``tune.pool-high-fd-ratio`` keeping the idle pool the library's ``maxconn``
    gives (its share of ~2 descriptors per connection) at a lower ``maxconn``, up to 80 % / 90 % of the
    descriptors (the rest for the connections in use). The defaults when ``maxconn`` is the library's."""
    scale = library_maxconn / maxconn
    return min(math.ceil(_IDLE_POOL_LOW * scale), 80), min(math.ceil(_IDLE_POOL_HIGH * scale), 90)


def _one_core(text: str) -> str:
    # no logging (a line per request would be what is measured)
    text = "\n".join(line for line in text.splitlines() if not line.strip().startswith("log stdout"))
    found = re.search(r"^    maxconn (\d+)$", text, flags=re.M)
    if found is None:
        raise RuntimeError("the generated global section has no maxconn any more: update _one_core")
    library = int(found.group(1))
    maxconn = bench_maxconn(library, fd_limit())
    low, high = idle_pool_ratios(library, maxconn)
    text = text.replace(found.group(0), f"    maxconn {maxconn}", 1)
    tuning = f"    nbthread 1\n    tune.pool-low-fd-ratio {low}\n    tune.pool-high-fd-ratio {high}\n"
    return text.replace("global\n", "global\n" + tuning, 1) + "\n"


def frontend_only(generated_text: str, upstream: int) -> str:
    """The generated config with every routed request sent to one backend: the cost of the routing rules."""
    routed = "use_backend %[var(txn.backend)] if { var(txn.backend) -m found }"
    if routed not in generated_text:
        raise RuntimeError(f"the generated frontend has no '{routed}' rule any more: update frontend_only")
    return generated_text.replace(routed, "use_backend one if { var(txn.backend) -m found }") + (
        f"\nbackend one\n    mode http\n    server s1 127.0.0.1:{upstream}\n")


def single(generated_text: str, port: int, upstream: int) -> str:
    """The generated ``global``/``defaults`` (the same tuning) and one frontend sending everything to one backend."""
    head = generated_text.split("\nfrontend ", 1)[0]
    return head + (f"\nfrontend http\n    bind 127.0.0.1:{port}\n    default_backend one\n\nbackend one\n"
                   f"    mode http\n    server s1 127.0.0.1:{upstream}\n")


def upstream_processes(idle_connections: int, fds: int) -> int:
    """Upstream haproxy processes (one port: the kernel spreads connections over their listeners) whose
    descriptors hold the ``idle_connections`` the haproxy under test may keep, and the ones in use: no more
    (each process more spreads the same requests thinner, over more wake-ups)."""
    return max(1, math.ceil((idle_connections + _SPARE_FDS) / max((fds - _SPARE_FDS) // 2, 1)))


def upstream_config(ports: list[int], stats: Path) -> str:
    binds = "".join(f"    bind 127.0.0.1:{port}\n" for port in ports)
    return (f"global\n    nbthread 1\n    stats socket {stats}\n\n"
            f"defaults\n    mode http\n    timeout connect 5s\n    timeout client 50s\n"
            f"    timeout server 50s\n\nfrontend up\n{binds}"
            f"    http-request return status 200 content-type text/plain string ok\n")


def start(haproxy: str, path: Path, port: int, ready: Path | None = None) -> subprocess.Popen[bytes]:
    """haproxy on ``path``, once it accepts on ``port`` (or on the unix socket ``ready``)."""
    process = subprocess.Popen([haproxy, "-db", "-f", str(path)], stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, start_new_session=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            said = process.stderr.read().decode() if process.stderr else ""
            raise RuntimeError(f"haproxy {path.name} exited: {said}")
        try:
            if ready is None:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            else:
                with socket.socket(socket.AF_UNIX) as unix:
                    unix.connect(str(ready))
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
class Upstream:
    """The upstream haproxy processes: their pids and stats sockets."""

    pids: list[int]
    stats: list[Path]

    def cpu(self) -> float:
        return sum(cpu_seconds(pid) for pid in self.pids)

    def accepted(self) -> int:
        return sum(accepted_connections(path) for path in self.stats)


@dataclass
class Run:
    rps: float
    non2xx: str
    cpu_us_per_request: float
    upstream_connections_per_request: float
    upstream_cpu_us_per_request: float


def wrk(port: int, script: Path, seconds: int, connections: int, pid: int, upstream: Upstream) -> Run:
    cpu, up_cpu, accepted = cpu_seconds(pid), upstream.cpu(), upstream.accepted()
    out = subprocess.run(["wrk", f"-t{connections}", f"-c{connections}", f"-d{seconds}s", "-s", str(script),
                          f"http://127.0.0.1:{port}/"], capture_output=True, text=True, check=True).stdout
    cpu, up_cpu, accepted = cpu_seconds(pid) - cpu, upstream.cpu() - up_cpu, upstream.accepted() - accepted
    rps = re.search(r"Requests/sec:\s+([\d.]+)", out)
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    requests = re.search(r"(\d+) requests in", out)
    count = max(int(requests.group(1)) if requests else 0, 1)
    return Run(float(rps.group(1)) if rps else 0.0, non2xx.group(1) if non2xx else "0",
               cpu * 1e6 / count, accepted / count, up_cpu * 1e6 / count)


def measure(root: Path, configs: list[str], script: Path, args: argparse.Namespace, port: int,
            upstream: Upstream) -> dict[str, Run]:
    best: dict[str, Run] = {}
    for _ in range(args.rounds):
        for name in configs:
            process = start(args.haproxy, root / f"{name}.cfg", port)
            try:
                run = wrk(port, script, args.seconds, args.connections, process.pid, upstream)
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
        print(f"  {mix}, {label}: {r.rps:.0f} rps, {r.cpu_us_per_request:.1f} us haproxy CPU per request "
              f"(upstream {r.upstream_cpu_us_per_request:.1f}), "
              f"{r.upstream_connections_per_request:.3f} upstream connections per request")
    single_rps = max(best["single"].rps, 1e-9)
    print(f"ratio {named}: {best['routing'].rps / single_rps:.2f}" + (" (target >= 0.8)" if mix == "sessions" else ""))
    print(f"ratio {mix}_routing_rules_{hosts}_hosts_over_single_backend: {best['frontend'].rps / single_rps:.2f} "
          "(the frontend's rules and lookups alone)")
    print(f"ratio {mix}_single_backend_cpu_over_routing_{hosts}_hosts_cpu: "
          f"{best['single'].cpu_us_per_request / max(best['routing'].cpu_us_per_request, 1e-9):.2f} "
          "(haproxy CPU per request; requests per second also count wrk and the upstream)")


def idle_pool_size(text: str) -> int:
    """The idle server connections the config lets haproxy keep: its high share of ~2 descriptors per maxconn."""
    maxconn = re.search(r"^    maxconn (\d+)$", text, flags=re.M)
    high = re.search(r"^    tune\.pool-high-fd-ratio (\d+)$", text, flags=re.M)
    return 2 * int(maxconn.group(1)) * int(high.group(1)) // 100 if maxconn and high else 0


def tuning(text: str) -> str:
    global_section = text.split("\n\n", 1)[0]
    return ", ".join(line.strip() for line in global_section.splitlines()
                     if line.strip().startswith(("maxconn", "tune.pool-")))


def start_upstreams(haproxy: str, root: Path, ports: list[int],
                    idle_connections: int) -> list[subprocess.Popen[bytes]]:
    started: list[subprocess.Popen[bytes]] = []
    try:
        for i in range(upstream_processes(idle_connections, fd_limit())):
            (root / f"up{i}.cfg").write_text(upstream_config(ports, root / f"up{i}.sock"))
            # the ports answer once the first one listens: the others are ready when their stats socket is
            started.append(start(haproxy, root / f"up{i}.cfg", ports[0], ready=root / f"up{i}.sock"))
    except BaseException:
        for process in started:
            process.terminate()
            process.wait()
        raise
    return started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hosts", type=int, default=10000)
    parser.add_argument("--seconds", type=int, default=5)
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--session-requests", type=int, default=100)
    parser.add_argument("--mix", choices=sorted(LUA), action="append",
                        help="only this client model (repeatable; default: both)")
    parser.add_argument("--haproxy", default=shutil.which("haproxy") or "/usr/sbin/haproxy")
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        print("dataplane_rps: skipped, no wrk (scripts/ensure-tools.sh --bench installs it)")
        return 0
    results: dict[str, dict[str, Run]] = {}
    with tempfile.TemporaryDirectory(prefix="haptic-rps-") as tmp:
        root = Path(tmp)
        ups, port = [free_port() for _ in range(UPSTREAM_PORTS)], free_port()
        up = ups[0]
        text = generated(root, args.hosts, port, ups, args.haproxy)
        configs = {"routing": text, "frontend": frontend_only(text, up), "single": single(text, port, up)}
        for name, content in configs.items():
            (root / f"{name}.cfg").write_text(content)
        upstreams = start_upstreams(args.haproxy, root, ups, idle_pool_size(text))
        upstream = Upstream([p.pid for p in upstreams], [root / f"up{i}.sock" for i in range(len(upstreams))])
        try:
            for mix, lua in LUA.items():
                if args.mix and mix not in args.mix:
                    continue
                script = root / f"{mix}.lua"
                script.write_text(lua.format(hosts=args.hosts, per=args.session_requests))
                results[mix] = measure(root, list(configs), script, args, port, upstream)
        finally:
            for process in upstreams:
                process.terminate()
                process.wait()
    print(f"data plane, haproxy nbthread 1, wrk {args.connections} connections (a thread each), {args.seconds} s, "
          f"best of {args.rounds}, load average {os.getloadavg()[0]:.2f}; both configs: {tuning(text)}; "
          f"{len(upstreams)} upstream processes:")
    if "sessions" in results:
        report("sessions", results["sessions"], args.hosts, f"routing_{args.hosts}_hosts_over_single_backend")
        print(f"  (sessions: {args.session_requests} requests per client connection, to one host; hopping: "
              "every request to another host)")
    if "hopping" in results:
        report("hopping", results["hopping"], args.hosts, f"hopping_routing_{args.hosts}_hosts_over_single_backend")
    return 0


if __name__ == "__main__":
    sys.exit(main())
