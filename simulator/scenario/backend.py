"""The port the scenario runner drives: one ``ScenarioBackend`` per run, made by a ``BackendFactory``.

A backend owns a whole simulated (or real) installation: Kubernetes API, HAProxy pods, controller
replicas. The runner only mutates it through the step methods and reads it through the observation
methods; it never knows whether time is virtual (``sim``) or the wall clock (``local``, ``kind``).

Conventions every backend follows so expectations are backend-neutral:

- ``deployed_config(pod)`` is the configuration as the controller pushed it, without the Dataplane
  API's own ``# _version=N`` line; ``desired_config()`` is the render of the current objects when it
  validates (``None`` when it does not, or before the config loaded); ``out_of_sync()`` names the
  pods whose deployed config differs from it in substance (``None`` when there is no desired
  config), which may be looser than text equality (a runtime update rewrites a server line).
- ``trace()`` is append-only; records carry the time in seconds since start, the emitter (``replica-0``,
  ``pod/haproxy-1``, ``kube``) and the domain event ``type`` with its JSON-safe rendering.
- ``settle(bound)`` returns once the installation converged: a replica leads, every pod runs the
  current render (or the last one that validated), and no deployment, retry, reload or discovery
  retry is pending; otherwise, when ``bound`` expires, it says what was still pending.
- a check a backend cannot perform raises ``NotApplicable`` (``traffic`` without real HAProxy).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar, runtime_checkable

from haptic.names import GROUP_VERSION

from .schema import FaultSpec, TrafficExpectation

T = TypeVar("T")


class NotApplicable(Exception):
    """This backend cannot check this (the check is reported as not applicable, not failed)."""


class BackendUnavailable(Exception):
    """The backend cannot run in this build or on this machine; the message says why."""


@dataclass(frozen=True)
class TraceRecord:
    t: float
    source: str
    type: str
    data: Mapping[str, Any] = field(default_factory=dict)


#: The apiVersion of the kinds scenarios name without one.
KIND_API_VERSIONS: Mapping[str, str] = {
    "Ingress": "networking.k8s.io/v1",
    "IngressClass": "networking.k8s.io/v1",
    "EndpointSlice": "discovery.k8s.io/v1",
    "Service": "v1",
    "Secret": "v1",
    "ConfigMap": "v1",
    "Pod": "v1",
    "Namespace": "v1",
    "Lease": "coordination.k8s.io/v1",
    "HAProxyTemplateConfig": GROUP_VERSION,
    "HAProxyCfg": GROUP_VERSION,
}


@dataclass(frozen=True)
class ObjectKey:
    kind: str
    name: str
    namespace: str | None = None
    api_version: str | None = None

    def resolved_api_version(self) -> str:
        """The key's apiVersion, or the known one of its kind."""
        if self.api_version:
            return self.api_version
        if self.kind in KIND_API_VERSIONS:
            return KIND_API_VERSIONS[self.kind]
        raise ValueError(f"give apiVersion for kind {self.kind!r}")


@dataclass(frozen=True)
class BackendSetup:
    pods: int
    replicas: int
    config: Mapping[str, Any]
    objects: Sequence[Mapping[str, Any]]
    seed: int
    #: the scenario's base directory (backends resolve nothing from it; for diagnostics only)
    name: str = ""
    #: seconds the scenario's ``advance`` steps add up to (a wall-clock backend may scale its clock by it)
    advances: float = 0.0
    #: every EndpointSlice address the scenario names (setup, applies, patches): a backend that
    #: stands other addresses in for them can keep their order
    endpoint_addresses: tuple[str, ...] = ()
    #: the simulated HTTP server's URLs: url -> [(since seconds, content), ...] (``sim`` only)
    http: Mapping[str, Sequence[tuple[float, str]]] = field(default_factory=dict)


@dataclass(frozen=True)
class SettleResult:
    """What ``settle`` found: ``converged``, or what was still pending when its bound expired."""

    converged: bool
    pending: str = ""


@dataclass(frozen=True)
class TrafficResult:
    """One request's answer: ``status`` (0: no HTTP answer, ``body`` says why), the endpoint address that
    answered (``backend``, None when haproxy answered itself) and its names (``targetRef``/``hostname``),
    the response headers (lower-case names), what the backend reported it saw (``seen``: method, path,
    host, headers) and, over TLS, the certificate served (DER)."""

    status: int
    backend: str | None = None
    body: str = ""
    headers: tuple[tuple[str, str], ...] = ()
    backend_names: tuple[str, ...] = ()
    seen: Mapping[str, Any] | None = None
    certificate: bytes | None = None

    def header_values(self, name: str) -> list[str]:
        wanted = name.lower()
        return [value for key, value in self.headers if key == wanted]


@runtime_checkable
class ScenarioBackend(Protocol):
    # -- lifecycle
    async def start(self, setup: BackendSetup) -> None: ...
    async def stop(self) -> None: ...

    # -- steps
    async def apply(self, objects: Sequence[Mapping[str, Any]]) -> None: ...
    async def delete(self, key: ObjectKey) -> None: ...
    async def patch(self, key: ObjectKey, patch_type: str, patch: Any) -> None: ...
    async def advance(self, seconds: float) -> None: ...
    async def settle(self, timeout: float) -> SettleResult: ...  # noqa: ASYNC109 - the backend's time, not a wall timeout
    async def inject_fault(self, fault: FaultSpec) -> None: ...
    async def clear_faults(self, kind: str | None) -> None: ...
    async def restart_replica(self, index: int) -> None: ...
    async def restart_pod(self, pod: str) -> None: ...

    # -- observation
    def now(self) -> float: ...
    def pod_names(self) -> Sequence[str]: ...
    def rendered_config(self) -> str | None: ...
    def desired_config(self) -> str | None: ...
    def deployed_config(self, pod: str) -> str | None: ...
    def out_of_sync(self) -> Sequence[str] | None: ...
    def aux_files(self, pod: str) -> Mapping[str, str]: ...
    def reloads(self, pod: str) -> int: ...
    def runtime_updates(self, pod: str) -> int: ...
    def trace(self) -> Sequence[TraceRecord]: ...
    def metrics(self) -> str: ...
    async def list_objects(self, kind: str, namespace: str | None = None,
                           api_version: str | None = None) -> Sequence[Mapping[str, Any]]: ...
    async def traffic(self, check: TrafficExpectation) -> TrafficResult: ...


class BackendFactory(Protocol):
    """Makes backends of one kind and runs the runner's coroutine in the loop that backend needs."""

    name: str

    def unavailable_reason(self) -> str | None: ...
    def create(self) -> ScenarioBackend: ...
    def run(self, main: Callable[[], Awaitable[T]]) -> T: ...


class UnavailableFactory:
    """A backend that is not part of this build: every run is reported with ``reason``."""

    def __init__(self, name: str, reason: str) -> None:
        self.name = name
        self._reason = reason

    def unavailable_reason(self) -> str | None:
        return self._reason

    def create(self) -> ScenarioBackend:
        raise BackendUnavailable(self._reason)

    def run(self, main: Callable[[], Awaitable[T]]) -> T:
        raise BackendUnavailable(self._reason)
