"""``haptic run``: the controller against a real cluster (kubeconfig or in-cluster service account).

Flags fall back to the environment of the original's Deployment: ``CRD_NAME``, ``SECRET_NAME``,
``POD_NAME``, ``POD_NAMESPACE``, ``DEBUG_PORT``, ``METRICS_PORT``, ``LOG_LEVEL``, ``PUBLISH_ADDRESS``,
``WEBHOOK_CERT_DIR``, ``WEBHOOK_PORT``, ``WEBHOOK_SERVICE`` (the validating webhook: ``haptic.live.webhook_options``).
SIGTERM/SIGINT stop it gracefully (leadership released, bounded by the shutdown timeout).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import signal
import socket
import sys
from typing import Any

from haptic import __version__
from haptic.controller.loop.controller import SHUTDOWN_TIMEOUT, Controller
from haptic.controller.metrics import BuildInfo, ControllerMetrics
from haptic.controller.observe.debug_providers import DebugProviders
from haptic.controller.ports import ControllerIdentity, ControllerPorts
from haptic.core.logging import setup_logging
from haptic.live.debug_server import DebugServer
from haptic.live.socket_server import ListenError
from haptic.live.webhook_options import (
    WebhookOptionsError,
    add_webhook_arguments,
    build_webhook_runtime,
    webhook_options,
)

_log = logging.getLogger("haptic.run")

SERVER_STOP_TIMEOUT = 5.0


def _env_int(name: str, default: int) -> int:
    value = os.environ.get(name)
    try:
        return int(value) if value else default
    except ValueError:
        raise SystemExit(f"haptic run: {name}={value!r} is not a port number") from None


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "run", help="run the controller against a Kubernetes cluster",
        description="Watches the HAProxyTemplateConfig, renders and validates HAProxy configurations and "
                    "deploys them to the HAProxy pods through their Dataplane API.",
    )
    parser.add_argument("--config-name", default=os.environ.get("CRD_NAME", "haproxy-config"),
                        help="HAProxyTemplateConfig name (env CRD_NAME; default haproxy-config)")
    parser.add_argument("--secret-name", default=os.environ.get("SECRET_NAME", "haproxy-credentials"),
                        help="credentials Secret name (env SECRET_NAME; default haproxy-credentials)")
    parser.add_argument("--namespace", default=os.environ.get("POD_NAMESPACE", ""),
                        help="the controller's namespace (env POD_NAMESPACE; required)")
    parser.add_argument("--pod-name", default=os.environ.get("POD_NAME", socket.gethostname()),
                        help="this replica's identity for leader election (env POD_NAME; default hostname)")
    parser.add_argument("--kubeconfig", default=None, help="kubeconfig file (default: in-cluster, then $KUBECONFIG)")
    parser.add_argument("--context", default=None, help="kubeconfig context")
    parser.add_argument("--server", default=None, help="API server URL without credentials (tests, fakes)")
    parser.add_argument("--debug-port", type=int, default=_env_int("DEBUG_PORT", 0),
                        help="health, readiness, /debug/vars and /debug/events (env DEBUG_PORT; 0 disables)")
    parser.add_argument("--metrics-port", type=int, default=_env_int("METRICS_PORT", 9090),
                        help="Prometheus /metrics (env METRICS_PORT; default 9090, 0 disables)")
    parser.add_argument("--bind-address", default="0.0.0.0",
                        help="address of the debug and metrics servers (default 0.0.0.0)")
    parser.add_argument("--haproxy-binary", default="haproxy", help="haproxy used for `haproxy -c` validation")
    parser.add_argument("--publish-address", default=os.environ.get("PUBLISH_ADDRESS", ""),
                        help="address written to Ingress status (env PUBLISH_ADDRESS; default: HAProxy pod IPs)")
    parser.add_argument("--shutdown-timeout", type=float, default=SHUTDOWN_TIMEOUT,
                        help=f"seconds a graceful stop may take before it is cut short (default {SHUTDOWN_TIMEOUT:g})")
    parser.add_argument("--log-level", default=os.environ.get("LOG_LEVEL", "INFO"), help="env LOG_LEVEL")
    add_webhook_arguments(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if not args.namespace:
        print("haptic run: --namespace (or POD_NAMESPACE) is required")
        return 2
    try:
        args.webhook = webhook_options(args)
    except WebhookOptionsError as exc:
        print(f"haptic run: {exc}")
        return 2
    setup_logging(args.log_level)
    try:
        return asyncio.run(_main(args))
    except ListenError as exc:
        # A clear line for the operator (which server, which address) instead of a bind() traceback.
        print(f"haptic run: {exc.strerror}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


def build_servers(controller: Controller, host: str, debug_port: int, metrics_port: int) -> list[DebugServer]:
    """The debug server and the metrics server, each built once for the process's lifetime.

    Their providers read the controller at request time (current iteration, current metrics registry),
    so reinitialization swaps what they show without restarting them. Port 0 disables a server; the
    same port for both serves everything from the debug server.
    """
    servers: list[DebugServer] = []
    if debug_port:
        servers.append(DebugServer(controller.debug_providers(), host, debug_port))
    if metrics_port and metrics_port != debug_port:
        metrics = controller.metrics
        servers.append(DebugServer(DebugProviders(metrics=lambda: metrics.registry, health=controller.health,
                                                  ready=controller.readiness), host, metrics_port))
    return servers


async def _main(args: argparse.Namespace) -> int:
    from haptic.live.kube_client import connect

    kube = await connect(kubeconfig=args.kubeconfig, context=args.context, host=args.server)
    identity = ControllerIdentity(namespace=args.namespace, pod_name=args.pod_name, config_name=args.config_name,
                                  secret_name=args.secret_name)
    ports = ControllerPorts(kube=kube, identity=identity, haproxy_binary=args.haproxy_binary,
                            publish_address=args.publish_address)
    metrics = ControllerMetrics(BuildInfo(version=__version__))
    controller = Controller(ports, metrics=metrics, shutdown_timeout=args.shutdown_timeout)
    servers = build_servers(controller, args.bind_address, args.debug_port, args.metrics_port)
    for server in servers:
        await server.start()
        _log.info("serving %s", server.url)
    webhook = build_webhook_runtime(args.webhook, controller, kube, metrics) if args.webhook else None
    if webhook is not None:
        await webhook.start()
        _log.info("serving the validating webhook at %s", webhook.server.url)
    else:
        _log.info("validating webhook off (no --webhook-cert-dir / WEBHOOK_CERT_DIR)")
    task = asyncio.create_task(controller.run(), name="controller")
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(sig, stop.set)
    stopper = asyncio.create_task(stop.wait())
    await asyncio.wait((task, stopper), return_when=asyncio.FIRST_COMPLETED)
    code = 0
    if stop.is_set():
        _log.info("stopping")
        await controller.shutdown(task)
    else:
        stopper.cancel()
        exc = task.exception()
        if exc is not None:
            _log.error("controller stopped: %r", exc)
            code = 1
    if webhook is not None:
        try:
            async with asyncio.timeout(SERVER_STOP_TIMEOUT):
                await webhook.stop()
        except TimeoutError:
            _log.warning("the webhook did not stop within %.0fs", SERVER_STOP_TIMEOUT)
    for server in servers:
        try:
            async with asyncio.timeout(SERVER_STOP_TIMEOUT):
                await server.stop()
        except TimeoutError:
            _log.warning("%s did not stop within %.0fs", server.url, SERVER_STOP_TIMEOUT)
    await kube.close()
    _log.info("stopped")
    return code
