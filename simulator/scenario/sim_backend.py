"""The ``sim`` backend: the scenario port over ``simulator.harness.Harness`` (one loop, virtual time).

Every run gets a fresh ``looptime`` loop (``VirtualClock.run``); ``haproxy -c`` runs for real but
blocks the loop, so virtual time does not move while it works. Faults map onto the fakes:
``kube_outage`` (503 from the API), ``watch_drop``, ``compaction`` (410 on re-watch), the Dataplane
faults per pod, ``pod_restart`` (the Dataplane API starts over at version 1), ``leader_loss`` (the
leader crashes; it comes back as a new process after ``duration``, at once without one; with
``mode: lease`` the Lease is handed to a follower instead, ``Harness.take_lease``). Outage watch cuts,
credentials following and settling through held-back deployments are the Harness's own behaviour.

"Desired config" is the render of the current stores by the leader's own engine (as its coordinator
would render now); it counts as desired unless that exact content failed validation. A pod is in sync
when the planner finds no operation between what it runs and the desired config.
"""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, TypeVar

from prometheus_client import generate_latest

from haptic.controller.loop.iteration import Iteration
from haptic.core import VirtualClock
from haptic.dataplane import plan
from haptic.dataplane.aux_files import AuxFiles
from haptic.names import GROUP_VERSION
from haptic.templating.errors import TemplatingError
from haptic.validation.checksum import content_checksum
from simulator.harness import Harness, Replica

from . import dataplane_faults
from .backend import (
    KIND_API_VERSIONS,
    BackendSetup,
    NotApplicable,
    ObjectKey,
    SettleResult,
    TraceRecord,
    TrafficResult,
)
from .failover import lease_duration_of, restart_after_takeover
from .schema import FaultSpec, TrafficExpectation
from .sync_view import differing_files, rendered_view, stored_view

T = TypeVar("T")

_NO_OUTAGE_END = 10.0**9
_STOP_BOUND = 30.0


class ReplicaStuck(RuntimeError):
    """A controller replica ignored its cancellation."""


def _task_chain(task: asyncio.Task[Any]) -> str:
    """``name (file:line) -> awaited task ...``: where a stuck task waits."""
    parts = []
    seen = 0
    current: Any = task
    while isinstance(current, asyncio.Task) and seen < 6:
        frames = current.get_stack(limit=1)
        where = f"{frames[0].f_code.co_filename.rsplit('/', 1)[-1]}:{frames[0].f_lineno}" if frames else "?"
        parts.append(f"{current.get_name()} ({where})")
        current = getattr(current, "_fut_waiter", None)
        if current is not None and not isinstance(current, asyncio.Task):
            current = getattr(current, "_children", [None])[0] if hasattr(current, "_children") else None
        seen += 1
    return " -> ".join(parts)


def find_haproxy() -> str | None:
    return shutil.which("haproxy") or shutil.which("haproxy", path="/usr/sbin:/usr/local/sbin")


class SimBackend:
    def __init__(self, haproxy_binary: str) -> None:
        self.haproxy_binary = haproxy_binary
        self.harness: Harness | None = None
        self._t0 = 0.0
        self._records: list[TraceRecord] = []
        self._converted = 0
        self._failed: set[str] = set()
        self._validated: set[str] = set()
        self._killed: list[int] = []
        self._timers: list[asyncio.TimerHandle] = []
        self._tasks: set[asyncio.Future[object]] = set()
        self._lease_duration = 15.0
        self._arming = dataplane_faults.Arming()
        self._clears: dict[tuple[str, str], Callable[[], object]] = {}
        self._sync_cache: dict[tuple[str, str], bool] = {}
        self._desired_cache: tuple[tuple[int, str], tuple[str, AuxFiles] | None] | None = None

    @property
    def h(self) -> Harness:
        if self.harness is None:
            raise RuntimeError("the sim backend is not started")
        return self.harness

    # -- lifecycle --------------------------------------------------------------------------------

    async def start(self, setup: BackendSetup) -> None:
        config = dict(setup.config)
        namespace = str((config.get("metadata") or {}).get("namespace") or "haptic")
        self.harness = Harness(pods=setup.pods, replicas=setup.replicas, seed=setup.seed, namespace=namespace,
                               config=config, haproxy_binary=self.haproxy_binary)
        self._lease_duration = lease_duration_of(config)
        self._t0 = asyncio.get_running_loop().time()
        await self.harness.start()
        for url, versions in setup.http.items():
            (_, first), *later = versions
            self.harness.http_source.script(url, first, later)
        for obj in setup.objects:
            self.harness.apply(obj)

    async def stop(self) -> None:
        for timer in self._timers:
            timer.cancel()
        for task in list(self._tasks):
            task.cancel()
        if self.harness is not None:
            await self.harness.stop()

    # -- steps ------------------------------------------------------------------------------------

    async def apply(self, objects: Sequence[Mapping[str, Any]]) -> None:
        for obj in objects:
            # Through admission (the in-process webhook when the config enables it); the Harness also
            # follows a new credentials Secret on the fake pods.
            await self.h.apply_admitted(obj)

    async def delete(self, key: ObjectKey) -> None:
        rt = self.h.rt(key.resolved_api_version(), key.kind)
        namespace = (key.namespace or "default") if rt.namespaced else None
        self.h.delete(key.resolved_api_version(), key.kind, key.name, namespace)

    async def patch(self, key: ObjectKey, patch_type: str, patch: Any) -> None:
        rt = self.h.rt(key.resolved_api_version(), key.kind)
        namespace = (key.namespace or "default") if rt.namespaced else None
        self.h.api.patch(rt, namespace, key.name, patch_type, patch, None)

    async def advance(self, seconds: float) -> None:
        await self.h.advance(seconds)

    async def settle(self, timeout: float) -> SettleResult:  # noqa: ASYNC109 - a virtual-time bound
        """Converged: the Harness is settled (quiet trace, a leader, nothing held back or pending) and
        every pod runs the desired config; else, at the bound, what was still pending."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            await self.h.settle(limit=max(deadline - loop.time(), 0.0))
            pending = self.h.busy() or self._stale()
            if self.h.settled and not pending:
                return SettleResult(True)
            if loop.time() >= deadline:
                return SettleResult(False, pending or "events kept arriving: the trace was never quiet long enough")
            if self.h.settled:  # quiet, but a pod is behind: a drift check or retry may still repair it
                await self.h.advance(min(1.0, deadline - loop.time()))

    def _stale(self) -> str:
        stale = self.out_of_sync()
        return f"{len(stale)} pod(s) do not run the current render: {', '.join(stale)}" if stale else ""

    def _later(self, delay: float | None, action: Callable[[], object]) -> None:
        if delay is not None:
            self._timers.append(asyncio.get_running_loop().call_later(delay, action))

    def _pod_names(self, selector: str | int | None) -> list[str]:
        names = list(self.h.pods)
        if selector is None:
            return names
        if isinstance(selector, int):
            return [names[selector]]
        if selector not in self.h.pods:
            raise ValueError(f"no pod {selector!r}; pods: {', '.join(names)}")
        return [selector]

    async def inject_fault(self, fault: FaultSpec) -> None:
        h = self.h
        if fault.kind == "kube_outage":
            h.kube_outage(fault.duration if fault.duration is not None else _NO_OUTAGE_END)
        elif fault.kind == "kube_latency":
            h.api.add_latency(fault.delay, fault.duration)
        elif fault.kind == "watch_drop":
            h.drop_watches()
        elif fault.kind == "compaction":
            h.compact()
            h.drop_watches()  # clients re-watch from their last resourceVersion, now compacted away
        elif fault.kind == "leader_loss" and fault.mode == "lease":
            h.take_lease(fault.replica)
        elif fault.kind == "leader_loss":
            await self._leader_loss(fault.replica, fault.duration)
        elif fault.kind == "clock_skew":
            if fault.replica >= len(h.replicas):
                raise ValueError(f"no replica #{fault.replica}; there are {len(h.replicas)}")
            replica = fault.replica
            h.skew_clock(replica, fault.offset)
            self._arm(f"replica-{replica}", fault.kind, fault.duration, lambda: h.skew_clock(replica, 0.0))
        elif fault.kind == "http_fetch_failure":
            source = h.http_source
            source.fail(fault.status, fault.url)
            self._arm("http", fault.kind, fault.duration, source.clear)
        elif fault.kind == "pod_restart":
            for name in self._pod_names(fault.pod):
                await h.restart_pod(name)
        else:
            for name in self._pod_names(fault.pod):
                self._pod_fault(name, fault)

    def _pod_fault(self, name: str, fault: FaultSpec) -> None:
        h = self.h
        dataplane = h.pods[name].dataplane
        if fault.kind in dataplane_faults.FAKE_FAULTS:
            dataplane_faults.inject(dataplane, fault)
            self._arm(name, fault.kind, fault.duration, lambda: dataplane_faults.clear(dataplane, fault.kind))
        elif fault.kind == "dataplane_unreachable":
            h.set_reachable(name, False)
            self._arm(name, fault.kind, fault.duration, lambda: h.set_reachable(name, True))
        elif fault.kind == "haproxy_down":
            dataplane_faults.haproxy_down(dataplane)
            self._arm(name, fault.kind, fault.duration, lambda: dataplane_faults.haproxy_up(dataplane))
        else:
            raise ValueError(f"unknown pod fault {fault.kind}")

    def _arm(self, target: str, kind: str, duration: float | None, clear: Callable[[], object]) -> None:
        """Remembers how to clear ``kind`` on ``target``; with a duration, clears it then (unless re-injected)."""
        token = self._arming.arm(target, kind)
        self._clears[(target, kind)] = clear

        def expire() -> None:
            if self._arming.expire(target, kind, token):
                self._clears.pop((target, kind), None)
                outcome = clear()
                if asyncio.iscoroutine(outcome):
                    self._spawn(outcome)

        self._later(duration, expire)

    def _spawn(self, work: Awaitable[object]) -> None:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _leader_loss(self, replica: int | None, duration: float | None) -> None:
        h = self.h
        if replica is None:
            leaders = h.leaders()
            if not leaders:
                return
            replica = next(i for i, r in enumerate(h.replicas) if r.name == leaders[0])
        await self._kill(replica)
        self._killed.append(replica)
        index = replica

        def revive() -> None:
            if index in self._killed:
                self._killed.remove(index)
                h.restart_replica(index)

        if duration is not None:
            self._later(duration, revive)
            return
        # A crash is a failover: the replica comes back only once another one leads (restarted at once
        # with its own identity, it would renew its own Lease and nobody else would ever lead).
        waiter: asyncio.Future[object] = asyncio.get_running_loop().create_task(
            restart_after_takeover(index, self._leader_index, len(h.replicas), self._lease_duration, revive),
            name=f"revive-replica-{index}")
        self._tasks.add(waiter)
        waiter.add_done_callback(self._tasks.discard)

    def _leader_index(self) -> int | None:
        leaders = self.h.leaders()
        return next((i for i, r in enumerate(self.h.replicas) if leaders and r.name == leaders[0]), None)


    async def _kill(self, index: int) -> None:
        """A crash (the replica's task cancelled), bounded: a replica that does not stop is a finding."""
        replica = self.h.replicas[index]
        task = replica.task
        replica.alive = False
        if task is None or task.done():
            return
        task.cancel()
        done, _ = await asyncio.wait({task}, timeout=_STOP_BOUND)
        if not done:
            raise ReplicaStuck(f"controller replica {replica.name} still running {_STOP_BOUND:g}s (virtual) after "
                               f"its task was cancelled: {_task_chain(task)}")

    async def clear_faults(self, kind: str | None) -> None:
        h = self.h
        if kind in (None, "kube_outage"):
            h.api.faults.outage_until = float("-inf")
        if kind in (None, "kube_latency"):
            h.api.faults.latency = 0.0
        for (target, armed), clear in sorted(self._clears.items()):
            if kind is None or armed == kind:
                del self._clears[(target, armed)]
                self._arming.disarm(target, armed)
                outcome = clear()
                if asyncio.iscoroutine(outcome):
                    await outcome
        if kind in (None, "leader_loss"):
            while self._killed:
                h.restart_replica(self._killed.pop(0))

    async def restart_replica(self, index: int) -> None:
        if index >= len(self.h.replicas):
            raise ValueError(f"no replica #{index}; there are {len(self.h.replicas)}")
        await self._kill(index)
        self.h.restart_replica(index)

    async def restart_pod(self, pod: str) -> None:
        await self.h.restart_pod(pod)

    # -- observation ------------------------------------------------------------------------------

    def now(self) -> float:
        try:
            return asyncio.get_running_loop().time() - self._t0
        except RuntimeError:
            return 0.0

    def pod_names(self) -> Sequence[str]:
        return list(self.h.pods)

    def _iteration(self) -> tuple[Replica, Iteration] | None:
        """The leader's current iteration (any live replica's when nobody leads)."""
        alive = [(r, r.controller.iteration) for r in self.h.replicas if r.alive]
        running = [(r, it) for r, it in alive if it is not None]
        leaders = [pair for pair in running if pair[0].controller.is_leader]
        chosen = leaders or running
        return chosen[0] if chosen else None

    def rendered_config(self) -> str | None:
        found = self._iteration()
        if found is None:
            return None
        last = found[1].coordinator.last_rendered
        return None if last is None else str(last.config)

    def desired_config(self) -> str | None:
        desired = self._desired()
        return None if desired is None else desired[0]

    def _desired(self) -> tuple[str, AuxFiles] | None:
        found = self._iteration()
        if found is None:
            return None
        iteration = found[1]
        self.trace()  # refresh the validation verdicts
        # the stores follow the API, the render also reads the deployed config: both show in these
        key = (id(iteration), f"{self.h.api.resource_version}:{len(self.h.trace)}")
        if self._desired_cache is not None and self._desired_cache[0] == key:
            return self._desired_cache[1]
        coordinator = iteration.coordinator
        try:
            renders = coordinator.renders
            result = coordinator.render()
            coordinator.renders = renders  # a look, not a reconciliation
        except TemplatingError:
            desired: tuple[str, AuxFiles] | None = None
        else:
            checksum = content_checksum(result.config, result.aux)
            failed = checksum in self._failed and checksum not in self._validated
            desired = None if failed else (str(result.config), result.aux)
        self._desired_cache = (key, desired)
        return desired

    def deployed_config(self, pod: str) -> str | None:
        if pod not in self.h.pods:
            return None
        return self.h.deployed_config(pod)

    def _in_sync(self, deployed: str, desired: str) -> bool:
        key = (deployed, desired)
        known = self._sync_cache.get(key)
        if known is None:
            try:
                known = not plan(deployed, desired).operations
            except Exception:
                known = False
            if len(self._sync_cache) > 256:
                self._sync_cache.clear()
            self._sync_cache[key] = known
        return known

    def out_of_sync(self) -> Sequence[str] | None:
        desired = self._desired()
        if desired is None:
            return None
        config, aux = desired
        wanted = rendered_view(aux.maps, aux.general_files(), aux.certificates)
        return [name for name in self.h.pods
                if not self._in_sync(self.h.deployed_config(name), config)
                or differing_files(wanted, stored_view(self.h.pods[name].dataplane.storage))]

    def aux_files(self, pod: str) -> Mapping[str, str]:
        storage = self.h.pods[pod].dataplane.storage
        files: dict[str, str] = {}
        for kind in ("maps", "general", "ssl_certificates"):
            for name, stored in sorted(storage.files[kind].items()):
                files[name] = stored.content
        return files

    def reloads(self, pod: str) -> int:
        return self.h.counters(pod)["reloads"]

    def runtime_updates(self, pod: str) -> int:
        counters = self.h.counters(pod)
        return counters["runtime_server_updates"] + counters["runtime_server_adds"] + counters["runtime_map_updates"]

    def trace(self) -> Sequence[TraceRecord]:
        entries = self.h.trace if self.harness is not None else []
        for entry in entries[self._converted:]:
            data = {k: v for k, v in entry.data.items() if k != "type"}
            record = TraceRecord(round(entry.t - self._t0, 6), entry.replica, entry.event.type, data)
            if record.type == "validation.failed":
                self._failed.add(str(data.get("content_checksum", "")))
            elif record.type == "validation.completed":
                self._validated.add(str(data.get("content_checksum", "")))
            self._records.append(record)
        self._converted = len(entries)
        return self._records

    def metrics(self) -> str:
        found = self._iteration()
        if found is None:
            return ""
        return generate_latest(found[0].controller.metrics.registry).decode("utf-8")

    async def list_objects(self, kind: str, namespace: str | None = None,
                           api_version: str | None = None) -> Sequence[Mapping[str, Any]]:
        rt = self.h.rt(api_version or KIND_API_VERSIONS.get(kind, GROUP_VERSION), kind)
        return list(self.h.api.list(rt, namespace).items)

    async def traffic(self, check: TrafficExpectation) -> TrafficResult:
        raise NotApplicable("needs real HAProxy; the sim backend has none")


class SimFactory:
    name = "sim"

    def __init__(self, haproxy_binary: str | None = None) -> None:
        self.haproxy_binary = haproxy_binary or find_haproxy()

    def unavailable_reason(self) -> str | None:
        if self.haproxy_binary is None:
            return "the sim backend validates configs with the real haproxy binary, which is not installed"
        return None

    def create(self) -> SimBackend:
        assert self.haproxy_binary is not None
        return SimBackend(self.haproxy_binary)

    def run(self, main: Callable[[], Awaitable[T]]) -> T:
        async def wrapped() -> T:
            return await main()

        loop = VirtualClock.new_loop(0.0)
        try:
            return loop.run_until_complete(wrapped())
        finally:
            # A replica that ignores cancellation must not hang the run (virtual time would spin forever).
            pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
            for t in pending:
                t.cancel()
            if pending:
                loop.run_until_complete(asyncio.wait(pending, timeout=_STOP_BOUND))
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()
