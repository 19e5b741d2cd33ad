"""The ``haptic run`` flags of the validating webhook and the ``WebhookRuntime`` they describe.

``--webhook-cert-dir`` (env ``WEBHOOK_CERT_DIR``) names a directory with ``tls.crt``, ``tls.key`` and
``ca.crt`` (cert-manager's layout; ``haptic webhook certs`` writes the same); without it the webhook is
off. ``--webhook-port`` (env ``WEBHOOK_PORT``, default 9443) is where it listens on ``--bind-address``.
``--webhook-service NS/NAME`` is the Service the API server reaches it through (port 443);
``--webhook-url URL`` (env ``WEBHOOK_URL``) is registered instead when the API server reaches it through
something else (a proxy in front of several replicas, a tunnel); without either the registration points
at this process's own address (local runs and tests).
"""

from __future__ import annotations

import argparse
import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from haptic.live.webhook_server import DEFAULT_PORT
from haptic.webhook.configuration import ServiceEndpoint

if TYPE_CHECKING:
    from haptic.controller.loop.controller import Controller
    from haptic.controller.metrics import ControllerMetrics
    from haptic.k8s.api import KubeAPI
    from haptic.live.webhook_runtime import WebhookRuntime

log = logging.getLogger("haptic.webhook")

CERT_FILE, KEY_FILE, CA_FILE = "tls.crt", "tls.key", "ca.crt"
_WILDCARDS = frozenset({"", "0.0.0.0", "::"})


class WebhookOptionsError(ValueError):
    """A webhook flag or its files are unusable; the message names the flag or file."""


@dataclass(frozen=True)
class WebhookOptions:
    cert_dir: Path
    port: int
    service: ServiceEndpoint | None
    host: str
    url: str | None = None

    @property
    def certfile(self) -> Path:
        return self.cert_dir / CERT_FILE

    @property
    def keyfile(self) -> Path:
        return self.cert_dir / KEY_FILE

    def registered_url(self) -> str | None:
        """The URL registered when no Service is named: this process, at a routable host."""
        if self.url:
            return self.url
        if self.service is not None or self.port == 0:
            return None  # port 0: WebhookRuntime registers the port it actually bound
        host = "127.0.0.1" if self.host in _WILDCARDS else self.host
        host = f"[{host}]" if ":" in host else host
        return f"https://{host}:{self.port}/validate"


def add_webhook_arguments(parser: argparse.ArgumentParser) -> None:
    port = os.environ.get("WEBHOOK_PORT")
    parser.add_argument("--webhook-cert-dir", default=os.environ.get("WEBHOOK_CERT_DIR", ""),
                        help=f"directory with {CERT_FILE}, {KEY_FILE} and {CA_FILE} for the validating webhook "
                             "(env WEBHOOK_CERT_DIR; the webhook is off without it)")
    parser.add_argument("--webhook-port", type=int, default=int(port) if port and port.isdigit() else DEFAULT_PORT,
                        help=f"webhook HTTPS port (env WEBHOOK_PORT; default {DEFAULT_PORT})")
    parser.add_argument("--webhook-service", default=os.environ.get("WEBHOOK_SERVICE", ""), metavar="NS/NAME",
                        help="Service the API server calls the webhook through, port 443 (env WEBHOOK_SERVICE; "
                             "default: this process's own address)")
    parser.add_argument("--webhook-url", default=os.environ.get("WEBHOOK_URL", ""), metavar="URL",
                        help="https URL the API server calls instead of this process's own address, e.g. a proxy "
                             "in front of several replicas (env WEBHOOK_URL; not with --webhook-service)")


def parse_service(value: str, default_namespace: str) -> ServiceEndpoint | None:
    if not value:
        return None
    namespace, _, name = value.rpartition("/")
    namespace = namespace or default_namespace
    if not name or not namespace or "/" in namespace:
        raise WebhookOptionsError(f"--webhook-service {value!r}: expected NS/NAME")
    return ServiceEndpoint(namespace=namespace, name=name)


def webhook_options(args: Any) -> WebhookOptions | None:
    """The webhook's options from parsed flags, None when it is off; raises ``WebhookOptionsError``."""
    if not args.webhook_cert_dir:
        return None
    cert_dir = Path(args.webhook_cert_dir)
    for name in (CERT_FILE, KEY_FILE, CA_FILE):
        if not (cert_dir / name).is_file():
            raise WebhookOptionsError(f"--webhook-cert-dir {cert_dir}: {name} is missing")
    if not 0 <= args.webhook_port <= 65535:
        raise WebhookOptionsError(f"--webhook-port {args.webhook_port}: not a port number")
    url = getattr(args, "webhook_url", "") or None
    if url is not None and args.webhook_service:
        raise WebhookOptionsError("--webhook-url and --webhook-service exclude each other")
    if url is not None and not url.startswith("https://"):
        raise WebhookOptionsError(f"--webhook-url {url!r}: the API server calls webhooks over https only")
    return WebhookOptions(cert_dir=cert_dir, port=args.webhook_port,
                          service=parse_service(args.webhook_service, args.namespace), host=args.bind_address,
                          url=url)


def build_webhook_runtime(
    options: WebhookOptions, controller: Controller, kube: KubeAPI, metrics: ControllerMetrics
) -> WebhookRuntime:
    from haptic.live.certs import ca_bundle
    from haptic.live.webhook_runtime import WebhookRuntime

    ca_pem = (options.cert_dir / CA_FILE).read_bytes()
    return WebhookRuntime(
        controller, kube, certfile=options.certfile, keyfile=options.keyfile, ca_bundle=ca_bundle(ca_pem),
        service=options.service, url=options.registered_url(), host=options.host, port=options.port,
        metrics=metrics,
    )
