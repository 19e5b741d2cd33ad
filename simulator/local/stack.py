"""``LocalStack``: the fake Kubernetes API over HTTP, N local HAProxy pods, echo backends and the
controller as a subprocess, started and stopped together (an async context manager)::

    async with LocalStack(StackOptions(pods=2)) as stack:
        echo = await stack.add_echo("echo-1")
        stack.apply(objects.service("web", "demo"))
        stack.set_endpoints("web", "demo", [echo])
        stack.apply(objects.ingress("web", "demo", "web.local", "web"))
        report = await stack.wait_for_traffic(0, "web.local", lambda r: r.flowed)

Objects are written straight into the fake API (``stack.kube``); the controller sees them through
its watches like any other client's writes. ``kubeconfig`` is written for kubectl and the controller.

A scenario runner's ``local`` backend maps onto it: setup -> ``StackOptions(pods, replicas,
template_config=..., seed=...)`` then ``apply`` per object; ``apply``/``delete``/``patch``;
``advance`` -> real sleep; ``settle`` -> ``settle()`` (the published config runs on every pod, in
substance: ``out_of_sync()``); events -> ``events.events_from_log(controllers[i].lines)``;
kube faults -> ``stack.kube.faults``, ``stack.kube.compact()``/``drop_watches()``; Dataplane faults ->
``stack.pods[i].fake`` (``inject_errors``, ``slow_down``, ``conflict_storm``, ``fail_next_reloads``);
``restart_controller(i)``, ``restart_pod(i)``; observations -> ``pods[i].counters()`` (reloads,
runtime updates), ``pods[i].storage``, ``metrics(i)``, each replica's log lines
(``controllers[i].lines``) and ``probe``/``wait_for_traffic`` for traffic checks.
"""

from __future__ import annotations

import asyncio
import atexit
import random
import secrets
import shutil
import tempfile
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType

import httpx

from haptic.config.crds import all_crds
from haptic.core.tls import default_ssl_context
from haptic.core.zstd_frames import decode_content
from haptic.dataplane import plan
from haptic.k8s.api import JSON, NotFound
from simulator.kube import FakeKubeAPI, KubeHTTPServer, write_kubeconfig
from simulator.kube.admission import admitted, enable_admission
from simulator.kube.gateway_api import serve_gateway_api_for
from simulator.local import objects
from simulator.local.echo import EchoServer
from simulator.local.network import LoopbackNetwork
from simulator.local.pod import POD_LABELS, LocalHAProxyPod
from simulator.local.process import HAPTIC_COMMAND, ControllerProcess, LineSink, bytecode_env, controller_command
from simulator.local.service_proxy import ServiceProxy
from simulator.local.traffic import TrafficReport, probe, wait_for_traffic


class StackError(RuntimeError):
    pass


@dataclass
class StackOptions:
    pods: int = 2
    replicas: int = 1  # controller processes (leader election decides which one deploys)
    haproxy_bin: str = field(default_factory=lambda: shutil.which("haproxy") or "/usr/sbin/haproxy")
    workdir: Path | None = None  # None: a temporary directory removed on stop
    namespace: str = "haptic"
    config_name: str = "haptic-config"
    secret_name: str = "haproxy-credentials"
    ingress_class: str = "haptic"
    username: str = "admin"
    start_controller: bool = True
    controller_command: Sequence[str] | None = None  # None: controller_command(haproxy_bin), i.e. `haptic run`
    controller_env: dict[str, str] = field(default_factory=dict)
    log_level: str = "info"
    reload_delay: float = 0.2
    server_slots: int = 4
    template_config: JSON | None = None  # None: objects.demo_template_config for this stack's ports
    seed: int | None = None  # seeds the loopback block choice (ports still come from the kernel)
    sink: LineSink | None = None  # receives the controller's output lines
    #: the controllers serve the validating webhook (generated certificates) behind one ``ServiceProxy``
    #: address, and the fake API calls it over HTTPS for the resources the config enables it for
    webhook: bool = False


class LocalStack:
    def __init__(self, options: StackOptions | None = None) -> None:
        self.options = options or StackOptions()
        self.network = LoopbackNetwork(random.Random(self.options.seed))
        # The kube fake is served to humans and real clients: wall-clock timestamps keep kubectl's AGE right.
        self.kube = FakeKubeAPI(now=lambda: datetime.now(UTC))
        self.kube_server: KubeHTTPServer | None = None
        self.pods: list[LocalHAProxyPod] = []
        self.echoes: list[EchoServer] = []
        self.controllers: list[ControllerProcess | None] = []
        self.password = secrets.token_urlsafe(16)  # the Dataplane API's; goes only into the Secret
        self.kubeconfig: Path | None = None
        self.workdir: Path | None = None
        self._tempdir: tempfile.TemporaryDirectory[str] | None = None
        self.dataplane_port = self.http_port = self.https_port = self.stats_port = self.echo_port = 0
        self.metrics_ports: list[int] = []
        self.debug_ports: list[int] = []
        self.webhook_ports: list[int] = []
        self.webhook_proxy: ServiceProxy | None = None
        self.webhook_certs: Path | None = None

    def __repr__(self) -> str:
        return f"LocalStack({self.network.prefix}.0/24, pods={len(self.pods)}, echoes={len(self.echoes)})"

    async def __aenter__(self) -> LocalStack:
        try:
            await self.start()
        except BaseException:
            await self.stop()
            raise
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.stop()

    # -- lifecycle ---------------------------------------------------------------------------------

    async def start(self) -> None:
        opts = self.options
        # Whatever ends this process short of SIGKILL (an exception escaping the loop, a broken
        # pipe), no haproxy outlives it: they run in their own sessions, out of reach of the terminal.
        atexit.register(self._kill_haproxy)
        if opts.workdir is None:
            self._tempdir = tempfile.TemporaryDirectory(prefix="haptic-local-")
            self.workdir = Path(self._tempdir.name)
        else:
            self.workdir = opts.workdir
            self.workdir.mkdir(parents=True, exist_ok=True)
        self._choose_ports()
        self.kube_server = KubeHTTPServer(self.kube, "127.0.0.1", 0)
        await self.kube_server.start()
        self.kubeconfig = write_kubeconfig(self.workdir / "kubeconfig", self.kube_server.url)
        if opts.webhook:
            await self._start_webhook_service()
        self._seed_cluster()
        for _ in range(opts.pods):
            await self.add_pod()
        if opts.start_controller:
            for replica in range(opts.replicas):
                await self.start_controller(replica)

    def _choose_ports(self) -> None:
        pod_hosts = [self.network.pod_ip(i) for i in range(max(self.options.pods, 1) + 4)]
        taken: list[int] = []
        for attr in ("dataplane_port", "http_port", "https_port", "stats_port"):
            port = self.network.free_port(pod_hosts, avoid=taken)
            taken.append(port)
            setattr(self, attr, port)
        self.echo_port = self.network.free_port([self.network.echo_ip(i) for i in (1, 2, 3, 50, 100, 154)],
                                                avoid=taken)
        for replica in range(max(self.options.replicas, 1)):
            for ports in (self.metrics_ports, self.debug_ports, self.webhook_ports):
                ports.append(self.network.free_port([self.network.controller_ip(replica)], avoid=taken))
                taken.append(ports[-1])

    def debug_url(self, replica: int) -> str:
        """Base URL of replica ``replica``'s debug server (``/healthz``, ``/debug/...``)."""
        return f"http://{self.network.controller_ip(replica)}:{self.debug_ports[replica]}"

    def metrics_url(self, replica: int) -> str:
        return f"http://{self.network.controller_ip(replica)}:{self.metrics_ports[replica]}/metrics"

    async def _start_webhook_service(self) -> None:
        """Serving certificates for 127.0.0.1 (written by ``haptic webhook certs``, as a user would), the
        proxy standing for the webhook Service, and admission calls from the fake API."""
        assert self.workdir is not None
        certs = self.workdir / "webhook-certs"
        done = await asyncio.create_subprocess_exec(
            *HAPTIC_COMMAND, "webhook", "certs", "-o", str(certs), "--ip", "127.0.0.1",
            "--namespace", self.options.namespace, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
        output, _ = await done.communicate()
        if done.returncode != 0:
            raise StackError(f"haptic webhook certs failed: {output.decode(errors='replace').strip()}")
        self.webhook_certs = certs
        self.webhook_proxy = ServiceProxy("127.0.0.1", 0, lambda: [(self.network.controller_ip(replica), port)
                                                                  for replica, port in enumerate(self.webhook_ports)])
        await self.webhook_proxy.start()
        enable_admission(self.kube)

    @property
    def webhook_url(self) -> str | None:
        return None if self.webhook_proxy is None else f"https://127.0.0.1:{self.webhook_proxy.port}/validate"

    def _seed_cluster(self) -> None:
        opts = self.options
        crd_type = self.kube.types.by_kind("apiextensions.k8s.io/v1", "CustomResourceDefinition")
        assert crd_type is not None
        for crd in all_crds().values():
            self.kube.create(crd_type, None, crd)
        self.apply(objects.namespace(opts.namespace))
        self.apply(objects.credentials_secret(opts.secret_name, opts.namespace, opts.username, self.password))
        self.apply(objects.ingress_class(opts.ingress_class))
        self.apply(self.template_config())

    def template_config(self) -> JSON:
        opts = self.options
        if opts.template_config is not None:
            return opts.template_config
        # Expanded, as a real API server (CRD schema) needs it; the controller would expand it too.
        return objects.expand_template_libraries(objects.demo_template_config(
            opts.config_name, opts.namespace, pod_labels=POD_LABELS, dataplane_port=self.dataplane_port,
            http_port=self.http_port, https_port=self.https_port, stats_port=self.stats_port,
            secret_name=opts.secret_name, ingress_class_name=opts.ingress_class, server_slots=opts.server_slots))

    def controller_env(self, replica: int = 0) -> dict[str, str]:
        opts = self.options
        assert self.kubeconfig is not None
        env = {
            "KUBECONFIG": str(self.kubeconfig),
            "POD_NAME": f"haptic-controller-{replica}",
            "POD_NAMESPACE": opts.namespace,
            "CRD_NAME": opts.config_name,
            "SECRET_NAME": opts.secret_name,
            "LOG_LEVEL": opts.log_level,
            "METRICS_PORT": str(self.metrics_ports[replica]),
            "DEBUG_PORT": str(self.debug_ports[replica]),
            "PYTHONUNBUFFERED": "1",
            **bytecode_env(),
        }
        if self.webhook_url is not None:
            env.update(WEBHOOK_CERT_DIR=str(self.webhook_certs), WEBHOOK_PORT=str(self.webhook_ports[replica]),
                       WEBHOOK_URL=self.webhook_url)
        env.update(opts.controller_env)
        return env

    @property
    def controller(self) -> ControllerProcess | None:
        """Replica 0 (the only one unless ``replicas`` > 1)."""
        return self.controllers[0] if self.controllers else None

    async def start_controller(self, replica: int = 0) -> ControllerProcess:
        if not 0 <= replica < len(self.metrics_ports):
            raise StackError(f"replica {replica} does not exist (the stack has {len(self.metrics_ports)})")
        while len(self.controllers) <= replica:
            self.controllers.append(None)
        current = self.controllers[replica]
        if current is not None and current.running:
            raise StackError(f"controller replica {replica} is already running")
        command = self.options.controller_command or controller_command(
            self.options.haproxy_bin, bind_address=self.network.controller_ip(replica))
        name = "controller" if self.options.replicas == 1 else f"controller-{replica}"
        process = ControllerProcess(name, self.controller_env(replica), command=command, sink=self.options.sink)
        self.controllers[replica] = process
        await process.start()
        return process

    async def stop_controller(self, replica: int = 0) -> int | None:
        """SIGTERM (then SIGKILL) one replica; returns its exit code."""
        process = self.controllers[replica] if replica < len(self.controllers) else None
        return None if process is None else await process.stop()

    async def restart_controller(self, replica: int = 0) -> ControllerProcess:
        await self.stop_controller(replica)
        return await self.start_controller(replica)

    def controllers_alive(self) -> bool:
        return any(c is not None and c.running for c in self.controllers)

    async def stop(self) -> None:
        """Stops everything that was started (in reverse order); safe to call more than once.

        A cancellation arriving meanwhile (a second Ctrl-C) does not leave processes behind: every
        step still runs, and the cancellation is re-raised at the end."""
        cancelled = False

        async def step(work: Awaitable[object]) -> None:
            nonlocal cancelled
            try:
                await work
            except asyncio.CancelledError:
                cancelled = True
            except Exception:  # cleanup goes on; the failure is already in the logs
                pass

        for process in self.controllers:
            if process is not None:
                await step(process.stop())
        for pod in reversed(self.pods):
            await step(pod.stop())
            pod.kill()  # in case stop() was cut short
        self.pods = []
        for echo in self.echoes:
            await step(echo.stop())
        if self.webhook_proxy is not None:
            await step(self.webhook_proxy.stop())
            self.webhook_proxy = None
        if self.kube_server is not None:
            await step(self.kube_server.stop())
            self.kube_server = None
        if self._tempdir is not None:
            self._tempdir.cleanup()
            self._tempdir = None
        atexit.unregister(self._kill_haproxy)
        if cancelled:
            raise asyncio.CancelledError

    def _kill_haproxy(self) -> None:
        for pod in self.pods:
            pod.kill()

    # -- pods, backends, objects -------------------------------------------------------------------

    async def add_pod(self) -> LocalHAProxyPod:
        assert self.workdir is not None
        index = len(self.pods)
        name = f"haproxy-{index}"
        pod = LocalHAProxyPod(name, self.network.pod_ip(index), self.dataplane_port, self.workdir / name,
                              haproxy_bin=self.options.haproxy_bin, namespace=self.options.namespace,
                              username=self.options.username, password=self.password,
                              reload_delay=self.options.reload_delay)
        await pod.start()
        self.pods.append(pod)
        self.apply(pod.pod_object(self.http_port))
        return pod

    async def add_echo(self, name: str | None = None, index: int | None = None) -> EchoServer:
        """An echo backend on the block's echo address ``index`` (default: the next unused one)."""
        taken = {e.host for e in self.echoes}
        if index is None:
            index = next(i for i in range(1, 1 + len(self.echoes) + 1) if self.network.echo_ip(i) not in taken)
        elif self.network.echo_ip(index) in taken:
            raise StackError(f"echo address {self.network.echo_ip(index)} is taken")
        echo = EchoServer(name or f"echo-{index}", self.network.echo_ip(index), self.echo_port)
        await echo.start()
        self.echoes.append(echo)
        return echo

    def apply(self, obj: JSON) -> JSON:
        """Creates ``obj`` (keeping its status) or replaces the stored one (and its status, if given)."""
        meta = obj.get("metadata") or {}
        if obj.get("kind") == "HAProxyTemplateConfig":
            # A cluster running a Gateway API config has the Gateway API CRDs installed.
            serve_gateway_api_for(self.kube, obj)
        rt = self.kube.types.by_kind(str(obj.get("apiVersion")), str(obj.get("kind")))
        if rt is None:
            raise StackError(f"the fake API serves no {obj.get('kind')} in {obj.get('apiVersion')}")
        ns = meta.get("namespace") if rt.namespaced else None
        try:
            old = self.kube.get(rt, ns, str(meta.get("name")))
        except NotFound:
            return self.kube.create(rt, ns, obj, keep_status=True)
        body = {**obj, "metadata": {**meta, "resourceVersion": old["metadata"]["resourceVersion"]}}
        updated = self.kube.update(rt, ns, str(meta["name"]), body)
        if rt.has_status and "status" in obj and obj["status"] != updated.get("status"):
            # The main resource ignores status (as the API does); the kubelet's part goes through /status.
            status_body = {**updated, "status": obj["status"]}
            updated = self.kube.update(rt, ns, str(meta["name"]), status_body, subresource="status")
        return updated

    async def apply_admitted(self, obj: JSON) -> JSON:
        """``apply`` as a client's write: through the validating webhooks (``ApiError`` when one denies it)."""
        meta = obj.get("metadata") or {}
        rt = self.kube.types.by_kind(str(obj.get("apiVersion")), str(obj.get("kind")))
        if rt is None:
            raise StackError(f"the fake API serves no {obj.get('kind')} in {obj.get('apiVersion')}")
        ns = meta.get("namespace") if rt.namespaced else None
        return await admitted(self.kube, rt, ns, meta.get("name"), None, lambda: self.apply(obj))

    def delete(self, api_version: str, kind: str, ns: str | None, name: str) -> None:
        rt = self.kube.types.by_kind(api_version, kind)
        if rt is None:
            raise StackError(f"the fake API serves no {kind} in {api_version}")
        self.kube.delete(rt, ns if rt.namespaced else None, name)

    def set_endpoints(self, service_name: str, ns: str, echoes: Sequence[EchoServer]) -> JSON:
        """The Service's EndpointSlice lists exactly ``echoes`` (all on the stack's echo port)."""
        return self.apply(objects.endpoint_slice(service_name, ns, [e.host for e in echoes], self.echo_port))

    # -- observation -------------------------------------------------------------------------------

    def pod_address(self, index: int, port: int | None = None) -> str:
        return f"{self.pods[index].ip}:{port or self.http_port}"

    async def probe(self, index: int, host: str, *, path: str = "/", count: int = 6) -> TrafficReport:
        return await probe(self.pod_address(index), host, path=path, count=count)

    async def wait_for_traffic(self, index: int, host: str, accept: Callable[[TrafficReport], bool], *,
                               path: str = "/", count: int = 6, within: float = 30.0) -> TrafficReport:
        """Probes pod ``index`` until ``accept`` holds; gives up early when the controller died."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + within
        while True:
            remaining = max(deadline - loop.time(), 0.0)
            report = await wait_for_traffic(self.pod_address(index), host, accept, path=path, count=count,
                                            within=min(remaining, 2.0))
            if accept(report) or loop.time() >= deadline:
                return report
            if self.options.start_controller and self.controllers and not self.controllers_alive():
                return report

    def deployed_config(self, index: int) -> str:
        """Pod ``index``'s configuration as pushed, without the Dataplane API's ``# _version=N`` line."""
        return "".join(line for line in self.pods[index].fake.raw().splitlines(keepends=True)
                       if not line.startswith("# _version="))

    def published_config(self) -> str | None:
        """The configuration the controller published (its ``HAProxyCfg``), None before the first one."""
        rt = self.kube.types.by_kind("haproxy-haptic.org/v1alpha1", "HAProxyCfg")
        if rt is None:
            return None
        name = f"{self.template_config()['metadata']['name']}-haproxycfg"
        try:
            spec = self.kube.get(rt, self.options.namespace, name).get("spec") or {}
        except NotFound:
            return None
        return decode_content(str(spec.get("content") or ""), bool(spec.get("compressed")))

    def out_of_sync(self) -> list[str] | None:
        """Pods whose configuration differs in substance from the published one (the planner finds an
        operation; runtime updates rewrite server lines, text equality is too strict); None before a
        configuration was published."""
        published = self.published_config()
        if published is None:
            return None
        return [pod.name for index, pod in enumerate(self.pods)
                if plan(self.deployed_config(index), published).operations]

    async def settle(self, within: float = 30.0, *, quiet: float = 1.0) -> bool:
        """Waits until every pod runs the published configuration and nothing changed for ``quiet``
        seconds (published checksum, pods' versions); False when ``within`` passes first."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + within
        last: tuple[object, ...] | None = None
        stable_since = loop.time()
        while loop.time() < deadline:
            state = (self.published_config(), tuple(pod.fake.version for pod in self.pods))
            if state != last:
                last, stable_since = state, loop.time()
            elif self.out_of_sync() == [] and loop.time() - stable_since >= quiet:
                return True
            await asyncio.sleep(0.1)
        return False

    async def patch(self, api_version: str, kind: str, ns: str | None, name: str, patch_type: str,
                    body: object) -> JSON:
        """``merge``, ``json``, ``strategic`` or ``apply`` patch, as a client would send it (through admission)."""
        rt = self.kube.types.by_kind(api_version, kind)
        if rt is None:
            raise StackError(f"the fake API serves no {kind} in {api_version}")
        namespace = ns if rt.namespaced else None
        return await admitted(self.kube, rt, namespace, name, None, lambda: self.kube.patch(
            rt, namespace, name, patch_type, body, manager="haptic-sim-local"))

    async def restart_pod(self, index: int) -> None:
        """A container restart: haproxy starts over on the initial config (Dataplane version back to 1)
        and the Pod's ``restartCount`` goes up, as the kubelet would report it."""
        pod = self.pods[index]
        await pod.fake.restart()
        pod.restarts += 1
        self.apply(pod.pod_object(self.http_port))

    async def metrics(self, replica: int = 0) -> str:
        """The replica's Prometheus exposition (empty when it does not answer)."""
        try:
            async with httpx.AsyncClient(timeout=5.0, trust_env=False, verify=default_ssl_context()) as client:
                response = await client.get(self.metrics_url(replica))
        except httpx.HTTPError:
            return ""
        return response.text if response.status_code == 200 else ""
