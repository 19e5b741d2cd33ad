"""The demo story on a ``LocalStack``: deploy an Ingress, send traffic, scale, show the runtime update.

``run_demo`` returns an exit code: 0 when every step's traffic check passed, 1 when traffic did not
flow (or did not reach the new backend after scaling), 2 when scaling needed a reload, 3 when the
stack could not start. Everything it prints goes through ``out`` (one line per call).
"""

from __future__ import annotations

import asyncio
import os
import shlex
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from simulator.local import objects
from simulator.local.echo import EchoServer
from simulator.local.logs import LogFollower
from simulator.local.network import NetworkError
from simulator.local.stack import LocalStack, StackOptions
from simulator.local.summary import pod_summary
from simulator.local.traffic import TrafficReport

Printer = Callable[[str], None]

APP_NAMESPACE = "demo"
APP_HOST = "web.demo.local"
APP_SERVICE = "web"

EXIT_OK, EXIT_NO_TRAFFIC, EXIT_RELOADED, EXIT_STACK = 0, 1, 2, 3


@dataclass
class DemoOptions:
    pods: int = 2
    timeout: float = 90.0  # seconds for the first deployment; later steps get half
    stay: bool = False  # keep the stack up after the story until interrupted
    show_controller_log: bool = True
    show_haproxy_log: bool = False  # each pod's haproxy log (request lines name frontend, backend, server)
    log_level: str = "info"
    controller_command: Sequence[str] | None = None  # None: the stack's `haptic run`
    requests: int = 6
    # Called once the stack runs: the servers it started may have installed signal handlers of their
    # own (uvicorn does), so the caller re-installs its Ctrl-C handling here.
    after_start: Callable[[], None] | None = None


def _servers_are(names: Sequence[str]) -> Callable[[TrafficReport], bool]:
    wanted = sorted(names)
    return lambda report: report.flowed and report.servers == wanted


class Demo:
    def __init__(self, options: DemoOptions, out: Printer) -> None:
        self.options = options
        self.out = out

    def step(self, text: str) -> None:
        self.out("")
        self.out(f"==> {text}")

    def _controller_line(self, _name: str, line: str) -> None:
        if self.options.show_controller_log:
            self.out(f"  controller | {line}")

    def _haproxy_line(self, name: str, line: str) -> None:
        self.out(f"  {name} | {line}")

    async def run(self) -> int:
        opts = self.options
        stack_options = StackOptions(pods=opts.pods, log_level=opts.log_level, sink=self._controller_line,
                                     controller_command=opts.controller_command)
        self.step(f"starting the local stack: fake Kubernetes API, {opts.pods} HAProxy pod(s), the controller")
        try:
            stack = LocalStack(stack_options)
        except NetworkError as exc:
            self.out(f"demo: {exc}")
            return EXIT_STACK
        try:
            async with stack:
                if opts.after_start is not None:
                    opts.after_start()
                followers = [LogFollower(pod.name, pod.log_path, self._haproxy_line) for pod in stack.pods]
                for follower in followers if opts.show_haproxy_log else []:
                    follower.start()
                try:
                    return await self._story(stack)
                finally:
                    for follower in followers if opts.show_haproxy_log else []:
                        await follower.stop()
        except (OSError, RuntimeError) as exc:
            self.out(f"demo: the local stack failed: {exc}")
            return EXIT_STACK
        finally:
            codes = [c.returncode for c in stack.controllers if c is not None]
            self.step("stopped: controller, HAProxy pods, echo servers and the fake API are down"
                      + (f" (controller exit code {', '.join(map(str, codes))})" if codes else ""))

    async def _story(self, stack: LocalStack) -> int:
        opts = self.options
        assert stack.kube_server is not None
        self.out(f"  fake Kubernetes API  {stack.kube_server.url}  (export KUBECONFIG={stack.kubeconfig})")
        for pod in stack.pods:
            self.out(f"  {pod.name:<19} Dataplane API {pod.url}, haproxy workers {await pod.worker_pids()}, "
                     f"traffic on {pod.ip}:{stack.http_port}")
        if stack.controller is not None:
            self.out(f"  controller           pid {stack.controller.process and stack.controller.process.pid}: "
                     f"{shlex.join(stack.controller.command)}")

        self.step("starting echo backends and creating Service, EndpointSlice and Ingress "
                  f"({APP_NAMESPACE}/{APP_SERVICE}, host {APP_HOST})")
        echoes = [await stack.add_echo() for _ in range(3)]
        for echo in echoes:
            self.out(f"  {echo.name} listening on {echo.address}")
        stack.apply(objects.namespace(APP_NAMESPACE))
        stack.apply(objects.service(APP_SERVICE, APP_NAMESPACE))
        stack.set_endpoints(APP_SERVICE, APP_NAMESPACE, echoes[:2])
        stack.apply(objects.ingress(APP_SERVICE, APP_NAMESPACE, APP_HOST, APP_SERVICE,
                                    ingress_class_name=stack.options.ingress_class))
        self.out(f"  EndpointSlice {APP_SERVICE}-local lists {echoes[0].name}, {echoes[1].name}")

        self.step("waiting for the controller to render, validate and deploy; then sending requests")
        first = [e.name for e in echoes[:2]]
        if not await self._traffic_on_all_pods(stack, first, opts.timeout):
            return EXIT_NO_TRAFFIC
        self._summaries(stack)
        self._published(stack)
        await self._kubectl(stack, "-n", APP_NAMESPACE, "get", "ingress", "-o", "custom-columns=INGRESS:.metadata.name,"
                            "CLASS:.spec.ingressClassName,HOSTS:.spec.rules[*].host,"
                            "ADDRESS:.status.loadBalancer.ingress[*].ip")
        await self._kubectl(stack, "-n", stack.options.namespace, "get", "haproxytemplateconfigs,haproxycfgs")
        await self._kubectl(stack, "-n", stack.options.namespace, "get", "pods", "-o",
                            "custom-columns=POD:.metadata.name,IP:.status.podIP,"
                            "DATAPLANE-PORT:.spec.containers[1].ports[0].containerPort")
        await self._kubectl(stack, "-n", stack.options.namespace, "get", "leases", "-o",
                            "custom-columns=LEASE:.metadata.name,HOLDER:.spec.holderIdentity")

        self.step(f"scaling: adding {echoes[2].name} to the EndpointSlice (expect a runtime update, no reload)")
        before = {pod.name: (pod.counters()["reloads"], await pod.worker_pids()) for pod in stack.pods}
        stack.set_endpoints(APP_SERVICE, APP_NAMESPACE, echoes)
        if not await self._traffic_on_all_pods(stack, [e.name for e in echoes], opts.timeout / 2):
            return EXIT_NO_TRAFFIC
        reloaded = await self._report_runtime(stack, before)

        self.step(f"scaling down: the EndpointSlice keeps only {echoes[2].name}")
        before = {pod.name: (pod.counters()["reloads"], await pod.worker_pids()) for pod in stack.pods}
        stack.set_endpoints(APP_SERVICE, APP_NAMESPACE, echoes[2:])
        if not await self._traffic_on_all_pods(stack, [echoes[2].name], opts.timeout / 2):
            return EXIT_NO_TRAFFIC
        reloaded = await self._report_runtime(stack, before) or reloaded
        self._summaries(stack)
        self._hits(echoes)

        if opts.stay:
            await self._stay(stack)
        if reloaded:
            self.out("demo: FAILED: scaling reloaded HAProxy instead of using the runtime API")
            return EXIT_RELOADED
        self.out("")
        self.out("demo: OK: traffic flowed through every HAProxy pod; scaling was applied without a reload")
        return EXIT_OK

    async def _traffic_on_all_pods(self, stack: LocalStack, servers: Sequence[str], within: float) -> bool:
        accept = _servers_are(servers)
        count = max(self.options.requests, 2 * len(servers))  # round robin: every backend answers twice
        ok = True
        loop = asyncio.get_running_loop()
        deadline = loop.time() + within  # one budget for all pods: they converge together
        for index, pod in enumerate(stack.pods):
            report = await stack.wait_for_traffic(index, APP_HOST, accept, count=count,
                                                  within=max(deadline - loop.time(), 0.0))
            mark = "ok " if accept(report) else "BAD"
            self.out(f"  [{mark}] {pod.name}: {report.summary()}")
            ok = ok and accept(report)
        if not ok:
            self.out("demo: FAILED: traffic did not flow as expected through HAProxy")
            self._diagnose(stack)
        return ok

    async def _report_runtime(self, stack: LocalStack, before: dict[str, tuple[int, list[int]]]) -> bool:
        reloaded = False
        for pod in stack.pods:
            reloads, pids = before[pod.name]
            now_reloads, now_pids = pod.counters()["reloads"], await pod.worker_pids()
            same = now_reloads == reloads and now_pids == pids
            reloaded = reloaded or not same
            self.out(f"  {pod.name}: reloads {reloads} -> {now_reloads}, haproxy workers {pids} -> {now_pids}, "
                     f"runtime server updates {pod.counters()['runtime_server_updates']}"
                     + ("  (no reload)" if same else "  (RELOADED)"))
        return reloaded

    def _summaries(self, stack: LocalStack) -> None:
        self.out("  deployed configuration:")
        for pod in stack.pods:
            for line in pod_summary(pod):
                self.out(f"    {line}")

    def _published(self, stack: LocalStack) -> None:
        """What the controller wrote back to the API: its HAProxyCfg and the Ingress status."""
        published = stack.published_config()
        if published is None:
            self.out("  HAProxyCfg: not published (yet)")
        else:
            same = all(published == stack.deployed_config(i) for i in range(len(stack.pods)))
            self.out(f"  HAProxyCfg {stack.options.namespace}/{stack.options.config_name}-haproxycfg: "
                     f"{len(published)} bytes, {'identical to' if same else 'differs from'} every pod's config")
        rt = stack.kube.types.by_kind("networking.k8s.io/v1", "Ingress")
        assert rt is not None
        ingress = stack.kube.get(rt, APP_NAMESPACE, APP_SERVICE)
        addresses = [e.get("ip") or e.get("hostname") for e in
                     ((ingress.get("status") or {}).get("loadBalancer") or {}).get("ingress") or []]
        shown = ", ".join(map(str, addresses)) or "- (not written yet)"
        self.out(f"  Ingress {APP_NAMESPACE}/{APP_SERVICE} status.loadBalancer: {shown}")

    async def _kubectl(self, stack: LocalStack, *args: str) -> None:
        """Shows the fake API through the real kubectl (skipped when it is not installed)."""
        binary = shutil.which("kubectl")
        if binary is None or stack.kubeconfig is None:
            return
        self.out(f"  $ kubectl {' '.join(args)}")
        process = await asyncio.create_subprocess_exec(
            binary, "--request-timeout=10s", *args, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
            env={**os.environ, "KUBECONFIG": str(stack.kubeconfig)})
        output, _ = await process.communicate()
        for line in output.decode(errors="replace").splitlines():
            self.out(f"    {line}")

    def _hits(self, echoes: Sequence[EchoServer]) -> None:
        self.out("  requests served per echo backend: " + ", ".join(f"{e.name} {e.hits}" for e in echoes))

    def _diagnose(self, stack: LocalStack) -> None:
        controller = stack.controller
        if controller is not None and not controller.running:
            self.out(f"  the controller exited with code {controller.returncode}; its last lines:")
            for line in list(controller.lines)[-15:]:
                self.out(f"    {line}")
        for pod in stack.pods:
            self.out(f"  {pod.name}: config version {pod.fake.version}, counters {pod.counters()}")

    async def _stay(self, stack: LocalStack) -> None:
        self.step("the stack stays up; press Ctrl-C to stop it. Try:")
        self.out(f"  export KUBECONFIG={stack.kubeconfig}")
        self.out(f"  kubectl -n {APP_NAMESPACE} get ingress,svc,endpointslices")
        self.out(f"  curl -H 'Host: {APP_HOST}' http://{stack.pod_address(0)}/")
        self.out(f"  curl http://{stack.pod_address(0, stack.stats_port)}/stats")
        await asyncio.Event().wait()
