"""A scripted test double of ``ScenarioBackend``: a tiny deterministic "controller" on a float clock.

It renders one ``backend`` line per Service (sorted), treats a Service annotated ``invalid: "true"``
as a config that fails validation, debounces changes by 2 s (+ seeded jitter), deploys to pods one
after the other, and does a runtime update instead of a reload when only the ``weight`` annotation
changed. Faults: ``dataplane_5xx`` (the next N pushes fail, retried after 5 s), ``kube_outage``
(changes are seen only once it ends), ``pod_restart`` (the pod forgets its config), ``leader_loss``
(replica-1 takes over). ``bugs`` switch on deliberate misbehaviour so tests see the invariants fire.
"""

from __future__ import annotations

import asyncio
import hashlib
import random
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, TypeVar

from simulator.scenario.backend import (
    BackendSetup,
    NotApplicable,
    ObjectKey,
    SettleResult,
    TraceRecord,
    TrafficResult,
)
from simulator.scenario.schema import FaultSpec, TrafficExpectation

T = TypeVar("T")
DEBOUNCE = 2.0
RETRY = 5.0


class ScriptedBackend:
    def __init__(self, bugs: frozenset[str] = frozenset()) -> None:
        self.bugs = bugs
        self.t = 0.0
        self.records: list[TraceRecord] = []
        self.objects: dict[tuple[str, str, str], dict[str, Any]] = {}
        self.pods: list[str] = []
        self.deployed: dict[str, str | None] = {}
        self.deployed_weights: dict[str, str] = {}
        self.reload_count: dict[str, int] = {}
        self.runtime_count: dict[str, int] = {}
        self.due: float | None = None  # next reconciliation
        self.fail_pushes: dict[str, int] = {}
        self.outage_until: float | None = None
        self.leader = "replica-0"
        self.replicas = 1
        self.rng = random.Random(0)
        self.config: Mapping[str, Any] = {}
        self.last_rendered: str | None = None
        self.stopped = False

    # -- lifecycle
    async def start(self, setup: BackendSetup) -> None:
        self.rng = random.Random(setup.seed)
        self.pods = [f"haproxy-{i}" for i in range(setup.pods)]
        self.replicas = setup.replicas
        self.config = setup.config
        for pod in self.pods:
            self.deployed[pod] = None
            self.reload_count[pod] = self.runtime_count[pod] = 0
        for obj in setup.objects:
            self._store(obj)
        self._emit("leader.became", identity=self.leader)
        self._schedule()

    async def stop(self) -> None:
        self.stopped = True

    # -- steps
    async def apply(self, objects: Sequence[Mapping[str, Any]]) -> None:
        for obj in objects:
            self._store(obj)
        self._schedule()

    async def delete(self, key: ObjectKey) -> None:
        self.objects.pop((key.kind, key.namespace or "default", key.name), None)
        self._schedule()

    async def patch(self, key: ObjectKey, patch_type: str, patch: Any) -> None:
        obj = self.objects[(key.kind, key.namespace or "default", key.name)]
        _merge(obj, patch)
        self._schedule()

    async def advance(self, seconds: float) -> None:
        end = self.t + seconds
        while self.due is not None and self.due <= end:
            self.t = max(self.t, self.due)
            self.due = None
            self._reconcile()
        self.t = end

    async def settle(self, timeout: float) -> SettleResult:  # noqa: ASYNC109 - virtual time
        end = self.t + timeout
        while self.due is not None and self.due <= end:
            await self.advance(self.due - self.t)
        if self.due is not None:
            return SettleResult(False, f"a reconciliation is due at t={self.due:g}s")
        return SettleResult(True)

    async def inject_fault(self, fault: FaultSpec) -> None:
        self._emit("fault.injected", kind=fault.kind)
        if fault.kind == "dataplane_5xx":
            for pod in self._pods(fault.pod):
                self.fail_pushes[pod] = self.fail_pushes.get(pod, 0) + fault.count
        elif fault.kind == "kube_outage":
            self.outage_until = float("inf") if fault.duration is None else self.t + fault.duration
        elif fault.kind == "pod_restart":
            for pod in self._pods(fault.pod):
                await self.restart_pod(pod)
        elif fault.kind == "leader_loss":
            self._emit("leader.lost", identity=self.leader)
            self.leader = "replica-1" if self.leader == "replica-0" and self.replicas > 1 else "replica-0"
            self._emit("leader.became", identity=self.leader)
            self._schedule(0.0)

    async def clear_faults(self, kind: str | None) -> None:
        if kind in (None, "kube_outage"):
            self.outage_until = None
        if kind in (None, "dataplane_5xx"):
            self.fail_pushes.clear()
        self._schedule(0.0)

    async def restart_replica(self, index: int) -> None:
        self._emit("replica.restarted", replica=index)
        self._schedule(0.0)

    async def restart_pod(self, pod: str) -> None:
        self.deployed[pod] = None
        self._emit("haproxy.pod.restarted", pod_name=pod)
        self._schedule(0.0)

    # -- observation
    def now(self) -> float:
        return self.t

    def pod_names(self) -> Sequence[str]:
        return list(self.pods)

    def rendered_config(self) -> str | None:
        return self.last_rendered

    def desired_config(self) -> str | None:
        text, valid = self._render()
        return text if valid else None

    def deployed_config(self, pod: str) -> str | None:
        return self.deployed.get(pod)

    def out_of_sync(self) -> Sequence[str] | None:
        desired = self.desired_config()
        if desired is None:
            return None
        return [p for p in self.pods if self.deployed[p] != desired]

    def aux_files(self, pod: str) -> Mapping[str, str]:
        if self.deployed.get(pod) is None:
            return {}
        hosts = sorted(f"{o['metadata']['name']}.example {o['metadata']['name']}\n" for k, o in self.objects.items()
                       if k[0] == "Service")
        return {"hosts.map": "".join(hosts)}

    def reloads(self, pod: str) -> int:
        return self.reload_count[pod]

    def runtime_updates(self, pod: str) -> int:
        return self.runtime_count[pod]

    def trace(self) -> Sequence[TraceRecord]:
        return self.records

    def metrics(self) -> str:
        reloads = sum(self.reload_count.values())
        return ("# TYPE haptic_reloads_total counter\n"
                f"haptic_reloads_total {reloads}\n"
                "# TYPE haptic_pods gauge\n"
                f'haptic_pods{{state="known"}} {len(self.pods)}\n')

    async def list_objects(self, kind: str, namespace: str | None = None,
                           api_version: str | None = None) -> Sequence[Mapping[str, Any]]:
        meta = dict(self.config.get("metadata") or {})
        if kind == "HAProxyTemplateConfig":
            _, valid = self._render()
            return [{**self.config, "status": {"validation": "Valid" if valid else "Invalid"}}]
        if kind == "HAProxyCfg" and self.last_rendered is not None:
            deployed = sum(1 for p in self.pods if self.deployed[p] == self.last_rendered)
            return [{"kind": "HAProxyCfg", "metadata": {"name": "haproxy-cfg", "namespace": meta.get("namespace")},
                     "spec": {"content": self.last_rendered}, "status": {"deployedToPods": deployed}}]
        return []

    async def traffic(self, check: TrafficExpectation) -> TrafficResult:
        if "refused" in self.bugs:
            return TrafficResult(status=0, body="ConnectError: [Errno 111] Connection refused")
        raise NotApplicable("needs real HAProxy (not applicable on the scripted backend)")

    # -- the "controller"
    def _emit(self, type_: str, source: str | None = None, **data: Any) -> None:
        self.records.append(TraceRecord(self.t, source or self.leader, type_, data))

    def _store(self, obj: Mapping[str, Any]) -> None:
        meta = obj["metadata"]
        self.objects[(str(obj["kind"]), str(meta.get("namespace") or "default"), str(meta["name"]))] = _copy(obj)

    def _pods(self, selector: str | int | None) -> list[str]:
        if selector is None:
            return list(self.pods)
        return [self.pods[selector]] if isinstance(selector, int) else [selector]

    def _schedule(self, delay: float | None = None) -> None:
        wait = DEBOUNCE + round(self.rng.random() * 0.5, 3) if delay is None else delay
        if self.outage_until is not None and self.t + wait < self.outage_until:
            if self.outage_until == float("inf"):
                self.due = None
                return
            wait = self.outage_until - self.t
        self.due = self.t + wait if self.due is None else min(self.due, self.t + wait)

    def _render(self) -> tuple[str, bool]:
        lines = ["global", "  maxconn 100"]
        valid = True
        for (kind, ns, name), obj in sorted(self.objects.items()):
            if kind != "Service":
                continue
            annotations = obj["metadata"].get("annotations") or {}
            valid = valid and annotations.get("invalid") != "true"
            lines.append(f"backend {ns}_{name}")
        return "\n".join(lines) + "\n", valid

    def _weights(self) -> str:
        return ",".join(str((o["metadata"].get("annotations") or {}).get("weight", ""))
                        for _, o in sorted(self.objects.items()))

    def _reconcile(self) -> None:
        if self.outage_until is not None and self.t < self.outage_until:
            return
        self._emit("reconciliation.started", trigger="resource_change")
        text, valid = self._render()
        checksum = hashlib.sha256(text.encode()).hexdigest()
        self._emit("template.rendered", content_checksum=checksum)
        self.last_rendered = text
        if not valid:
            self._emit("validation.failed", content_checksum=checksum, errors=["invalid Service"])
            if "deploy_invalid" not in self.bugs:
                return
        else:
            self._emit("validation.completed", content_checksum=checksum)
        weights = self._weights()
        self._emit("deployment.started", content_checksum=checksum)
        if "double_deploy" in self.bugs:
            self._emit("deployment.started", source="replica-1", content_checksum=checksum)
        retry = False
        for pod in self.pods:
            if "never_converge" in self.bugs and pod == self.pods[-1]:
                continue
            if self.fail_pushes.get(pod, 0) > 0:
                self.fail_pushes[pod] -= 1
                self._emit("instance.deployment.failed", pod_name=pod, error="503 (injected)")
                retry = True
                continue
            if self.deployed[pod] == text and self.deployed_weights.get(pod) == weights:
                continue
            if self.deployed[pod] == text:
                self.runtime_count[pod] += 1
            else:
                self.reload_count[pod] += 1
            self.deployed[pod] = text
            self.deployed_weights[pod] = weights
            self._emit("config.applied.to.pod", pod_name=pod, checksum=checksum)
        self._emit("deployment.completed", content_checksum=checksum)
        if retry:
            self._schedule(RETRY)


def _copy(obj: Mapping[str, Any]) -> dict[str, Any]:
    return {k: _copy(v) if isinstance(v, Mapping) else v for k, v in obj.items()}


def _merge(target: dict[str, Any], patch: Mapping[str, Any]) -> None:
    for key, value in patch.items():
        if isinstance(value, Mapping) and isinstance(target.get(key), dict):
            _merge(target[key], value)
        elif value is None:
            target.pop(key, None)
        else:
            target[key] = _copy(value) if isinstance(value, Mapping) else value


class ScriptedFactory:
    name = "scripted"

    def __init__(self, bugs: frozenset[str] = frozenset()) -> None:
        self.bugs = bugs

    def unavailable_reason(self) -> str | None:
        return None

    def create(self) -> ScriptedBackend:
        return ScriptedBackend(self.bugs)

    def run(self, main: Callable[[], Awaitable[T]]) -> T:
        async def wrapped() -> T:
            return await main()

        return asyncio.run(wrapped())
