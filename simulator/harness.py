"""``Harness``: a simulated cluster in one event loop under virtual time.

The fake Kubernetes API, N HAProxy pods (a Pod object plus a fake Dataplane API each, reached through
``httpx.ASGITransport``) and one or more controller replicas running the real controller code with
in-process adapters. Everything publishes into one trace of domain events with virtual timestamps
(``trace``, ``trace_jsonl()``), ordered as published, so that one seed gives one byte-identical trace.

Run it on a ``looptime`` loop (``VirtualClock.run`` or ``@pytest.mark.looptime``)::

    async with Harness(pods=2, haproxy_binary="/usr/sbin/haproxy") as h:
        await h.settle()
        h.apply(ingress("web", "web.example", "web"))
        await h.settle()

``Harness(ingress_library=True)`` runs the shipped example config (the Ingress template library, see
``simulator.cluster_objects.ingress_library_config``) instead of the small slot template; it routes
Ingresses through Services, so apply ``service(...)`` with the EndpointSlices.
        assert h.deployed_config(0) == h.deployed_config(1)

Scenario steps map onto its methods: ``apply``/``delete``/``patch``, ``advance``, ``settle``,
faults (``dataplane_errors``, ``kube_outage``, ...), ``kill_replica``/``restart_replica``,
``restart_pod``/``add_pod``/``remove_pod``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, replace
from types import TracebackType
from typing import Any

import httpx

from haptic.config.crds import all_crds
from haptic.controller.loop.controller import Controller
from haptic.controller.loop.iteration import IterationSettings
from haptic.controller.loop.webhook_binding import IterationValidators, decision_events
from haptic.controller.ports import ControllerIdentity, ControllerPorts
from haptic.controller.watch.config_loader import validate_config_object
from haptic.core import Event, SeededIds, VirtualClock
from haptic.dataplane.aux_files import AuxFiles
from haptic.k8s.leaderelection import format_micro_time
from haptic.validation.process import BlockingAsyncRunner
from haptic.validation.render_runner import InlineRenderRunner
from haptic.webhook.admission import (
    AdmissionDecision,
    AdmissionHandler,
    GroupVersionResource,
    webhook_resources,
)
from haptic.webhook.configuration import build_webhook_configuration
from simulator.cluster_objects import (
    credentials_secret,
    dataplane_password,
    haproxy_pod,
    ingress_library_config,
    lease_handed_to,
    template_config,
)
from simulator.dataplane.app import create_app
from simulator.dataplane.instance import FakeDataplane, InstanceOptions
from simulator.dataplane.local_version import local_api_version
from simulator.http_source import FakeHttpSource
from simulator.kube import FakeKubeAPI, InProcessKubeClient
from simulator.kube.admission import WebhookAdmission, admitted, enable_admission
from simulator.kube.gateway_api import serve_gateway_api_for
from simulator.kube.resources import ResourceType

JSON = dict[str, Any]
#: The controller's default credentials Secret (``ControllerIdentity.secret_name``).
_SECRET_NAME = "haproxy-credentials"
#: Where the Harness's ValidatingWebhookConfiguration points; the fake API routes it in-process.
_WEBHOOK_URL = "https://haptic-webhook.sim/validate"
_WEBHOOK_NAME = "haptic-validating-webhook"
_log = logging.getLogger(__name__)
#: Seconds without a new event before ``settle`` may call the cluster settled: longer than the
#: reconciler's debounce window (5 s) and the slots config's minimum deployment interval (2 s).
SETTLE_QUIET = 6.0


@dataclass
class SimPod:
    name: str
    ip: str
    dataplane: FakeDataplane
    transport: httpx.ASGITransport


@dataclass
class Replica:
    name: str
    controller: Controller
    task: asyncio.Task[None] | None = None
    alive: bool = False


@dataclass
class TraceEntry:
    """One published event: when, on which replica, the event, and its JSON form (``to_dict``).

    ``event`` is kept without its rendered payloads (config text, auxiliary files: the fields ``to_dict`` digests
    or omits because they are bulky), which ``data`` stands for: a run keeps every entry, and at 10,000
    Ingresses each render would keep three events' 4 MB config alive, which the controller alone does not."""

    t: float
    replica: str
    event: Event
    data: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> str:
        return json.dumps({"t": round(self.t, 6), "replica": self.replica, **self.data}, sort_keys=True,
                          separators=(",", ":"))


class Harness:
    """A simulated cluster. Build, ``await start()`` (or ``async with``), drive, ``await stop()``."""

    def __init__(
        self,
        *,
        pods: int = 2,
        replicas: int = 1,
        seed: int = 0,
        namespace: str = "haptic",
        config: JSON | None = None,
        username: str = "admin",
        password: str = "adminpwd",
        haproxy_binary: str = "haproxy",
        settings: IterationSettings | None = None,
        reload_delay: float = 0.5,
        ingress_library: bool = False,
        dataplane_version: str | None = None,
        webhook: bool | None = None,
    ) -> None:
        self.seed = seed
        self.namespace = namespace
        self.username = username
        self.password = password
        self.haproxy_binary = haproxy_binary
        # the controller's own defaults, as ``haptic run`` uses them: the local tier runs those too
        self.settings = settings or IterationSettings()
        self.reload_delay = reload_delay
        self.api = FakeKubeAPI(seed=seed)
        self.clock = VirtualClock()
        self.pods: dict[str, SimPod] = {}
        self.replicas: list[Replica] = []
        self.trace: list[TraceEntry] = []
        self._initial_pods = pods
        self._initial_replicas = replicas
        if config is None:
            config = ingress_library_config(namespace=namespace) if ingress_library else template_config(
                namespace=namespace)
        self._config = config
        self._next_ip = 10
        self.settled = False
        # None: the in-process webhook is on when the config enables it for some resource (as deployed).
        self._webhook = webhook
        self._reviewers: dict[int, AdmissionHandler] = {}
        self._clocks: dict[str, VirtualClock] = {}  # per replica: a node's wall clock may be skewed
        self._unreachable: set[str] = set()
        #: what templates' ``http.fetch`` reaches (script it with ``http_source.script``)
        self.http_source = FakeHttpSource(now=self.clock.monotonic, wall_epoch=self.clock.epoch)
        self._http_transport = httpx.ASGITransport(app=self.http_source)
        # Discovery admits pods whose Dataplane reports the local haproxy's major.minor: by default the fake
        # Dataplanes report exactly that.
        self.dataplane_version = dataplane_version or local_api_version(haproxy_binary)

    # -- lifecycle -------------------------------------------------------------------------------

    async def start(self) -> Harness:
        self.http_source.start = self.clock.monotonic()
        for crd in all_crds().values():
            self.api.create(self.rt("apiextensions.k8s.io/v1", "CustomResourceDefinition"), None, crd)
        self.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": self.namespace}})
        self.apply(credentials_secret(self.username, self.password, namespace=self.namespace))
        if self._config:
            self.apply(self._config)
        for _ in range(self._initial_pods):
            self.add_pod()
        for _ in range(self._initial_replicas):
            self.add_replica()
        if self._webhook or (self._webhook is None and self.webhook_resources()):
            self.enable_webhook()
        return self

    async def stop(self) -> None:
        for replica in self.replicas:
            if replica.task is not None and replica.alive:
                await replica.controller.shutdown(replica.task)
                replica.alive = False
        for pod in self.pods.values():
            await pod.dataplane.aclose()

    async def __aenter__(self) -> Harness:
        return await self.start()

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.stop()

    # -- objects ---------------------------------------------------------------------------------

    def rt(self, api_version: str, kind: str) -> ResourceType:
        rt = self.api.types.by_kind(api_version, kind)
        if rt is None:
            raise KeyError(f"the fake API serves no {kind} in {api_version}")
        return rt

    def apply(self, obj: Mapping[str, Any]) -> JSON:
        """Create, or replace (spec and, when given, status) — like ``kubectl apply`` of a whole object."""
        body: JSON = json.loads(json.dumps(obj))
        if body.get("kind") == "HAProxyTemplateConfig":
            # A cluster running a Gateway API config has the Gateway API CRDs installed.
            serve_gateway_api_for(self.api, body)
        rt = self.rt(body["apiVersion"], body["kind"])
        meta = body.setdefault("metadata", {})
        self._follow_credentials(body)
        namespace = meta.get("namespace") if rt.namespaced else None
        try:
            old = self.api.get(rt, namespace, meta["name"])
        except Exception:
            created: JSON = self.api.create(rt, namespace, body, keep_status=True)
            return created
        meta["resourceVersion"] = old["metadata"]["resourceVersion"]
        status = body.get("status")
        updated: JSON = self.api.update(rt, namespace, meta["name"], body)
        if status is not None and rt.has_status and status != updated.get("status"):
            updated["status"] = status
            updated = self.api.update(rt, namespace, meta["name"], updated, subresource="status")
        return updated

    async def apply_admitted(self, obj: Mapping[str, Any]) -> JSON:
        """``apply`` as a client would do it: through admission, so an enabled webhook may refuse it
        (``ApiError`` with the API server's message, e.g. ``admission webhook "..." denied the request``)."""
        body: JSON = json.loads(json.dumps(obj))
        if body.get("kind") == "HAProxyTemplateConfig":
            # A cluster running a Gateway API config has the Gateway API CRDs installed.
            serve_gateway_api_for(self.api, body)
        rt = self.rt(body["apiVersion"], body["kind"])
        meta = body.get("metadata") or {}
        namespace = meta.get("namespace") if rt.namespaced else None
        written: JSON = await admitted(self.api, rt, namespace, meta.get("name"), None, lambda: self.apply(body))
        if body["kind"] == "HAProxyTemplateConfig" and self.api.admission is not None:
            self._register_webhook()
        return written

    # -- admission webhook -----------------------------------------------------------------------

    def webhook_resources(self) -> list[GroupVersionResource]:
        """The resources the current HAProxyTemplateConfig enables the validating webhook for."""
        try:
            config, _ = validate_config_object(self.template_config(), "haproxy-config")
        except Exception:
            return []
        return webhook_resources(config.spec.watched_resources) if config is not None else []

    def enable_webhook(self) -> None:
        """The fake API calls the controller's ``AdmissionHandler`` in-process (no socket) for the resources
        the config enables the webhook for, through a ValidatingWebhookConfiguration as ``haptic run``
        registers it; the leader's replica answers (any live one while nobody leads)."""
        hook = self.api.admission if isinstance(self.api.admission, WebhookAdmission) else enable_admission(self.api)
        hook.in_process[_WEBHOOK_URL] = self._review
        self._register_webhook()

    def _register_webhook(self) -> None:
        resources = self.webhook_resources()
        rt = self.rt("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration")
        if not resources:
            with contextlib.suppress(Exception):
                self.api.delete(rt, None, _WEBHOOK_NAME)
            return
        self.apply(build_webhook_configuration(resources, "", name=_WEBHOOK_NAME, url=_WEBHOOK_URL,
                                               config_namespace=self.namespace))

    async def _review(self, body: JSON) -> JSON:
        live = [r for r in self.replicas if r.alive]
        replica = next((r for r in live if r.controller.is_leader), live[0] if live else None)
        if replica is None:
            raise httpx.ConnectError("no controller replica serves the webhook")
        handler = self._reviewers.get(id(replica.controller))
        if handler is None:
            handler = AdmissionHandler(source=IterationValidators(replica.controller))
            handler.observers.append(self._decision_recorder(replica.name))
            self._reviewers = {id(replica.controller): handler}
        return (await handler.review(body)).response()  # the whole AdmissionReview

    def _decision_recorder(self, replica: str) -> Callable[[AdmissionDecision], None]:
        def record(decision: AdmissionDecision) -> None:
            for event in decision_events(decision):
                self._record(replica, event)

        return record

    def delete(self, api_version: str, kind: str, name: str, namespace: str | None = None) -> None:
        self.api.delete(self.rt(api_version, kind), namespace, name)

    def get(self, api_version: str, kind: str, name: str, namespace: str | None = None) -> JSON:
        obj: JSON = self.api.get(self.rt(api_version, kind), namespace, name)
        return obj

    def patch(self, api_version: str, kind: str, name: str, body: Any, namespace: str | None = None,
              subresource: str | None = None) -> JSON:
        patched: JSON = self.api.patch(self.rt(api_version, kind), namespace, name, "merge", body, subresource)
        return patched

    def template_config(self) -> JSON:
        return self.get("haproxy-haptic.org/v1alpha1", "HAProxyTemplateConfig", "haproxy-config", self.namespace)

    def haproxycfg(self) -> JSON | None:
        try:
            return self.get("haproxy-haptic.org/v1alpha1", "HAProxyCfg", "haproxy-config-haproxycfg",
                            self.namespace)
        except Exception:
            return None

    def rotate_credentials(self, password: str) -> None:
        """New password on every Dataplane API and in the Secret (as an operator rotating it would)."""
        self.apply(credentials_secret(self.username, password, namespace=self.namespace))

    def set_dataplane_password(self, password: str) -> None:
        """Every fake Dataplane API (and pods added later) now accepts only ``password``."""
        self.password = password
        for pod in self.pods.values():
            pod.dataplane.options.password = password

    def _follow_credentials(self, body: Mapping[str, Any]) -> None:
        """The fake pods read the credentials Secret too: applying a new one sets their password, as an
        operator rotating it everywhere would (the controller must follow)."""
        password = dataplane_password(body, _SECRET_NAME, self.namespace)
        if password is not None:
            self.set_dataplane_password(password)

    # -- HAProxy pods ----------------------------------------------------------------------------

    def _transport(self, url: str) -> httpx.AsyncBaseTransport | None:
        host = url.split("//", 1)[-1].split("/", 1)[0].rsplit(":", 1)[0].strip("[]")
        for pod in self.pods.values():
            if pod.ip == host and pod.name not in self._unreachable:
                return pod.transport
        return _Unreachable()

    def set_reachable(self, name: str, reachable: bool) -> None:
        """``False``: connections to the pod's Dataplane API are refused (the pod itself keeps running)."""
        if name not in self.pods:
            raise KeyError(f"no pod {name!r}")
        if reachable:
            self._unreachable.discard(name)
        else:
            self._unreachable.add(name)

    def add_pod(self, name: str | None = None, api_version: str | None = None) -> SimPod:
        """A HAProxy pod; ``api_version`` is what its ``/v3/info`` reports (default: matching the controller)."""
        name = name or f"haproxy-{len(self.pods)}"
        ip = f"10.0.0.{self._next_ip}"
        self._next_ip += 1
        fake = FakeDataplane(InstanceOptions(username=self.username, password=self.password, name=name,
                                             reload_delay=self.reload_delay,
                                             api_version=api_version or self.dataplane_version))
        pod = SimPod(name, ip, fake, httpx.ASGITransport(app=create_app(fake)))
        self.pods[name] = pod
        self.apply(haproxy_pod(name, ip, self.namespace))
        return pod

    def remove_pod(self, name: str) -> None:
        self.delete("v1", "Pod", name, self.namespace)
        self.pods.pop(name)

    async def restart_pod(self, name: str) -> None:
        """The HAProxy container restarts: initial config, version 1, empty storage."""
        await self.pods[name].dataplane.restart()

    def pod(self, index_or_name: int | str) -> SimPod:
        if isinstance(index_or_name, int):
            return list(self.pods.values())[index_or_name]
        return self.pods[index_or_name]

    def deployed_config(self, pod: int | str) -> str:
        return self.pod(pod).dataplane.document.body()

    def stored_file(self, pod: int | str, kind: str, name: str) -> str | None:
        """A file in a pod's Dataplane storage (``maps``, ``ssl_certificates``, ``general``), or None."""
        stored = self.pod(pod).dataplane.storage.get(kind, name)
        return stored.content if stored is not None else None

    def counters(self, pod: int | str) -> dict[str, int]:
        return self.pod(pod).dataplane.counters.as_json()

    # -- faults ----------------------------------------------------------------------------------

    def dataplane_errors(self, pod: int | str, count: int, status: int = 503, path: str = "") -> None:
        self.pod(pod).dataplane.inject_errors(count, status, path)

    def kube_outage(self, seconds: float) -> None:
        """503 to every request for ``seconds``; the open watches are cut (see ``FakeKubeAPI.outage``)."""
        self.api.outage(seconds)

    def drop_watches(self) -> int:
        return self.api.drop_watches()

    def compact(self) -> int:
        return self.api.compact()

    # -- controller replicas ---------------------------------------------------------------------

    def add_replica(self) -> Replica:
        index = len(self.replicas)
        name = f"controller-{index}"
        replica = Replica(name, self._controller(name, index))
        self.replicas.append(replica)
        self._launch(replica)
        return replica

    def _controller(self, name: str, index: int) -> Controller:
        ports = ControllerPorts(
            kube=InProcessKubeClient(self.api, field_manager=name),
            identity=ControllerIdentity(namespace=self.namespace, pod_name=name),
            clock=self.replica_clock(name),
            ids=SeededIds(self.seed * 1000 + index),
            dataplane_transport=self._transport,
            http_transport=self._http_transport,
            run_blocking=_run_inline,
            check_runner=BlockingAsyncRunner(),
            render_runner=InlineRenderRunner(),
            webhook_render_runner=InlineRenderRunner(),
            haproxy_binary=self.haproxy_binary,
            log_name=f"haptic.{name}",
        )
        return Controller(ports, observer=lambda event: self._record(name, event), settings=self.settings)

    def replica_clock(self, name: str) -> VirtualClock:
        """The clock of replica ``name``'s node: the shared virtual time, its wall clock possibly skewed."""
        if name not in self._clocks:
            self._clocks[name] = VirtualClock(self.clock.epoch)
        return self._clocks[name]

    def skew_clock(self, index: int, offset: float) -> None:
        """Replica ``index``'s wall clock runs ``offset`` seconds ahead of the others (negative: behind), from
        now on and across its restarts; its monotonic time is the shared loop time, as on a real node."""
        self.replica_clock(self.replicas[index].name).epoch = self.clock.epoch + offset

    def _launch(self, replica: Replica) -> None:
        replica.task = asyncio.get_running_loop().create_task(replica.controller.run(), name=replica.name)
        replica.alive = True

    async def kill_replica(self, index: int) -> None:
        """A crash: the replica's task is cancelled; nothing is released (its Lease expires)."""
        replica = self.replicas[index]
        if replica.task is not None:
            replica.task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await replica.task
        replica.alive = False

    def restart_replica(self, index: int) -> Replica:
        replica = self.replicas[index]
        replica.controller = self._controller(replica.name, index + 100 * (1 + len(self.trace)))
        self._launch(replica)
        return replica

    def take_lease(self, to: int | None = None) -> str | None:
        """The Lease is taken away from the leader and handed to replica ``to`` (default: the first live
        follower), as a foreign write would: the leader must notice on its next renew (or at once through
        its Lease watch) and step down; the new holder takes over on its next campaign tick. Returns the
        new holder's name, or None when nobody leads."""
        leader = next((r for r in self.replicas if r.alive and r.controller.is_leader), None)
        if leader is None or leader.controller.iteration is None:
            return None
        elector = leader.controller.iteration.leader.elector
        if elector is None:
            return None
        followers = [r for r in self.replicas if r.alive and r is not leader]
        if to is not None:
            heir = self.replicas[to].name
        elif followers:
            heir = followers[0].name
        else:
            heir = "intruder"  # nobody to hand it to: held by a stranger until it expires
        cfg = elector.config
        rt = self.rt("coordination.k8s.io/v1", "Lease")
        lease = self.api.get(rt, cfg.namespace, cfg.lease_name)
        self.api.update(rt, cfg.namespace, cfg.lease_name,
                        lease_handed_to(lease, heir, format_micro_time(self.clock.now())))
        return heir

    def leaders(self) -> list[str]:
        return [r.name for r in self.replicas if r.alive and r.controller.is_leader]

    # -- time ------------------------------------------------------------------------------------

    async def advance(self, seconds: float) -> None:
        await asyncio.sleep(seconds)

    async def settle(self, quiet: float = SETTLE_QUIET, limit: float = 300.0, step: float = 0.5) -> float:
        """Advance until nothing was published for ``quiet`` seconds, no reload is pending and no leader
        holds a deployment back (at most ``limit`` seconds). Returns the virtual time spent; ``settled``
        says whether it converged (False: the limit was reached)."""
        loop = asyncio.get_running_loop()
        start = loop.time()
        last_len = len(self.trace)
        last_change = start
        self.settled = False
        while loop.time() - start < limit:
            await asyncio.sleep(min(step, limit - (loop.time() - start)))
            if len(self.trace) != last_len:
                last_len = len(self.trace)
                last_change = loop.time()
                continue
            if not self.busy() and loop.time() - last_change >= quiet:
                self.settled = True
                break
        return loop.time() - start

    def busy(self) -> str:
        """What still has to happen before the cluster is quiet, or ``""``: no replica leads, a reload
        pending on a pod, or what a live replica reports pending (``Controller.convergence``: initial sync,
        reinitialization, a change in the debounce window, a deployment in flight, pending or in retry
        backoff, a discovery retry)."""
        if self.replicas and not self.leaders():
            alive = sum(1 for r in self.replicas if r.alive)
            return f"no replica leads ({alive} of {len(self.replicas)} alive)"
        for pod in self.pods.values():
            if pod.dataplane.reloads.pending:
                return f"reload pending on {pod.name}"
        for replica in self.replicas:
            if not replica.alive:
                continue
            pending = replica.controller.convergence()["pending"]  # what /debug/vars/convergence shows
            if pending:
                return f"{replica.name}: {'; '.join(str(p) for p in pending)}"
        return ""

    # -- trace -----------------------------------------------------------------------------------

    def _record(self, replica: str, event: Event) -> None:
        t = asyncio.get_running_loop().time()
        self.trace.append(TraceEntry(t, replica, _without_payloads(event), event.to_dict()))

    def events(self, type_name: str, replica: str | None = None) -> list[Event]:
        return [e.event for e in self.trace if e.event.type == type_name and (replica is None or e.replica == replica)]

    def entries(self, type_name: str) -> list[TraceEntry]:
        return [e for e in self.trace if e.event.type == type_name]

    def trace_jsonl(self) -> str:
        return "".join(entry.to_json() + "\n" for entry in self.trace)


def _without_payloads(event: Event) -> Event:
    """``event`` with its rendered config texts and auxiliary files emptied (see ``TraceEntry``)."""
    empty: dict[str, Any] = {}
    for f in fields(event):
        if f.metadata.get("omit") or f.metadata.get("digest"):
            value = getattr(event, f.name)
            if isinstance(value, str) and value:
                empty[f.name] = ""
            elif isinstance(value, AuxFiles) and not value.is_empty:
                empty[f.name] = AuxFiles()
    return replace(event, **empty) if empty else event


async def _run_inline(work: Callable[[], Any]) -> Any:
    """Blocking work on the loop: virtual time stands still meanwhile (as during ``haproxy -c``)."""
    return work()


class _Unreachable(httpx.AsyncBaseTransport):
    """What a pod IP without a running Dataplane API answers: connection refused."""

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError(f"connection refused: {request.url}", request=request)
