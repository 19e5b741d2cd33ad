"""``Discovery``: which HAProxy pods get the config.

A pod is a candidate when it matches ``podSelector`` (the ``haproxy-pods`` store), is not being
deleted, is ``Running`` with a ``podIP`` and the container exposing the Dataplane port is ready.
A new candidate is admitted after ``GET /v3/info`` answers with the major.minor of the local
``haproxy -v``. A transient failure of that check (a 5xx, a timeout, a refused connection) is retried
within seconds (1 s doubling to 5 s): a pod left out silently for a minute is a pod not running the
config, and ``retry_pending()`` says so to observers that wait for convergence. A pod
reporting another version is skipped with a log line (once per version) and checked again on every
later discovery pass and at least every 60 s, so an upgraded sidecar gets admitted. Every change of
the admitted set publishes the full set (``haproxy.pods.discovered``, sorted by pod) and one
``haproxy.pod.terminated`` per pod that left. The last set is replayed on ``leader.became``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from haptic.controller.component import IterationComponent
from haptic.controller.context import IterationContext
from haptic.names import HAPROXY_PODS
from haptic.controller.events import (
    BecameLeader,
    CredentialsUpdated,
    DataplaneEndpoint,
    HAProxyPodsDiscovered,
    HAProxyPodTerminated,
    IndexSynchronized,
    ResourceIndexUpdated,
)
from haptic.validation.local_haproxy import local_major_minor
from haptic.core import Event, EventBus
from haptic.dataplane.api_errors import DataplaneError
from haptic.dataplane.client import DataplaneClient

VERSION_CHECK_TIMEOUT = 10.0
RETRY_INITIAL = 1.0
#: A transient version-check failure is retried at least this often.
RETRY_TRANSIENT_MAX = 5.0
#: A pod reporting another HAProxy version is checked again this often.
RETRY_MAX = 60.0


def endpoint_url(ip: str, port: int) -> str:
    host = f"[{ip}]" if ":" in ip else ip
    return f"http://{host}:{port}/v3"


def pod_endpoint(pod: Mapping[str, Any], port: int) -> DataplaneEndpoint | None:
    """The pod's Dataplane endpoint when the pod can be configured now, else None."""
    meta = pod.get("metadata") or {}
    status = pod.get("status") or {}
    if meta.get("deletionTimestamp") or status.get("phase") != "Running" or not status.get("podIP"):
        return None
    container = None
    for c in (pod.get("spec") or {}).get("containers") or []:
        if any(p.get("containerPort") == port for p in c.get("ports") or []):
            container = c.get("name")
            break
    if container is None:
        return None
    ready = any(s.get("name") == container and s.get("ready") for s in status.get("containerStatuses") or [])
    if not ready:
        return None
    return DataplaneEndpoint(url=endpoint_url(str(status["podIP"]), port), pod_name=str(meta.get("name")),
                             pod_namespace=str(meta.get("namespace") or ""))


class Discovery(IterationComponent):
    name = "discovery"
    subscribes = (ResourceIndexUpdated, IndexSynchronized, CredentialsUpdated, BecameLeader)

    def __init__(self, bus: EventBus, ctx: IterationContext) -> None:
        super().__init__(bus, ctx)
        self.admitted: dict[str, DataplaneEndpoint] = {}
        self.mismatched: dict[str, str] = {}  # url -> the version it reported (re-checked later)
        self.local = local_major_minor(ctx.capabilities)
        self.failures: dict[str, int] = {}
        self.last: HAProxyPodsDiscovered | None = None
        self.synchronized = False
        self._retry = self.clock.timer(self._retry_due)

    async def on_stop(self) -> None:
        self._retry.cancel()

    async def handle(self, event: Event) -> None:
        if isinstance(event, BecameLeader):
            if self.last is not None:
                self.publish(HAProxyPodsDiscovered(endpoints=self.last.endpoints))
            return
        if isinstance(event, IndexSynchronized):
            self.synchronized = True
        elif isinstance(event, ResourceIndexUpdated) and event.resource_type != HAPROXY_PODS:
            return
        if self.synchronized:
            await self.discover()

    def retry_pending(self) -> str:
        """Which pods wait for a retry of a transiently failed version check (``""``: none). A pod with
        another HAProxy version is not pending: it stays out until it is upgraded."""
        failing = sorted(self.failures)
        if not failing:
            return ""
        return f"version check of {', '.join(failing)} to be retried"

    def _retry_due(self) -> None:
        self.spawn(self.discover(), "retry")

    def candidates(self) -> list[DataplaneEndpoint]:
        port = self.ctx.spec.dataplane.port
        found = [pod_endpoint(p, port) for p in self.ctx.stores[HAPROXY_PODS].list()]
        return sorted((e for e in found if e is not None), key=lambda e: (e.pod_namespace, e.pod_name))

    async def discover(self) -> None:
        candidates = self.candidates()
        wanted = {e.pod_name: e for e in candidates}
        changed = False
        for name in sorted(self.admitted):
            current = wanted.get(name)
            if current is None or current.url != self.admitted[name].url:
                gone = self.admitted.pop(name)
                changed = True
                if current is None:
                    self.publish(HAProxyPodTerminated(pod_name=gone.pod_name, pod_namespace=gone.pod_namespace))
        retry_in: float | None = None
        for endpoint in candidates:
            if endpoint.pod_name in self.admitted:
                continue
            verdict = await self._check(endpoint)
            if verdict is None:
                self.admitted[endpoint.pod_name] = endpoint
                self.failures.pop(endpoint.url, None)
                self.mismatched.pop(endpoint.url, None)
                changed = True
            elif verdict == "mismatch":
                retry_in = RETRY_MAX if retry_in is None else min(retry_in, RETRY_MAX)
            else:
                n = self.failures[endpoint.url] = self.failures.get(endpoint.url, 0) + 1
                delay = min(RETRY_INITIAL * 2 ** (n - 1), RETRY_TRANSIENT_MAX)
                retry_in = delay if retry_in is None else min(retry_in, delay)
        # Pods that left meanwhile have nothing to retry.
        for url in [u for u in self.failures if u not in {e.url for e in candidates}]:
            del self.failures[url]
        due = self._retry.deadline
        if retry_in is not None and (due is None or due > self.clock.monotonic() + retry_in):
            self._retry.start(retry_in)
        if changed or self.last is None:
            order = sorted(self.admitted, key=lambda n: (self.admitted[n].pod_namespace, n))
            endpoints = tuple(self.admitted[n] for n in order)
            self.last = HAProxyPodsDiscovered(endpoints=endpoints)
            self.publish(self.last)

    async def _check(self, endpoint: DataplaneEndpoint) -> str | None:
        """None when admitted, "retry" on a transient failure, "mismatch" for another HAProxy version."""
        creds = self.ctx.credentials
        client = DataplaneClient(endpoint.url, creds.username, creds.password.get_secret_value(),
                                 transport=self.ctx.ports.dataplane_transport(endpoint.url),
                                 timeout=VERSION_CHECK_TIMEOUT, sleep=self.clock.sleep, clock=self.clock.monotonic)
        try:
            async with self.clock.timeout(VERSION_CHECK_TIMEOUT):
                info = await client.info()
        except (DataplaneError, TimeoutError, OSError) as exc:
            self.logger.warning("version check of pod %s (%s) failed: %s; will retry", endpoint.pod_name, endpoint.url,
                             exc)
            return "retry"
        finally:
            await client.aclose()
        if self.local is not None and (info.major, info.minor) != self.local:
            if self.mismatched.get(endpoint.url) != info.version:
                self.logger.warning("skipping pod %s (%s): its Dataplane reports version %s, the local haproxy is "
                                    "%d.%d (major.minor must match); checking again later", endpoint.pod_name,
                                    endpoint.url, info.version, *self.local)
            self.mismatched[endpoint.url] = info.version
            return "mismatch"
        if endpoint.url in self.mismatched:
            self.logger.info("pod %s now reports version %s: admitted", endpoint.pod_name, info.version)
        return None
