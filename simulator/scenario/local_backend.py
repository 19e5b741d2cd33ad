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
from datetime import UTC, datetime
from typing import Any, TypeVar

import httpx

from haptic.config.durations import parse_duration
from haptic.k8s.api import JSON, NotFound
from haptic.k8s.leaderelection import format_micro_time
from haptic.templating.context import SLOT_SHRINK_QUIET
from simulator.cluster_objects import dataplane_password, lease_handed_to
from simulator.harness import SETTLE_QUIET
from simulator.kube.patching import json_patch, merge_patch, strategic_merge
from simulator.local.echo import EchoServer
from simulator.local.pod import POD_LABELS
from simulator.local.signals import run_interruptible
from simulator.local.stack import LocalStack, StackOptions

from . import dataplane_faults
from .backend import (
    KIND_API_VERSIONS,
    BackendSetup,
    BackendUnavailable,
    NotApplicable,
    ObjectKey,
    SettleResult,
    TraceRecord,
    TrafficResult,
)
from .backend_capabilities import LOCAL_MIN_SCALE, local_max_advance
from .failover import lease_duration_of, restart_after_takeover
from .schema import FaultSpec, TrafficExpectation
from .sync_view import differing_files, rendered_view, stored_view
from .traffic_send import send_traffic, traffic_port

T = TypeVar("T")



#: output lines of an exited controller shown in the failure
_EXIT_LINES = 5

#: the fastest scale: below it the controller's scaled intervals get shorter than its real work takes
MIN_SCALE = LOCAL_MIN_SCALE
#: config durations scaled with the clock (``deploymentTimeout`` bounds real work: not scaled)
_SCALED_DURATIONS = (
    (("dataplane",), "driftPreventionInterval", 60.0),
    (("dataplane",), "minDeploymentInterval", 2.0),
    (("controller", "leaderElection"), "leaseDuration", 15.0),
    (("controller", "leaderElection"), "renewDeadline", 10.0),
    (("controller", "leaderElection"), "retryPeriod", 2.0),
)


def wall_budget() -> float:
    """Wall seconds of ``advance`` steps a scenario may take unscaled (``HAPTIC_LOCAL_MAX_ADVANCE``)."""
    return local_max_advance()


def choose_scale(advances: float) -> float:
    """Wall seconds per scenario second: 1 unless the ``advance`` steps exceed the wall budget, then
    just enough faster to fit it (``HAPTIC_LOCAL_TIME_SCALE`` forces a scale)."""
    forced = os.environ.get("HAPTIC_LOCAL_TIME_SCALE")
    if forced:
        return float(forced)
    budget = wall_budget()
    if advances <= budget:
        return 1.0
    scale = budget / advances
    if scale < MIN_SCALE:
        raise NotApplicable(f"too slow for local: the scenario advances {advances:g}s; even {MIN_SCALE:g}x faster "
                            f"that is more than {budget:g}s of wall time (HAPTIC_LOCAL_MAX_ADVANCE)")
    return scale


def scale_config(config: Mapping[str, Any], scale: float) -> JSON:
    """The config with the controller's own intervals (drift, minimum deployment interval, Lease timing)
    multiplied by ``scale``, so that the controller runs on the scenario's scaled clock."""
    scaled: JSON = deepcopy(dict(config))
    if scale == 1.0:
        return scaled
    spec = scaled.setdefault("spec", {})
    for path, field_name, default in _SCALED_DURATIONS:
        section = spec
        for key in path:
            section = section.setdefault(key, {})
        value = section.get(field_name)
        seconds = default if value is None else parse_duration(str(value)).total_seconds()
        section[field_name] = f"{seconds * scale:.3f}s"
    # The Ingress library's slot shrink quiet period is measured on the controller's clock too.
    extra = spec.setdefault("templatingSettings", {}).setdefault("extraContext", {})
    extra["slotShrinkAfter"] = float(extra.get("slotShrinkAfter", SLOT_SHRINK_QUIET)) * scale
    return scaled


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
        #: address -> the names the scenario gives that endpoint (``targetRef.name``, ``hostname``)
        self.names: dict[str, tuple[str, ...]] = {}

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

    def learn_names(self, slice_obj: Mapping[str, Any]) -> None:
        """Remembers the endpoint names of a slice, for ``traffic.backend: <name>``."""
        for ep in slice_obj.get("endpoints") or []:
            names = tuple(n for n in ((ep.get("targetRef") or {}).get("name"), ep.get("hostname")) if n)
            for address in ep.get("addresses") or []:
                if names:
                    self.names[str(address)] = tuple(str(n) for n in names)


def enables_webhook(config: Mapping[str, Any]) -> bool:
    """Whether the HAProxyTemplateConfig enables the validating webhook for some watched resource."""
    watched = (config.get("spec") or {}).get("watchedResources") or {}
    return any(isinstance(w, Mapping) and w.get("enableValidationWebhook") for w in watched.values())


def patched_object(obj: Mapping[str, Any], patch_type: str, patch: Any) -> JSON:
    """``obj`` with a ``merge``, ``json`` or ``strategic`` patch applied, as the API server would."""
    if patch_type == "merge":
        result = merge_patch(deepcopy(dict(obj)), patch)
    elif patch_type == "json":
        result = json_patch(deepcopy(dict(obj)), patch)
    elif patch_type == "strategic":
        result = strategic_merge(obj, patch, (), str(obj.get("kind")))
    else:
        raise ValueError(f"unsupported patch type {patch_type!r}")
    if not isinstance(result, dict):
        raise ValueError("the patch does not produce an object")
    return result


def echo_ports(ports: Any, echo_port: int) -> list[dict[str, Any]]:
    """An EndpointSlice's ports pointed at the echo servers' port; a port no server can listen on stays as
    written, so that the config it ends up in fails as it does on ``sim``."""
    def listenable(port: object) -> bool:
        return isinstance(port, int) and not isinstance(port, bool) and 1 <= port <= 65535

    return [{**p, "port": echo_port} if listenable(p.get("port", 80)) else dict(p) for p in ports or [{"port": 80}]]


def slice_pairs(obj: Mapping[str, Any]) -> list[tuple[str, int]]:
    """The ``address:port`` pairs an EndpointSlice names (every port for every address)."""
    ports = [int(p["port"]) for p in obj.get("ports") or [] if p.get("port") is not None] or [80]
    return [(str(a), port) for ep in obj.get("endpoints") or [] for a in ep.get("addresses") or []
            for port in ports]


#: echo index of the first scenario address (echo host 100 + index: three digits up to 254)
ECHO_ORDERED_BASE = 1


def reconcile_pending(records: Sequence[TraceRecord]) -> bool:
    """A store change the controller has not reconciled yet (its debounce window holds it back): a
    ``resource.index.updated`` event with no ``reconciliation.triggered`` after it."""
    last_change = last_trigger = -1
    for position, record in enumerate(records):
        if record.type == "resource.index.updated" and not record.data.get("initial_sync"):
            last_change = position
        elif record.type == "reconciliation.triggered":
            last_trigger = position
    return last_change > last_trigger


#: the highest TCP port: an EndpointSlice port above it cannot be promoted to an echo server
_MAX_PORT = 65535
_EVENT_POLL = 0.25
_SETTLE_POLL = 0.25
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
        self.scale = 1.0  # wall seconds per scenario second (``choose_scale``)
        self._lease_duration = 15.0
        self._namespace = "haptic"
        self._wall0 = 0.0
        self._after: dict[tuple[int, int], int] = {}  # (replica, pid) -> last event seq seen
        self._polling = asyncio.Lock()
        self._poller: asyncio.Task[None] | None = None
        self._client: httpx.AsyncClient | None = None
        self._slices: dict[tuple[str, str], JSON] = {}  # EndpointSlices as the scenario wrote them
        self._known_addresses: list[str] = []
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
        if setup.http:
            raise BackendUnavailable("setup.http: only sim has the simulated HTTP server behind http.fetch")
        self.scale = choose_scale(setup.advances)
        # echo hosts from 100 + ECHO_ORDERED_BASE have three digits: their text order is their numeric order
        self._known_addresses = list(setup.endpoint_addresses)
        self._t0 = loop.time()
        self._wall0 = datetime.now().timestamp()  # events carry wall timestamps; the trace shows seconds since start
        meta = setup.config.get("metadata") or {}
        self._namespace = str(meta.get("namespace") or "haptic")
        ref = ((setup.config.get("spec") or {}).get("credentialsSecretRef") or {}).get("name")
        options = StackOptions(pods=setup.pods, replicas=setup.replicas, haproxy_bin=self.haproxy_binary,
                               namespace=self._namespace, config_name=str(meta.get("name") or "haproxy-config"),
                               secret_name=str(ref or "haproxy-credentials"), start_controller=False,
                               log_level="info", webhook=enables_webhook(setup.config))
        # the block is chosen at random (not from the scenario seed): parallel runs must not share addresses
        self.stack = LocalStack(options)
        await self.stack.start()
        stack = self.stack
        stack.options.template_config = self._adapt(setup.config)
        self._lease_duration = lease_duration_of(stack.options.template_config)
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
        self._note("local.started", pods=setup.pods, replicas=setup.replicas, network=stack.network.prefix,
                   scale=self.scale)
        self._client = httpx.AsyncClient(timeout=2.0, trust_env=False)
        self._poller = asyncio.create_task(self._poll_forever(), name="local-events")

    async def _poll_forever(self) -> None:
        while True:
            await self.poll_events()
            await asyncio.sleep(_EVENT_POLL)

    async def poll_events(self) -> list[str]:
        """Appends the replicas' events not seen yet to the trace: each replica is asked only for what came
        after the last event seen from its process (``/debug/events?after=SEQ``). Returns the running
        replicas that did not answer (their events since the last answer are not in the trace yet)."""
        if self.stack is None or self._client is None:
            return []
        async with self._polling:  # the background poller and a settle step: each event once
            return await self._poll_replicas()

    async def _poll_replicas(self) -> list[str]:
        assert self.stack is not None and self._client is not None
        batch: list[TraceRecord] = []
        unanswered: list[str] = []
        for index, process in enumerate(self.stack.controllers):
            if process is None or not process.running or process.process is None:
                continue
            key = (index, process.process.pid)  # a restarted replica is a new process, its ring starts over
            url = (f"{self.stack.debug_url(index)}/debug/events?limit={_EVENT_LIMIT}"
                   f"&after={self._after.get(key, 0)}")
            try:
                response = await self._client.get(url)
                if response.status_code != 200:
                    raise ValueError(f"HTTP {response.status_code}")
                items = response.json().get("events") or []
            except (httpx.HTTPError, ValueError):
                # starting, stopping or too busy to answer in time: the next poll catches up (the ring keeps 1000)
                unanswered.append(f"controller-{index}")
                continue
            for item in items:
                batch.append(self._event_record(index, item))
                self._after[key] = max(self._after.get(key, 0), int(item.get("seq") or 0))
        # in time order: replica by replica, a follower's earlier events would land after the leader's later ones
        self._records.extend(sorted(batch, key=lambda r: r.t))
        return unanswered

    def _event_record(self, replica: int, item: Mapping[str, Any]) -> TraceRecord:
        details = dict(item.get("details") or {})
        try:
            t = (datetime.fromisoformat(str(item.get("timestamp"))).timestamp() - self._wall0) / self.scale
        except ValueError:
            t = self.now()
        data = {k: v for k, v in details.items() if k not in _ENVELOPE}
        return TraceRecord(round(t, 6), f"controller-{replica}", str(item.get("type")), data)

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
        """The step's objects as close together as a client's writes get: every echo server is started
        first, then the writes follow back to back, in the step's order (they still reach the controller
        some milliseconds apart, as from ``kubectl apply`` on a cluster)."""
        promoted = [await self._promote(obj) for obj in objects]
        for obj, written in zip(objects, promoted, strict=True):
            await self.s.apply_admitted(written)
            self._follow_credentials(obj)

    def _follow_credentials(self, obj: Mapping[str, Any]) -> None:
        """As on sim: the pods' Dataplane APIs take a new password from the credentials Secret when it is
        applied (an operator rotating it everywhere); the controller has to follow."""
        stack = self.s
        password = dataplane_password(obj, stack.options.secret_name, self._namespace)
        if password is not None:
            for pod in stack.pods:
                pod.fake.options.password = password

    def _echo_index(self, address: str) -> int:
        """Echo addresses in the order of the scenario's own addresses, as text (templates sort them:
        the slots config fills slots in text order) for the addresses known up front; others after them."""
        if address not in self._known_addresses:
            self._known_addresses.append(address)  # not in the scenario's steps: its order is not kept
        return ECHO_ORDERED_BASE + self._known_addresses.index(address)

    def _adapt(self, config: Mapping[str, Any]) -> JSON:
        """A HAProxyTemplateConfig of the scenario as the stack runs it (its pods, its clock)."""
        stack = self.s
        adapted = adapt_config(config, dataplane_port=stack.dataplane_port, secret_name=stack.options.secret_name)
        return scale_config(adapted, self.scale)

    async def _promote(self, obj: Mapping[str, Any]) -> JSON:
        """EndpointSlices point at echo servers and HAProxyTemplateConfigs at the stack's pods (see the
        module docstring); other objects pass as they are."""
        copy: JSON = deepcopy(dict(obj))
        if copy.get("kind") == "HAProxyTemplateConfig":
            return self._adapt(copy)
        if copy.get("kind") != "EndpointSlice":
            return copy
        meta = copy.get("metadata") or {}
        self._slices[(str(meta.get("namespace") or "default"), str(meta.get("name")))] = deepcopy(copy)
        if any(not 1 <= port <= _MAX_PORT for _address, port in slice_pairs(copy)):
            # No server can listen there, and a cluster would hand the port to haproxy as it is: pass the
            # slice through unpromoted so that haproxy -c sees what it would see in a cluster.
            self._note("local.endpointslice.unpromoted", name=meta.get("name"), reason="port out of range")
            return copy
        stack = self.s
        self.addresses.learn_names(copy)
        for address, port in slice_pairs(copy):
            if (address, port) not in self.addresses.echoes:
                echo = await stack.add_echo(address, self._echo_index(address))
                self.addresses.add(address, port, echo)
        rewritten = []
        for ep in copy.get("endpoints") or []:
            hosts = [self.addresses.echoes[(str(a), p)].host for a in ep.get("addresses") or []
                     for p in sorted({p for (addr, p) in self.addresses.echoes if addr == str(a)})[:1]]
            rewritten.append({**ep, "addresses": hosts})
        copy["endpoints"] = rewritten
        copy["ports"] = echo_ports(copy.get("ports"), stack.echo_port)
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
            # patched as the scenario sees it (its own addresses), then promoted again like an apply
            namespace = key.namespace or "default"
            original = self._slices.get((namespace, key.name))
            if original is None:
                raise ValueError(f"EndpointSlice {namespace}/{key.name} was not applied by this scenario")
            await self.apply([patched_object(original, patch_type, patch)])
            return
        await self.s.patch(key.resolved_api_version(), key.kind, self._namespace_of(key), key.name, patch_type,
                           patch)

    async def advance(self, seconds: float) -> None:
        await asyncio.sleep(max(seconds * self.scale, 0.0))
        await self.poll_events()

    async def settle(self, timeout: float) -> SettleResult:  # noqa: ASYNC109 - the scenario's bound
        """Converged (see ``pending``) after nothing changed for ``SETTLE_QUIET`` scenario seconds
        (published config, pods' versions, the controllers' output and events), the same quiet period
        as on sim, so that both backends leave the controller in the same state at rest (no debounce
        window or minimum deployment interval of the slots config still running); at the bound, what
        was still pending."""
        stack = self.s
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout * self.scale
        last: tuple[object, ...] | None = None
        since = loop.time()
        while True:
            if self._crashed():
                codes = [c.returncode for c in stack.controllers if c]
                # what the processes said last is all there is to know why (the trace ends before it)
                final = [line[:300] for c in stack.controllers if c for line in list(c.lines)[-_EXIT_LINES:]]
                self._note("local.controllers.exited", codes=codes, last_output=final)
                said = "; last output: " + " | ".join(final) if final else ""
                return SettleResult(False, f"every controller replica exited (exit codes {codes}){said}")
            await self.poll_events()
            state = (stack.published_config(), tuple(p.fake.version for p in stack.pods),
                     sum(c.line_count for c in stack.controllers if c is not None), len(self._records))
            if state != last:
                last, since = state, loop.time()
            quiet = loop.time() - since >= SETTLE_QUIET * self.scale
            pending = await self.pending() if quiet or loop.time() >= deadline else None
            if pending == "":
                pending = await self.trace_behind()
                if pending == "":
                    return SettleResult(True)
            if loop.time() >= deadline:
                return SettleResult(False, pending or "the controllers kept changing things")
            await asyncio.sleep(_SETTLE_POLL)

    async def trace_behind(self) -> str:
        """``""`` when a poll that every running replica answered brought no new event: the trace holds
        everything the converged installation published, so the checks after ``settle`` see it (a busy
        machine can keep a replica's debug server from answering the background poller for seconds)."""
        before = len(self._records)
        unanswered = await self.poll_events()
        if unanswered:
            return f"the events of {', '.join(unanswered)} could not be read"
        return "" if len(self._records) == before else "new events arrived"

    async def pending(self) -> str:
        """What keeps the installation from being converged, or ``""``: no replica leads; the leader
        reports work pending (``/debug/vars/convergence``: debounce window, render, deployment, retry,
        discovery retry); nothing published; a pod not on the published config, not storing the
        rendered files, or with a reload pending."""
        stack = self.s
        leader = self.leader()
        if leader is None:
            running = sum(1 for c in stack.controllers if c is not None and c.running)
            return f"no replica leads ({running} of {len(stack.controllers)} running)"
        for index, process in enumerate(stack.controllers):
            if process is None or not process.running:
                continue
            reported = await self._debug_var(index, "convergence")
            if not isinstance(reported, Mapping):
                return f"controller-{index} does not report its convergence yet"
            if reported.get("pending"):
                return f"controller-{index}: " + "; ".join(str(p) for p in reported["pending"])
            if index == leader and not reported.get("is_leader"):
                return f"controller-{index} holds the Lease but does not lead yet"
        if stack.published_config() is None:
            return "no configuration published yet"
        stale = stack.out_of_sync() or []
        if stale:
            return f"{len(stale)} pod(s) do not run the published config: {', '.join(stale)}"
        files = await self._files_behind(leader)
        if files:
            return files
        reloading = [p.name for p in stack.pods if p.fake.reloads.pending]
        return f"reload pending on {', '.join(reloading)}" if reloading else ""

    async def _files_behind(self, leader: int) -> str:
        """Pods whose stored maps, files and certificates differ from the leader's last validated render."""
        rendered = await self._debug_var(leader, "rendered")
        validated = await self._debug_var(leader, "validated")
        aux = await self._debug_var(leader, "auxfiles")
        if not (isinstance(rendered, Mapping) and isinstance(validated, Mapping) and isinstance(aux, Mapping)):
            return ""
        if rendered.get("checksum") != validated.get("content_checksum"):
            return ""  # the last render failed validation: the pods keep the last good files
        general = {**(aux.get("files") or {}), **(aux.get("crt_lists") or {})}
        wanted = rendered_view(aux.get("maps") or {}, general, aux.get("certificates") or [])
        behind = []
        for pod in self.s.pods:
            # both sides name the echo servers' addresses: the leader rendered from the promoted slices
            names = differing_files(wanted, stored_view(pod.storage, certificate_contents=False))
            if names:
                behind.append(f"{pod.name} ({', '.join(names)})")
        return f"pods do not store the rendered files: {'; '.join(behind)}" if behind else ""

    async def _debug_var(self, replica: int, name: str) -> Any:
        """``/debug/vars/<name>`` of a replica, None when it does not answer."""
        if self._client is None:
            return None
        url = f"{self.s.debug_url(replica)}/debug/vars/{name}"
        try:
            response = await self._client.get(url)
            return response.json() if response.status_code == 200 else None
        except (httpx.HTTPError, ValueError):
            return None

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

        self._timers.append(asyncio.get_running_loop().call_later(delay * self.scale, fire))

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
        elif fault.kind == "leader_loss" and fault.mode == "lease":
            self._take_lease(fault.replica)
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

    def _leader_lease(self) -> tuple[JSON, int] | None:
        """The Lease held by one of the replicas (its holderIdentity is the replica's POD_NAME), with the index."""
        rt = self.s.kube.types.by_kind("coordination.k8s.io/v1", "Lease")
        if rt is None:
            return None
        for lease in self.s.kube.list(rt, self._namespace).items:
            holder = str((lease.get("spec") or {}).get("holderIdentity") or "")
            match = re.fullmatch(r"haptic-controller-(\d+)", holder)
            if match:
                return lease, int(match[1])
        return None

    def leader(self) -> int | None:
        """The running replica holding the Lease."""
        found = self._leader_lease()
        if found is None:
            return None
        index = found[1]
        process = self.s.controllers[index] if index < len(self.s.controllers) else None
        return index if process is not None and process.running else None

    def _take_lease(self, to: int | None) -> None:
        """As on sim (``Harness.take_lease``): a foreign write hands the Lease to replica ``to`` (default: the
        first running follower; a stranger when there is none); the leader must notice and step down."""
        stack = self.s
        found = self._leader_lease()
        if found is None:
            self._note("fault.leader_loss.no_leader")
            return
        lease, leader = found
        followers = [i for i, c in enumerate(stack.controllers) if i != leader and c is not None and c.running]
        heir = f"haptic-controller-{to}" if to is not None else \
            f"haptic-controller-{followers[0]}" if followers else "intruder"
        rt = stack.kube.types.by_kind("coordination.k8s.io/v1", "Lease")
        assert rt is not None
        meta = lease["metadata"]
        stack.kube.update(rt, meta.get("namespace"), meta["name"],
                          lease_handed_to(lease, heir, format_micro_time(datetime.now(UTC))))
        self._note("lease.taken", holder=heir)

    async def _leader_loss(self, replica: int | None, duration: float | None) -> None:
        stack = self.s
        index = replica if replica is not None else self.leader()
        if index is None:
            self._note("fault.leader_loss.no_leader")
            return
        process = stack.controllers[index]
        if process is not None:
            await process.kill()  # a crash: nothing is released, the Lease has to expire
        self._note("replica.killed", replica=index)
        self._killed.append(index)

        async def revive() -> None:
            if index in self._killed:
                self._killed.remove(index)
                await stack.start_controller(index)
                self._note("replica.restarted", replica=index)

        if duration is not None:
            self._later(duration, revive)
            return
        # a failover (simulator.scenario.failover): back only once another replica leads
        waiter = asyncio.ensure_future(restart_after_takeover(
            index, self.leader, len(stack.controllers), self._lease_duration, revive,
            note=lambda message: self._note("local.no_takeover", message=message)))
        self._tasks.add(waiter)
        waiter.add_done_callback(self._tasks.discard)

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
        """Scenario seconds since the start: wall seconds divided by the scale."""
        try:
            return (asyncio.get_running_loop().time() - self._t0) / self.scale
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
        return counters["runtime_server_updates"] + counters["runtime_server_adds"] + counters["runtime_map_updates"]

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

    async def traffic(self, check: TrafficExpectation) -> TrafficResult:
        """One real request through the chosen pod's haproxy (``simulator.scenario.traffic_send``)."""
        stack = self.s
        pod = check.pod if isinstance(check.pod, str) else self.pod_names()[check.pod]
        index = self._pod_indexes(pod)[0]
        port = traffic_port(pod, stack.deployed_config(index), check)
        return await send_traffic(stack.pods[index].ip, port, check, self.addresses.names)


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
        """Runs ``main`` in a fresh loop; SIGINT/SIGTERM stop the stack (every child process) first and
        then raise ``Interrupted``."""

        async def wrapped() -> T:
            return await run_interruptible(main)

        return asyncio.run(wrapped())
