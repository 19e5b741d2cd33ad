"""The ``cluster`` backend (alias ``kind``): scenario files against an existing installation.

Any cluster reached through a kubeconfig (Kind, k3d, minikube, staging) where the controller and the
HAProxy pods run as deployed from ``deploy/``; where things are comes from ``ClusterOptions``
(``HAPTIC_CLUSTER_*``). Nothing here is a fake: objects are applied with the official ``kubernetes``
client (``haptic.live.kube_client``, server-side apply), pods are read through their Dataplane API,
the controller through its debug server.

The scenario is adapted, as on ``local``:

- its HAProxyTemplateConfig replaces the installation's (the one the controller reads: name and
  namespace from the options) with the installation's pod selector, credentials and Dataplane block
  (port and storage directories of the real pods); the original is restored at the end, and every
  object the scenario applied is deleted;
- each EndpointSlice ``address:port`` becomes an echo server (a Pod running ``echo_image``, or a
  server on this machine's loopback), and what the backend shows is translated back, so that the same
  ``contains``/``equals_file``/``traffic.backend`` expectations hold;
- the scenario's names for its config and ``HAProxyCfg`` are the installation's in ``list_objects``.

What a real cluster cannot be asked to do is not applicable, with the reason: faults inside the fakes
(Dataplane errors, slow or failing reloads, 409 storms) or inside the API server (outages, watch
drops, compaction). A leader loss or replica restart deletes the controller's Pod (the Deployment
starts another at once, so ``duration`` is not honoured: noted in the trace), when the Lease holder is
a Pod in the cluster.

Observations are read on every step and every ``advance`` (the runner's observation methods are
synchronous): the deployed config, version and reload IDs of each pod, the published ``HAProxyCfg``,
the replicas' events. Reloads count the reload IDs the pod's Dataplane API lists beyond those it
listed at the start; runtime updates count configuration version increments not accompanied by a
reload (the Dataplane API bumps the version for every runtime server update, without a reload).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import re
import shutil
from collections.abc import Awaitable, Callable, Mapping, Sequence
from copy import deepcopy
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeVar

import httpx

from haptic.config.models import PodSelector
from haptic.core.zstd_frames import decode_content
from haptic.dataplane import plan
from haptic.k8s.api import JSON, ApiError, NotFound, ResourceRef, Selectors, default_plural
from simulator.local.echo import EchoServer
from simulator.local.network import LoopbackNetwork

from .backend import (
    BackendSetup,
    BackendUnavailable,
    NotApplicable,
    ObjectKey,
    SettleResult,
    TraceRecord,
    TrafficResult,
)
from .cluster_access import AccessError, ClusterOptions, ControllerView, PodState, PodView, PortForward
from .local_backend import AddressMap, echo_ports, reconcile_pending, slice_pairs
from .schema import FaultSpec, TrafficExpectation
from .traffic_send import send_traffic, traffic_port

if TYPE_CHECKING:
    from haptic.live.kube_client import LiveKubeAPI

T = TypeVar("T")

CONFIG_GROUP_VERSION = "haproxy-haptic.org/v1alpha1"
TEMPLATE_CONFIGS = ResourceRef(CONFIG_GROUP_VERSION, "haproxytemplateconfigs", True, "HAProxyTemplateConfig")
HAPROXY_CFGS = ResourceRef(CONFIG_GROUP_VERSION, "haproxycfgs", True, "HAProxyCfg")
PODS = ResourceRef("v1", "pods", True, "Pod")
SECRETS = ResourceRef("v1", "secrets", True, "Secret")
LEASES = ResourceRef("coordination.k8s.io/v1", "leases", True, "Lease")
FIELD_MANAGER = "haptic-scenario"
_CLUSTER_SCOPED = frozenset({"Namespace", "IngressClass", "ClusterRole", "ClusterRoleBinding", "Node",
                             "CustomResourceDefinition", "ValidatingWebhookConfiguration", "GatewayClass"})
_NOT_ON_A_CLUSTER = {
    "kube_outage": "an API server outage cannot be caused on a real cluster",
    "watch_drop": "watch streams of a real API server cannot be cut from outside",
    "compaction": "etcd compaction of a real cluster is not triggered by tests",
    "dataplane_5xx": "5xx answers are a fault of the fake Dataplane API",
    "dataplane_slow": "slow answers are a fault of the fake Dataplane API",
    "dataplane_409_storm": "409 storms are a fault of the fake Dataplane API",
    "reload_failure": "failing reloads are a fault of the fake Dataplane API",
    "http_fetch_failure": "only sim has the simulated HTTP server behind http.fetch",
}
_ENVELOPE = ("event_id", "timestamp", "correlation_id", "causation_id")
_ECHO_PORT = 8080
_POLL = 0.25


plural = default_plural


def ref_of(api_version: str, kind: str) -> ResourceRef:
    return ResourceRef(api_version, plural(kind), kind not in _CLUSTER_SCOPED, kind)


def adapt_to_installation(config: Mapping[str, Any], installed: Mapping[str, Any]) -> JSON:
    """The scenario's config under the installation's name, namespace, pods, credentials and storage."""
    adapted: JSON = deepcopy(dict(config))
    spec = adapted.setdefault("spec", {})
    ours = installed.get("spec") or {}
    adapted["metadata"] = {"name": installed["metadata"]["name"], "namespace": installed["metadata"]["namespace"]}
    spec["podSelector"] = deepcopy(ours.get("podSelector") or {})
    spec["credentialsSecretRef"] = deepcopy(ours.get("credentialsSecretRef") or {})
    dataplane = dict(spec.get("dataplane") or {})
    for key in ("port", "mapsDir", "sslCertsDir", "generalStorageDir", "configFile"):
        if key in (ours.get("dataplane") or {}):
            dataplane[key] = ours["dataplane"][key]
    spec["dataplane"] = dataplane
    return adapted


class ClusterBackend:
    #: the runner reports ``events`` expectations not applicable when a backend has no event trace
    observes_events = True

    def __init__(self, options: ClusterOptions) -> None:
        self.options = options
        self.kube: LiveKubeAPI | None = None
        self.addresses = AddressMap()
        self._http = httpx.AsyncClient(timeout=5.0, trust_env=False)
        self._t0 = 0.0
        self._wall0 = 0.0
        self._records: list[TraceRecord] = []
        self._seen: set[str] = set()
        self._scenario_meta: tuple[str, str] = ("", "")
        self._original: JSON | None = None
        self._applied: list[ObjectKey] = []
        self._echo_pods: list[str] = []
        self._echo_servers: list[EchoServer] = []
        self._network: LoopbackNetwork | None = None
        self._echo_port = _ECHO_PORT
        self._forwards: list[PortForward] = []
        self._pods: list[PodView] = []
        self._pod_ips: dict[str, str] = {}
        self._controllers: list[ControllerView] = []
        self._states: dict[str, PodState] = {}
        self._start_reloads: dict[str, frozenset[str]] = {}
        self._runtime: dict[str, int] = {}
        self._last: dict[str, tuple[int, int]] = {}
        self._published: str | None = None
        self._poller: asyncio.Task[None] | None = None

    @property
    def k(self) -> LiveKubeAPI:
        if self.kube is None:
            raise RuntimeError("the cluster backend is not started")
        return self.kube

    # -- lifecycle --------------------------------------------------------------------------------

    async def start(self, setup: BackendSetup) -> None:
        from haptic.live.kube_client import connect
        if setup.http:
            raise BackendUnavailable("setup.http: only sim has the simulated HTTP server behind http.fetch")

        loop = asyncio.get_running_loop()
        self._t0 = loop.time()
        self._wall0 = datetime.now().timestamp()  # events carry wall timestamps; the trace shows seconds since start
        o = self.options
        meta = setup.config.get("metadata") or {}
        self._scenario_meta = (str(meta.get("name") or "haproxy-config"), str(meta.get("namespace") or "haptic"))
        self.kube = await connect(kubeconfig=o.kubeconfig, context=o.context, host=o.server)
        try:
            self._original = await self.k.get(TEMPLATE_CONFIGS, o.config_name, o.namespace)
        except NotFound:
            raise NotApplicable(f"no HAProxyTemplateConfig {o.namespace}/{o.config_name} in the cluster: deploy "
                                "deploy/ first (HAPTIC_CLUSTER_NAMESPACE / HAPTIC_CLUSTER_CONFIG name it)") from None
        await self._find_pods(setup.pods)
        await self._find_controllers(setup.replicas)
        if o.echo == "local":
            self._network = LoopbackNetwork()
            self._echo_port = self._network.free_port([self._network.echo_ip(i) for i in range(1, 9)])
        await self._refresh()
        self._start_reloads = {name: state.reload_ids for name, state in self._states.items()}
        adapted = adapt_to_installation(setup.config, self._original)
        await self._wait_observed(await self._replace_config(adapted))
        await self.apply(setup.objects)
        await self._number_by_leadership()
        self._note("cluster.started", pods=len(self._pods), replicas=len(self._controllers))
        self._poller = asyncio.create_task(self._poll_forever(), name="cluster-events")

    async def _find_pods(self, wanted: int) -> None:
        o = self.options
        spec = (self._original or {}).get("spec") or {}
        selector = PodSelector.model_validate(spec.get("podSelector") or {}).label_selector
        port = int((spec.get("dataplane") or {}).get("port") or 5555)
        items = (await self.k.list(PODS, o.namespace, Selectors(label_selector=selector))).items
        running = sorted((p for p in items if (p.get("status") or {}).get("phase") == "Running"
                          and not (p.get("metadata") or {}).get("deletionTimestamp")),
                         key=lambda p: str(p["metadata"]["name"]))
        if len(running) != wanted:
            raise NotApplicable(f"the scenario needs {wanted} HAProxy pod(s), the cluster runs {len(running)} "
                                f"matching {selector or 'everything'} in {o.namespace}")
        secret_name = str((spec.get("credentialsSecretRef") or {}).get("name") or "haproxy-credentials")
        secret = await self.k.get(SECRETS, secret_name, o.namespace)
        data = secret.get("data") or {}
        auth = tuple(base64.b64decode(str(data.get(k) or "")).decode() for k in ("dataplane_username",
                                                                               "dataplane_password"))
        for pod in running:
            name = str(pod["metadata"]["name"])
            ip = str((pod.get("status") or {}).get("podIP") or "")
            self._pod_ips[name] = ip
            address = f"{ip}:{port}"
            if o.dataplane == "port-forward":
                forward = PortForward(o, o.namespace, name, port)
                self._forwards.append(forward)
                address = await forward.start()
            self._pods.append(PodView(name, f"http://{address}/v3", self._http, (auth[0], auth[1])))

    async def _find_controllers(self, wanted: int) -> None:
        o = self.options
        urls = list(o.controller_urls)
        if not urls:
            items = (await self.k.list(PODS, o.namespace, Selectors(label_selector=o.controller_selector))).items
            for pod in sorted(items, key=lambda p: str(p["metadata"]["name"])):
                if (pod.get("status") or {}).get("phase") != "Running":
                    continue
                forward = PortForward(o, o.namespace, str(pod["metadata"]["name"]), o.controller_debug_port)
                self._forwards.append(forward)
                urls.append(f"http://{await forward.start()}")
        if len(urls) != wanted:
            raise NotApplicable(f"the scenario needs {wanted} controller replica(s), the cluster has {len(urls)}")
        self._controllers = [ControllerView(i, url, self._http) for i, url in enumerate(urls)]

    async def _number_by_leadership(self, within: float = 60.0) -> None:
        """Replica numbers are the backend's: the replica that leads once the scenario's config runs is
        ``controller-0``, as on sim and local (which let replica 0 take the Lease first). On a cluster
        the config change restarts every replica's iteration and whichever campaigns first wins."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + within
        leader: int | None = None
        while leader is None and loop.time() < deadline and len(self._controllers) > 1:
            await self._poll_events()
            if any(r.type == "leader.became" for r in self._records):  # the scenario's iteration elected one
                leading = [await c.is_leader() for c in self._controllers]
                leader = leading.index(True) if leading.count(True) == 1 else None
            if leader is None:
                await asyncio.sleep(_POLL)
        if not leader:
            return
        order = [leader, *(i for i in range(len(self._controllers)) if i != leader)]
        renumber = {f"controller-{old}": f"controller-{new}" for new, old in enumerate(order)}
        urls = [self._controllers[i].base_url for i in order]
        self._controllers = [ControllerView(i, url, self._http) for i, url in enumerate(urls)]
        self._records = [TraceRecord(r.t, renumber.get(r.source, r.source), r.type, r.data) for r in self._records]
        self._note("cluster.replicas.numbered", leader=urls[0])

    async def stop(self) -> None:
        if self._poller is not None:
            self._poller.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._poller
        try:
            if self.kube is not None:
                await self._clean_up()
        finally:
            for forward in self._forwards:
                await forward.stop()
            for echo in self._echo_servers:
                await echo.stop()
            await self._http.aclose()
            if self.kube is not None:
                await self.kube.close()

    async def _clean_up(self) -> None:
        """Deletes what the scenario applied (newest first), then puts the installation's config back."""
        for key in reversed(self._applied):
            with contextlib.suppress(NotFound):
                await self.k.delete(ref_of(key.resolved_api_version(), key.kind), key.name, key.namespace)
        for name in self._echo_pods:
            with contextlib.suppress(NotFound):
                await self.k.delete(PODS, name, self.options.echo_namespace)
        if self._original is not None:
            o = self.options
            current = await self.k.get(TEMPLATE_CONFIGS, o.config_name, o.namespace)
            restored = {**current, "spec": self._original.get("spec") or {}}
            written = await self.k.replace(TEMPLATE_CONFIGS, restored)
            # the next scenario's config must not land within the controller's debounce of this one
            # (it would see no change and keep the iteration it runs): wait until the restore is taken
            await self._wait_observed(written)
            await self.settle(60.0)

    async def _replace_config(self, config: Mapping[str, Any]) -> JSON:
        """The installation's config replaced whole by ``config``'s spec (an update, not an apply: a
        server-side apply keeps fields other managers own, such as those the last restore wrote, and
        the merged spec would be neither config)."""
        o = self.options
        current = await self.k.get(TEMPLATE_CONFIGS, o.config_name, o.namespace)
        return await self.k.replace(TEMPLATE_CONFIGS, {**current, "spec": deepcopy(config.get("spec") or {})})

    async def _wait_observed(self, written: Mapping[str, Any], within: float = 60.0) -> None:
        """Until the controller reports the generation of ``written`` in the config's status."""
        o = self.options
        generation = (written.get("metadata") or {}).get("generation")
        loop = asyncio.get_running_loop()
        deadline = loop.time() + within
        while generation is not None and loop.time() < deadline:
            current = await self.k.get(TEMPLATE_CONFIGS, o.config_name, o.namespace)
            if (current.get("status") or {}).get("observedGeneration") == generation:
                return
            await asyncio.sleep(_POLL)

    def _note(self, type_: str, **data: Any) -> None:
        self._records.append(TraceRecord(round(self.now(), 6), "cluster", type_, data))

    # -- observation refresh ----------------------------------------------------------------------

    async def _poll_forever(self) -> None:
        while True:
            await asyncio.sleep(_POLL)
            await self._poll_events()

    async def _poll_events(self) -> None:
        # One batch from every replica, in time order: replica by replica, a follower's earlier events
        # would land after the leader's later ones, and invariants read the trace in order.
        batch: list[TraceRecord] = []
        for controller in self._controllers:
            for item in await controller.events():
                record = self._event_record(controller, item)
                if record is not None:
                    batch.append(record)
        self._records.extend(sorted(batch, key=lambda r: r.t))

    def _event_record(self, controller: ControllerView, item: Mapping[str, Any]) -> TraceRecord | None:
        details = dict(item.get("details") or {})
        event_id = f"{controller.base_url}/{details.get('event_id') or item.get('timestamp')}/{item.get('type')}"
        if event_id in self._seen:
            return None
        self._seen.add(event_id)
        try:
            t = datetime.fromisoformat(str(item.get("timestamp"))).timestamp() - self._wall0
        except ValueError:
            t = self.now()
        if t < 0:
            return None  # the installation's history before this scenario started: not part of its trace
        data = {k: v for k, v in details.items() if k not in _ENVELOPE}
        return TraceRecord(round(t, 6), f"controller-{controller.index}", str(item.get("type")), data)

    async def _refresh(self) -> None:
        """Reads every pod, the published config and the replicas' events (the synchronous views show this)."""
        states = await asyncio.gather(*(pod.read() for pod in self._pods))
        for pod, state in zip(self._pods, states, strict=True):
            previous = self._states.get(pod.name)
            if state.config is None and previous is not None:
                continue  # unreadable this time: keep the last reading
            self._states[pod.name] = state
            self._count_runtime(pod.name, state)
        self._published = await self._read_published()
        await self._poll_events()

    def _count_runtime(self, pod: str, state: PodState) -> None:
        if state.version is None:
            return
        reloads = len(state.reload_ids)
        last = self._last.get(pod)
        self._last[pod] = (state.version, reloads)
        if last is None or state.version < last[0]:
            return  # first reading, or the pod restarted (version back to 1): a new baseline
        self._runtime[pod] = self._runtime.get(pod, 0) + max(0, (state.version - last[0]) - max(0, reloads - last[1]))

    async def _read_published(self) -> str | None:
        o = self.options
        try:
            spec = (await self.k.get(HAPROXY_CFGS, f"{o.config_name}-haproxycfg", o.namespace)).get("spec") or {}
        except (NotFound, ApiError):
            return None
        return decode_content(str(spec.get("content") or ""), bool(spec.get("compressed")))

    # -- steps ------------------------------------------------------------------------------------

    async def _apply_one(self, obj: Mapping[str, Any], *, track: bool = True) -> JSON:
        meta = obj.get("metadata") or {}
        kind, api_version = str(obj.get("kind")), str(obj.get("apiVersion"))
        ref = ref_of(api_version, kind)
        namespace = str(meta.get("namespace") or "default") if ref.namespaced else None
        body = {k: v for k, v in obj.items() if k != "status"}
        body["metadata"] = {k: v for k, v in meta.items() if k not in ("resourceVersion", "uid", "managedFields")}
        if namespace is not None:
            body["metadata"]["namespace"] = namespace
        written = await self.k.patch(ref, str(meta["name"]), body, "apply", namespace=namespace,
                                     field_manager=FIELD_MANAGER, force=True)
        key = ObjectKey(kind, str(meta["name"]), namespace, api_version)
        if track and key not in self._applied:
            self._applied.append(key)
        return written

    async def apply(self, objects: Sequence[Mapping[str, Any]]) -> None:
        for obj in objects:
            if self._is_scenario_config(ObjectKey(str(obj.get("kind")), str((obj.get("metadata") or {}).get("name")),
                                                  (obj.get("metadata") or {}).get("namespace"))):
                assert self._original is not None
                await self._wait_observed(await self._replace_config(adapt_to_installation(obj, self._original)))
                continue
            await self._apply_one(await self._promote(self._into_installation(obj)))
        await self._refresh()

    def _is_scenario_config(self, key: ObjectKey) -> bool:
        name, namespace = self._scenario_meta
        return key.kind == "HAProxyTemplateConfig" and key.name == name and (key.namespace or namespace) == namespace

    def _key_into_installation(self, key: ObjectKey) -> ObjectKey:
        """The scenario's name for an object, as this installation calls it: its config is the installation's
        config, its controller namespace the installation's namespace."""
        o = self.options
        if self._is_scenario_config(key):
            return ObjectKey(key.kind, o.config_name, o.namespace, key.api_version)
        if key.namespace and key.namespace == self._scenario_meta[1]:
            return ObjectKey(key.kind, key.name, o.namespace, key.api_version)
        return key

    def _into_installation(self, obj: Mapping[str, Any]) -> Mapping[str, Any]:
        """Objects in the scenario's config namespace go to the installation's; its credentials Secret
        is the installation's, which the HAProxy pods read only when they start."""
        o = self.options
        meta = obj.get("metadata") or {}
        if meta.get("namespace") != self._scenario_meta[1]:
            return obj
        spec = (self._original or {}).get("spec") or {}
        credentials = str((spec.get("credentialsSecretRef") or {}).get("name") or "haproxy-credentials")
        if obj.get("kind") == "Secret" and meta.get("name") == credentials:
            raise NotApplicable("rotating the Dataplane API credentials on cluster: the HAProxy pods read them "
                                "only when they start (the fakes switch at once)")
        return {**obj, "metadata": {**meta, "namespace": o.namespace}}

    async def _promote(self, obj: Mapping[str, Any]) -> JSON:
        """EndpointSlices point at echo servers named after the scenario's addresses."""
        copy: JSON = deepcopy(dict(obj))
        if copy.get("kind") != "EndpointSlice":
            return copy
        self.addresses.learn_names(copy)
        for address, port in slice_pairs(copy):
            if (address, port) not in self.addresses.echoes:
                self.addresses.add(address, port, await self._echo(address))
        rewritten = []
        for ep in copy.get("endpoints") or []:
            hosts = [self.addresses.echoes[(str(a), p)].host for a in ep.get("addresses") or []
                     for p in sorted({p for (addr, p) in self.addresses.echoes if addr == str(a)})[:1]]
            rewritten.append({**ep, "addresses": hosts})
        copy["endpoints"] = rewritten
        copy["ports"] = echo_ports(copy.get("ports"), self._echo_port)
        return copy

    async def _echo(self, address: str) -> EchoServer:
        """An echo server named ``address``: on loopback, or a Pod whose IP stands in for it."""
        if self.options.echo == "local":
            assert self._network is not None
            echo = EchoServer(address, self._network.echo_ip(len(self._echo_servers) + 1), self._echo_port)
            await echo.start()
            self._echo_servers.append(echo)
            return echo
        name = "haptic-echo-" + re.sub(r"[^a-z0-9]+", "-", address.lower()).strip("-")
        namespace = self.options.echo_namespace
        pod: JSON = {
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": namespace, "labels": {"app.kubernetes.io/name": "haptic-echo"}},
            "spec": {
                "securityContext": {"runAsNonRoot": True, "runAsUser": 65532,
                                    "seccompProfile": {"type": "RuntimeDefault"}},
                "containers": [{
                    "name": "echo", "image": self.options.echo_image, "imagePullPolicy": "IfNotPresent",
                    "command": ["python3", "-m", "simulator.scenario.cluster_echo", "--name", address,
                                "--port", str(_ECHO_PORT)],
                    "ports": [{"containerPort": _ECHO_PORT}],
                    "readinessProbe": {"tcpSocket": {"port": _ECHO_PORT}, "periodSeconds": 1},
                    "securityContext": {"allowPrivilegeEscalation": False, "readOnlyRootFilesystem": True,
                                        "capabilities": {"drop": ["ALL"]}},
                }],
            },
        }
        with contextlib.suppress(ApiError):
            await self.k.create(PODS, pod, namespace)
        self._echo_pods.append(name)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 120.0
        while loop.time() < deadline:
            status = (await self.k.get(PODS, name, namespace)).get("status") or {}
            ready = any(c.get("type") == "Ready" and c.get("status") == "True" for c in status.get("conditions") or [])
            if ready and status.get("podIP"):
                # only its address and name matter: the pod serves, this object is never started
                return EchoServer(address, str(status["podIP"]), _ECHO_PORT)
            await asyncio.sleep(1.0)
        raise BackendUnavailable(f"echo pod {namespace}/{name} ({self.options.echo_image}) not ready within 120s")

    def _namespace_of(self, key: ObjectKey) -> str | None:
        return (key.namespace or "default") if key.kind not in _CLUSTER_SCOPED else None

    async def delete(self, key: ObjectKey) -> None:
        if self._is_scenario_config(key):
            raise NotApplicable("deleting the HAProxyTemplateConfig on cluster: it is the installation's own, "
                                "which this backend replaces and restores but never removes")
        key = self._key_into_installation(key)
        await self.k.delete(ref_of(key.resolved_api_version(), key.kind), key.name, self._namespace_of(key))
        await self._refresh()

    async def patch(self, key: ObjectKey, patch_type: str, patch: Any) -> None:
        if key.kind == "EndpointSlice":
            raise NotApplicable("patching an EndpointSlice is not supported on cluster (apply the whole slice: its "
                                "addresses are promoted to echo servers)")
        key = self._key_into_installation(key)
        await self.k.patch(ref_of(key.resolved_api_version(), key.kind), key.name, patch, patch_type,  # type: ignore[arg-type]
                           namespace=self._namespace_of(key))
        await self._refresh()

    async def advance(self, seconds: float) -> None:
        await asyncio.sleep(max(seconds, 0.0))
        await self._refresh()

    async def settle(self, timeout: float) -> SettleResult:  # noqa: ASYNC109 - the scenario's bound, in wall seconds
        """Converged as on ``local``: a replica leads, no replica reports work pending
        (``/debug/vars/convergence``), every pod runs the published config, after a quiet second;
        at the bound, what was still pending."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        last: tuple[object, ...] | None = None
        since = loop.time()
        while True:
            await self._refresh()
            state = (self._published, tuple(s.version for s in self._states.values()), len(self._records))
            if state != last:
                last, since = state, loop.time()
            quiet = loop.time() - since >= 1.0
            pending = await self._pending() if quiet or loop.time() >= deadline else None
            if pending == "":
                return SettleResult(True)
            if loop.time() >= deadline:
                return SettleResult(False, pending or "the controllers kept changing things")
            await asyncio.sleep(0.2)

    async def _pending(self) -> str:
        """What keeps the installation from being converged, or ``""``."""
        leader = await self._leader()
        if leader is None:
            return "no replica leads"
        for controller in self._controllers:
            reported = await controller.convergence()
            if reported is None:
                return f"controller-{controller.index} does not report its convergence"
            if reported.get("pending"):
                return f"controller-{controller.index}: " + "; ".join(str(p) for p in reported["pending"])
        if reconcile_pending(self._records):
            return "a store change waits for its reconciliation"
        stale = self.out_of_sync() or []
        return f"{len(stale)} pod(s) do not run the published config: {', '.join(stale)}" if stale else ""

    async def inject_fault(self, fault: FaultSpec) -> None:
        if fault.kind in _NOT_ON_A_CLUSTER:
            raise NotApplicable(f"fault {fault.kind} on cluster: {_NOT_ON_A_CLUSTER[fault.kind]}")
        if fault.kind == "leader_loss":
            index = fault.replica if fault.replica is not None else await self._leader()
            if index is None:
                self._note("fault.leader_loss.no_leader")
                return
            await self._delete_controller_pod(index, fault.duration)
        elif fault.kind == "pod_restart":
            raise NotApplicable("pod_restart on cluster: a deleted HAProxy pod comes back under another name")
        else:
            raise NotApplicable(f"fault {fault.kind} is not supported on cluster")
        await self._refresh()

    async def _leader(self) -> int | None:
        for controller in self._controllers:
            if await controller.is_leader():
                return controller.index
        return None

    async def _delete_controller_pod(self, index: int, duration: float | None) -> None:
        """A crash of replica ``index``: its Pod (the Lease holder's identity) deleted at once."""
        o = self.options
        holder = await self._lease_holder()
        if holder is None:
            raise NotApplicable("leader_loss on cluster: no Lease holder to find the leader's Pod by")
        try:
            await self.k.get(PODS, holder, o.namespace)
        except NotFound:
            raise NotApplicable(f"leader_loss on cluster: the Lease holder {holder!r} is no Pod in {o.namespace} "
                                "(the controllers do not run as Pods here)") from None
        await self.k.delete(PODS, holder, o.namespace)
        self._note("replica.killed", replica=index, pod=holder, duration_honoured=duration is None,
                   note="a Pod deletion (SIGTERM, then SIGKILL after the grace period); the Deployment replaces it")

    async def _lease_holder(self) -> str | None:
        o = self.options
        spec = (self._original or {}).get("spec") or {}
        name = str(((spec.get("controller") or {}).get("leaderElection") or {}).get("leaseName") or "haptic-leader")
        try:
            lease = await self.k.get(LEASES, name, o.namespace)
        except NotFound:
            return None
        holder = (lease.get("spec") or {}).get("holderIdentity")
        return str(holder) if holder else None

    async def clear_faults(self, kind: str | None) -> None:
        if kind is not None and kind in _NOT_ON_A_CLUSTER:
            raise NotApplicable(f"fault {kind} on cluster: {_NOT_ON_A_CLUSTER[kind]}")

    async def restart_replica(self, index: int) -> None:
        if index >= len(self._controllers):
            raise ValueError(f"no replica #{index}; there are {len(self._controllers)}")
        raise NotApplicable("restart of a replica on cluster: replicas are named by their debug URL, not by Pod")

    async def restart_pod(self, pod: str) -> None:
        raise NotApplicable("restarting a HAProxy pod on cluster: a deleted pod comes back under another name")

    # -- observation ------------------------------------------------------------------------------

    def now(self) -> float:
        try:
            return asyncio.get_running_loop().time() - self._t0
        except RuntimeError:
            return 0.0

    def pod_names(self) -> Sequence[str]:
        return [p.name for p in self._pods]

    def rendered_config(self) -> str | None:
        return self.desired_config()

    def desired_config(self) -> str | None:
        return None if self._published is None else self.addresses.to_scenario(self._published)

    def deployed_config(self, pod: str) -> str | None:
        state = self._states.get(pod)
        return None if state is None or state.config is None else self.addresses.to_scenario(state.config)

    def out_of_sync(self) -> Sequence[str] | None:
        if self._published is None:
            return None
        published = self._published
        return [name for name in self.pod_names()
                if (s := self._states.get(name)) is None or s.config is None or plan(s.config, published).operations]

    def aux_files(self, pod: str) -> Mapping[str, str]:
        state = self._states.get(pod)
        return {} if state is None else {n: self.addresses.to_scenario(c) for n, c in sorted(state.files.items())}

    def unreadable_files(self, pod: str) -> set[str]:
        """Deployed files whose content a Dataplane API does not serve (certificates): presence only."""
        state = self._states.get(pod)
        return set() if state is None else set(state.unreadable)

    def reloads(self, pod: str) -> int:
        state = self._states.get(pod)
        return 0 if state is None else len(state.reload_ids - self._start_reloads.get(pod, frozenset()))

    def runtime_updates(self, pod: str) -> int:
        return self._runtime.get(pod, 0)

    def trace(self) -> Sequence[TraceRecord]:
        return self._records

    def metrics(self) -> str:
        raise NotApplicable("use metrics_async: the controller's /metrics is read over HTTP")

    async def metrics_async(self) -> str:
        index = await self._leader()
        return await self._controllers[index if index is not None else 0].metrics()

    async def list_objects(self, kind: str, namespace: str | None = None,
                           api_version: str | None = None) -> Sequence[Mapping[str, Any]]:
        """Objects of ``kind``; the scenario's config and HAProxyCfg under the scenario's names."""
        o = self.options
        name, scenario_ns = self._scenario_meta
        ours = kind in ("HAProxyTemplateConfig", "HAProxyCfg")
        ref = TEMPLATE_CONFIGS if kind == "HAProxyTemplateConfig" else HAPROXY_CFGS if kind == "HAProxyCfg" \
            else ref_of(api_version or _api_version(kind), kind)
        listed = o.namespace if ours and namespace in (None, scenario_ns) else namespace
        try:
            items = list((await self.k.list(ref, listed)).items)
        except NotFound:
            return []
        if not ours:
            return items
        renamed = []
        for item in items:
            copy: JSON = deepcopy(item)
            meta = copy.setdefault("metadata", {})
            if meta.get("name") == o.config_name:
                meta["name"] = name
            elif meta.get("name") == f"{o.config_name}-haproxycfg":
                meta["name"] = f"{name}-haproxycfg"
                spec = copy.get("spec") or {}
                if isinstance(spec.get("content"), str) and not spec.get("compressed"):
                    spec["content"] = self.addresses.to_scenario(spec["content"])
            meta["namespace"] = scenario_ns
            renamed.append(copy)
        return renamed

    async def traffic(self, check: TrafficExpectation) -> TrafficResult:
        """One real request through the pod's haproxy (``simulator.scenario.traffic_send``). Through
        ``HAPTIC_CLUSTER_TRAFFIC`` (a Service, for plain http to the default port) any pod may answer."""
        pod = check.pod if isinstance(check.pod, str) else self.pod_names()[check.pod]
        if self.options.traffic_address and check.scheme == "http" and check.port is None and check.listener is None:
            host, _, service_port = self.options.traffic_address.rpartition(":")
            return await send_traffic(host, int(service_port), check, self.addresses.names)
        state = self._states.get(pod)
        if state is None or state.config is None:
            raise NotApplicable(f"the config of pod {pod} could not be read (or set HAPTIC_CLUSTER_TRAFFIC)")
        port = traffic_port(pod, state.config, check)
        return await send_traffic(self._pod_ips[pod], port, check, self.addresses.names)


def _api_version(kind: str) -> str:
    from .backend import KIND_API_VERSIONS

    return KIND_API_VERSIONS.get(kind, CONFIG_GROUP_VERSION)


class ClusterFactory:
    name = "cluster"

    def __init__(self, options: ClusterOptions | None = None, name: str = "cluster") -> None:
        self.name = name
        self._options = options
        self._error: str | None = None
        if options is None:
            try:
                self._options = ClusterOptions.from_env()
            except AccessError as exc:
                self._error = str(exc)

    def unavailable_reason(self) -> str | None:
        if self._error is not None:
            return self._error
        o = self._options
        assert o is not None
        if not (o.server or o.kubeconfig):
            return ("the cluster backend runs against an existing installation: set HAPTIC_CLUSTER_KUBECONFIG (or "
                    "KUBECONFIG) to a cluster where deploy/ is applied (make e2e does it on Kind)")
        needs_kubectl = o.dataplane == "port-forward" or not o.controller_urls
        if needs_kubectl and shutil.which(o.kubectl) is None:
            return f"the cluster backend port-forwards with kubectl, which is not installed ({o.kubectl})"
        return None

    def create(self) -> ClusterBackend:
        reason = self.unavailable_reason()
        if reason is not None:
            raise BackendUnavailable(reason)
        assert self._options is not None
        return ClusterBackend(self._options)

    def run(self, main: Callable[[], Awaitable[T]]) -> T:
        async def wrapped() -> T:
            return await main()

        return asyncio.run(wrapped())
