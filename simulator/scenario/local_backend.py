"""The ``local`` backend: the scenario port over ``simulator.local.LocalStack`` (wall clock).

The fake Kubernetes API is served over HTTP, each HAProxy pod is a fake Dataplane API driving a
real ``haproxy`` on its own ``127.a.b.c`` address, and every controller replica is a ``haptic run``
subprocess (several replicas elect a leader through a Lease, as in a cluster).

What a scenario file says is adapted, never rewritten by hand:

- the ``HAProxyTemplateConfig`` gets the stack's pod selector, Dataplane port and credentials
  Secret (the pods are the stack's); wildcard ``bind``s already land on each pod's own address;
- endpoint addresses are promoted to echo servers: each ``address:port`` of an EndpointSlice
  becomes an ``EchoServer`` on a loopback address (its name is the original address, which is what
  ``traffic.backend`` compares with), and what the backend shows (deployed/published config) is
  translated back, so that the same ``contains``/``equals_file`` expectations hold on ``sim`` and
  ``local``. No address outside loopback is ever contacted.

Time is the wall clock. ``advance(s)`` sleeps ``s * scale`` seconds (``HAPTIC_LOCAL_TIME_SCALE``,
default 1: the controller's own timers are real, so a smaller scale only shortens the runner's
waits). A scenario whose steps advance more than ``HAPTIC_LOCAL_MAX_ADVANCE`` seconds in total
(default 120) is reported as unavailable on ``local`` ("too slow"); a scenario can also say so
itself by leaving ``local`` out of its ``backends``.

Events: each replica's domain events are polled from its debug server (``/debug/events``, the
controller's ring of recent events) and appended to the trace as ``controller-<i>`` records, with
the time of the event relative to the start. The leader's rendered config is not observable: the
published ``HAProxyCfg`` stands for it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shutil
from collections.abc import Awaitable, Callable, Mapping, Sequence
from copy import deepcopy
from datetime import datetime
from typing import Any, TypeVar

import httpx

from haptic.k8s.api import JSON, NotFound
from simulator.local.echo import EchoServer
from simulator.local.pod import POD_LABELS
from simulator.local.stack import LocalStack, StackOptions
from simulator.local.traffic import probe

from . import dataplane_faults
from .backend import (
    KIND_API_VERSIONS,
    BackendSetup,
    BackendUnavailable,
    NotApplicable,
    ObjectKey,
    TraceRecord,
    TrafficResult,
)
from .backend_capabilities import local_max_advance
from .schema import FaultSpec, TrafficExpectation

T = TypeVar("T")

_WILDCARD_PORT = re.compile(r"^[ \t]*bind[ \t]+(?:\*|0\.0\.0\.0|\[::\]|::)?:(\d+)", re.MULTILINE)


def time_scale() -> float:
    return float(os.environ.get("HAPTIC_LOCAL_TIME_SCALE", "1"))


def max_advance() -> float:
    return local_max_advance()


def adapt_config(config: Mapping[str, Any], *, dataplane_port: int, secret_name: str) -> JSON:
    """The scenario's HAProxyTemplateConfig pointed at the stack's pods and credentials."""
    adapted: JSON = deepcopy(dict(config))
    spec = adapted.setdefault("spec", {})
    spec["podSelector"] = {"matchLabels": dict(POD_LABELS)}
    spec.setdefault("dataplane", {})["port"] = dataplane_port
    spec["credentialsSecretRef"] = {**(spec.get("credentialsSecretRef") or {}), "name": secret_name}
    return adapted


class AddressMap:
    """Endpoint ``address:port`` pairs of the scenario <-> echo servers on loopback."""

    def __init__(self) -> None:
        self.echoes: dict[tuple[str, int], EchoServer] = {}
        self._back: list[tuple[re.Pattern[str], str]] = []

    def add(self, address: str, port: int, echo: EchoServer) -> None:
        self.echoes[(address, port)] = echo
        pattern = re.compile(rf"(?<![\d.]){re.escape(echo.host)}:{echo.port}(?!\d)")
        self._back.append((pattern, f"{address}:{port}"))

    def to_scenario(self, text: str) -> str:
        for pattern, original in self._back:
            text = pattern.sub(original, text)
        return text

    def name_of(self, echo_name: str) -> str:
        return echo_name


def slice_pairs(obj: Mapping[str, Any]) -> list[tuple[str, int]]:
    """The ``address:port`` pairs an EndpointSlice names (every port for every address)."""
    ports = [int(p["port"]) for p in obj.get("ports") or [] if p.get("port") is not None] or [80]
    return [(str(a), port) for ep in obj.get("endpoints") or [] for a in ep.get("addresses") or []
            for port in ports]


_EVENT_POLL = 0.25
_FIRST_LEADER_WAIT = 30.0
_EVENT_LIMIT = 1000
_ENVELOPE = ("event_id", "timestamp", "correlation_id", "causation_id")


class LocalBackend:
    #: the runner reports ``events`` expectations not applicable when a backend has no event trace
    observes_events = True

    def __init__(self, haproxy_binary: str) -> None:
        self.haproxy_binary = haproxy_binary
        self.stack: LocalStack | None = None
        self.addresses = AddressMap()
        self._t0 = 0.0
        self._records: list[TraceRecord] = []
        self._timers: list[asyncio.TimerHandle] = []
        self._tasks: set[asyncio.Task[Any]] = set()
        self._killed: list[int] = []
        self._advanced = 0.0
        self._namespace = "haptic"
        self._wall0 = 0.0
        self._seen: set[tuple[int, str]] = set()
        self._poller: asyncio.Task[None] | None = None
        self._client: httpx.AsyncClient | None = None
        self._arming = dataplane_faults.Arming()
        self._clears: dict[tuple[str, str], Callable[[], object]] = {}

    @property
    def s(self) -> LocalStack:
        if self.stack is None:
            raise RuntimeError("the local backend is not started")
        return self.stack

    # -- lifecycle --------------------------------------------------------------------------------

    async def start(self, setup: BackendSetup) -> None:
        loop = asyncio.get_running_loop()
        self._t0 = loop.time()
        self._wall0 = datetime.now().timestamp()  # events carry wall timestamps; the trace shows seconds since start
        meta = setup.config.get("metadata") or {}
        self._namespace = str(meta.get("namespace") or "haptic")
        ref = ((setup.config.get("spec") or {}).get("credentialsSecretRef") or {}).get("name")
        options = StackOptions(pods=setup.pods, replicas=setup.replicas, haproxy_bin=self.haproxy_binary,
                               namespace=self._namespace, config_name=str(meta.get("name") or "haproxy-config"),
                               secret_name=str(ref or "haproxy-credentials"), start_controller=False,
                               log_level="info")
        # the block is chosen at random (not from the scenario seed): parallel runs must not share addresses
        self.stack = LocalStack(options)
        await self.stack.start()
        stack = self.stack
        stack.options.template_config = adapt_config(setup.config, dataplane_port=stack.dataplane_port,
                                                     secret_name=options.secret_name)
        stack.apply(stack.template_config())
        await self.apply(setup.objects)
        await stack.start_controller(0)
        if setup.replicas > 1:
            # as on sim, replica 0 leads first: the others start once it holds the Lease (a race otherwise)
            deadline = loop.time() + _FIRST_LEADER_WAIT
            while loop.time() < deadline:
                if self.leader() == 0:
                    break
                await asyncio.sleep(0.1)
        for replica in range(1, setup.replicas):
            await stack.start_controller(replica)
        self._note("local.started", pods=setup.pods, replicas=setup.replicas, network=stack.network.prefix)
        self._client = httpx.AsyncClient(timeout=2.0, trust_env=False)
        self._poller = asyncio.create_task(self._poll_forever(), name="local-events")

    async def _poll_forever(self) -> None:
        while True:
            await self.poll_events()
            await asyncio.sleep(_EVENT_POLL)

    async def poll_events(self) -> None:
        """Appends the replicas' events not seen yet (by event id) to the trace."""
        if self.stack is None or self._client is None:
            return
        for index, process in enumerate(self.stack.controllers):
            if process is None or not process.running:
                continue
            url = f"http://127.0.0.1:{self.stack.debug_ports[index]}/debug/events?limit={_EVENT_LIMIT}"
            try:
                response = await self._client.get(url)
                items = response.json().get("events") or [] if response.status_code == 200 else []
            except (httpx.HTTPError, ValueError):
                continue  # starting or stopping: the next poll catches up (the ring keeps 1000)
            pid = process.process.pid if process.process is not None else 0
            for item in items:
                self._add_event(index, pid, item)

    def _add_event(self, replica: int, pid: int, item: Mapping[str, Any]) -> None:
        details = dict(item.get("details") or {})
        # a restarted replica is a new process whose event ids may start over
        event_id = f"{pid}/{details.get('event_id') or item.get('timestamp')}/{item.get('type')}"
        if (replica, event_id) in self._seen:
            return
        self._seen.add((replica, event_id))
        try:
            t = datetime.fromisoformat(str(item.get("timestamp"))).timestamp() - self._wall0
        except ValueError:
            t = self.now()
        data = {k: v for k, v in details.items() if k not in _ENVELOPE}
        self._records.append(TraceRecord(round(t, 6), f"controller-{replica}", str(item.get("type")), data))

    async def stop(self) -> None:
        if self._poller is not None:
            self._poller.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._poller
        if self._client is not None:
            await self._client.aclose()
        for timer in self._timers:
            timer.cancel()
        for task in list(self._tasks):
            task.cancel()
        if self.stack is not None:
            await self.stack.stop()  # echo servers included

    def _note(self, type_: str, **data: Any) -> None:
        self._records.append(TraceRecord(round(self.now(), 6), "local", type_, data))

    # -- steps ------------------------------------------------------------------------------------

    async def apply(self, objects: Sequence[Mapping[str, Any]]) -> None:
        for obj in objects:
            self.s.apply(await self._promote(obj))

    async def _promote(self, obj: Mapping[str, Any]) -> JSON:
        """EndpointSlices point at echo servers (see the module docstring); other objects pass as they are."""
        copy: JSON = deepcopy(dict(obj))
        if copy.get("kind") != "EndpointSlice":
            return copy
        stack = self.s
        for address, port in slice_pairs(copy):
            if (address, port) not in self.addresses.echoes:
                echo = await stack.add_echo(address)
                self.addresses.add(address, port, echo)
        rewritten = []
        for ep in copy.get("endpoints") or []:
            hosts = [self.addresses.echoes[(str(a), p)].host for a in ep.get("addresses") or []
                     for p in sorted({p for (addr, p) in self.addresses.echoes if addr == str(a)})[:1]]
            rewritten.append({**ep, "addresses": hosts})
        copy["endpoints"] = rewritten
        copy["ports"] = [{**p, "port": stack.echo_port} for p in copy.get("ports") or [{"port": 80}]]
        return copy

    def _namespace_of(self, key: ObjectKey) -> str | None:
        rt = self.s.kube.types.by_kind(key.resolved_api_version(), key.kind)
        if rt is None:
            raise ValueError(f"the local API serves no {key.kind}")
        return (key.namespace or "default") if rt.namespaced else None

    async def delete(self, key: ObjectKey) -> None:
        self.s.delete(key.resolved_api_version(), key.kind, self._namespace_of(key), key.name)

    async def patch(self, key: ObjectKey, patch_type: str, patch: Any) -> None:
        if key.kind == "EndpointSlice":
            raise NotApplicable("patching an EndpointSlice is not supported on local (apply the whole slice: "
                                "its addresses are promoted to echo servers)")
        self.s.patch(key.resolved_api_version(), key.kind, self._namespace_of(key), key.name, patch_type, patch)

    async def advance(self, seconds: float) -> None:
        # the runner polls ``within`` bounds by advancing at most 1 s at a time: only longer advances
        # (``advance`` steps) count, so a slow failure is still reported as a failure
        if seconds > 1.0:
            self._advanced += seconds
        if self._advanced > max_advance():
            raise NotApplicable(f"too slow for local: the scenario advances more than {max_advance():g}s of wall "
                                "time (HAPTIC_LOCAL_MAX_ADVANCE)")
        await asyncio.sleep(max(seconds * time_scale(), 0.0))
        await self.poll_events()

    async def settle(self, timeout: float) -> bool:  # noqa: ASYNC109 - the scenario's bound, in wall seconds
        """Every pod runs the published config, nothing changed for a quiet second (published config,
        pods' versions, controllers' output) and no store change waits for its reconciliation
        (the debounce window: a ``resource.index.updated`` event with no ``reconciliation.triggered`` after it)."""
        stack = self.s
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        last: tuple[object, ...] | None = None
        since = loop.time()
        while loop.time() < deadline:
            if self._crashed():
                self._note("local.controllers.exited", codes=[c.returncode for c in stack.controllers if c])
                return False
            state = (stack.published_config(), tuple(p.fake.version for p in stack.pods),
                     sum(len(c.lines) for c in stack.controllers if c is not None))
            if state != last:
                last, since = state, loop.time()
            elif loop.time() - since >= 1.0 and stack.out_of_sync() == [] and not self._reconcile_pending():
                return True
            await asyncio.sleep(0.1)
            await self.poll_events()
        return False

    def _reconcile_pending(self) -> bool:
        """A store change the controller has not reconciled yet (its debounce window holds it back)."""
        last_change = last_trigger = -1
        for position, record in enumerate(self._records):
            if record.type == "resource.index.updated" and not record.data.get("initial_sync"):
                last_change = position
            elif record.type == "reconciliation.triggered":
                last_trigger = position
        return last_change > last_trigger

    def _crashed(self) -> bool:
        """Every replica exited on its own (none was stopped by a fault): nothing can settle any more."""
        processes = [c for c in self.s.controllers if c is not None]
        return bool(processes) and not self._killed and all(c.returncode is not None for c in processes)

    def _pod_indexes(self, selector: str | int | None) -> list[int]:
        names = [p.name for p in self.s.pods]
        if selector is None:
            return list(range(len(names)))
        if isinstance(selector, int):
            return [selector]
        if selector not in names:
            raise ValueError(f"no pod {selector!r}; pods: {', '.join(names)}")
        return [names.index(selector)]

    def _later(self, delay: float | None, action: Callable[[], Awaitable[object] | object]) -> None:
        if delay is None:
            return

        def fire() -> None:
            outcome = action()
            if asyncio.iscoroutine(outcome):
                task = asyncio.ensure_future(outcome)
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)

        self._timers.append(asyncio.get_running_loop().call_later(delay * time_scale(), fire))

    async def inject_fault(self, fault: FaultSpec) -> None:
        stack = self.s
        kube = stack.kube
        self._note("fault.injected", kind=fault.kind)
        if fault.kind == "kube_outage":
            kube.outage(fault.duration if fault.duration is not None else 10.0**9)
            kube.drop_watches()
        elif fault.kind == "watch_drop":
            kube.drop_watches()
        elif fault.kind == "compaction":
            kube.compact()
            kube.drop_watches()
        elif fault.kind == "leader_loss":
            await self._leader_loss(fault.replica, fault.duration)
        elif fault.kind == "pod_restart":
            for index in self._pod_indexes(fault.pod):
                await stack.restart_pod(index)
        elif fault.kind == "kube_latency":
            kube.add_latency(fault.delay, fault.duration)
        elif fault.kind == "clock_skew":
            raise NotApplicable("clock_skew: a controller subprocess runs on the host's own clock")
        else:
            for index in self._pod_indexes(getattr(fault, "pod", None)):
                await self._pod_fault(index, fault)

    async def _pod_fault(self, index: int, fault: FaultSpec) -> None:
        pod = self.s.pods[index]
        if fault.kind in dataplane_faults.FAKE_FAULTS:
            dataplane_faults.inject(pod.fake, fault)
            self._arm(pod.name, fault.kind, fault.duration, lambda: dataplane_faults.clear(pod.fake, fault.kind))
        elif fault.kind == "dataplane_unreachable":
            await pod.stop_api()
            self._arm(pod.name, fault.kind, fault.duration, pod.start_api)
        elif fault.kind == "haproxy_down":
            dataplane_faults.haproxy_down(pod.fake)
            self._arm(pod.name, fault.kind, fault.duration, lambda: dataplane_faults.haproxy_up(pod.fake))
        else:
            raise NotApplicable(f"fault {fault.kind} is not supported by the local fakes")

    def _arm(self, target: str, kind: str, duration: float | None, clear: Callable[[], object]) -> None:
        """Remembers how to clear ``kind`` on ``target``; with a duration, clears it then (unless re-injected)."""
        token = self._arming.arm(target, kind)
        self._clears[(target, kind)] = clear

        def expire() -> Awaitable[object] | object:
            if not self._arming.expire(target, kind, token):
                return None
            self._clears.pop((target, kind), None)
            return clear()

        self._later(duration, expire)

    def leader(self) -> int | None:
        """The replica holding the Lease (its holderIdentity is the replica's POD_NAME)."""
        stack = self.s
        rt = stack.kube.types.by_kind("coordination.k8s.io/v1", "Lease")
        if rt is None:
            return None
        for lease in stack.kube.list(rt, self._namespace).items:
            holder = str((lease.get("spec") or {}).get("holderIdentity") or "")
            match = re.fullmatch(r"haptic-controller-(\d+)", holder)
            if match:
                index = int(match[1])
                process = stack.controllers[index] if index < len(stack.controllers) else None
                if process is not None and process.running:
                    return index
        return None

    async def _leader_loss(self, replica: int | None, duration: float | None) -> None:
        stack = self.s
        index = replica if replica is not None else self.leader()
        if index is None:
            self._note("fault.leader_loss.no_leader")
            return
        process = stack.controllers[index]
        if process is not None:
            await process.stop(grace=0.0)  # a crash: SIGTERM then SIGKILL at once
        self._note("replica.killed", replica=index)
        if duration is None:
            await stack.start_controller(index)
            return
        self._killed.append(index)

        async def revive() -> None:
            if index in self._killed:
                self._killed.remove(index)
                await stack.start_controller(index)

        self._later(duration, revive)

    async def clear_faults(self, kind: str | None) -> None:
        stack = self.s
        if kind in (None, "kube_outage"):
            stack.kube.faults.outage_until = float("-inf")
        if kind in (None, "kube_latency"):
            stack.kube.faults.latency = 0.0
        for (target, armed), clear in sorted(self._clears.items()):
            if kind is None or armed == kind:
                del self._clears[(target, armed)]
                self._arming.disarm(target, armed)
                outcome = clear()
                if asyncio.iscoroutine(outcome):
                    await outcome
        if kind in (None, "leader_loss"):
            while self._killed:
                await stack.start_controller(self._killed.pop(0))

    async def restart_replica(self, index: int) -> None:
        if index >= len(self.s.controllers):
            raise ValueError(f"no replica #{index}; there are {len(self.s.controllers)}")
        await self.s.restart_controller(index)

    async def restart_pod(self, pod: str) -> None:
        for index in self._pod_indexes(pod):
            await self.s.restart_pod(index)

    # -- observation ------------------------------------------------------------------------------

    def now(self) -> float:
        try:
            return asyncio.get_running_loop().time() - self._t0
        except RuntimeError:
            return 0.0

    def pod_names(self) -> Sequence[str]:
        return [p.name for p in self.s.pods] if self.stack is not None else []

    def rendered_config(self) -> str | None:
        return self.desired_config()

    def desired_config(self) -> str | None:
        published = self.s.published_config()
        return None if published is None else self.addresses.to_scenario(published)

    def deployed_config(self, pod: str) -> str | None:
        names = self.pod_names()
        if pod not in names:
            return None
        return self.addresses.to_scenario(self.s.deployed_config(list(names).index(pod)))

    def out_of_sync(self) -> Sequence[str] | None:
        return self.s.out_of_sync()

    def aux_files(self, pod: str) -> Mapping[str, str]:
        storage = self.s.pods[self._pod_indexes(pod)[0]].storage
        files: dict[str, str] = {}
        for kind in ("maps", "general", "ssl_certificates"):
            for name, stored in sorted(storage.files[kind].items()):
                files[name] = self.addresses.to_scenario(stored.content)
        return files

    def _counters(self, pod: str) -> dict[str, int]:
        return self.s.pods[self._pod_indexes(pod)[0]].counters()

    def reloads(self, pod: str) -> int:
        return self._counters(pod)["reloads"]

    def runtime_updates(self, pod: str) -> int:
        counters = self._counters(pod)
        return counters["runtime_server_updates"] + counters["runtime_map_updates"]

    def trace(self) -> Sequence[TraceRecord]:
        """The backend's notes and the replicas' events, in the order they were seen (append-only)."""
        return self._records

    def metrics(self) -> str:
        raise NotApplicable("use metrics_async: the controller's /metrics is read over HTTP")

    async def metrics_async(self) -> str:
        index = self.leader()
        return await self.s.metrics(index if index is not None else 0)

    async def list_objects(self, kind: str, namespace: str | None = None,
                           api_version: str | None = None) -> Sequence[Mapping[str, Any]]:
        stack = self.s
        rt = stack.kube.types.by_kind(api_version or KIND_API_VERSIONS.get(kind, "haproxy-haptic.org/v1alpha1"), kind)
        if rt is None:
            return []
        try:
            return list(stack.kube.list(rt, namespace).items)
        except NotFound:
            return []

    def http_port(self, pod: str) -> int:
        """The port of the first wildcard ``bind`` of the config ``pod`` runs."""
        config = self.s.deployed_config(self._pod_indexes(pod)[0])
        match = _WILDCARD_PORT.search(config)
        if match is None:
            raise NotApplicable(f"pod {pod} runs no wildcard bind to send traffic to")
        return int(match[1])

    async def traffic(self, check: TrafficExpectation) -> TrafficResult:
        """One real request through the chosen pod's haproxy; ``backend`` is the echo server that
        answered (named after the scenario's endpoint address), ``None`` when haproxy answered itself."""
        stack = self.s
        pod = check.pod if isinstance(check.pod, str) else self.pod_names()[check.pod]
        if check.method != "GET" or check.headers:
            raise NotApplicable("local traffic checks send plain GET requests without extra headers")
        index = self._pod_indexes(pod)[0]
        report = await probe(f"{stack.pods[index].ip}:{self.http_port(pod)}", check.host, path=check.path, count=1)
        if report.errors:
            return TrafficResult(status=0, backend=None, body=report.errors[0])
        status = next(iter(report.statuses), 0)
        return TrafficResult(status=status, backend=next(iter(report.by_server), None))


class LocalFactory:
    name = "local"

    def __init__(self, haproxy_binary: str | None = None) -> None:
        self.haproxy_binary = haproxy_binary or shutil.which("haproxy") or \
            shutil.which("haproxy", path="/usr/sbin:/usr/local/sbin")

    def unavailable_reason(self) -> str | None:
        if self.haproxy_binary is None:
            return "the local backend runs real haproxy processes; the haproxy binary is not installed"
        return None

    def create(self) -> LocalBackend:
        if self.haproxy_binary is None:
            raise BackendUnavailable(str(self.unavailable_reason()))
        return LocalBackend(self.haproxy_binary)

    def run(self, main: Callable[[], Awaitable[T]]) -> T:
        async def wrapped() -> T:
            return await main()

        return asyncio.run(wrapped())
