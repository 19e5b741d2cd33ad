"""``haptic webhook certs|configuration``: serving certificates and the ValidatingWebhookConfiguration.

For Kind clusters and local runs without cert-manager::

    haptic webhook certs -o certs/ --service haptic-webhook --namespace haptic-system
    haptic webhook certs --secret haptic-system/haproxy-webhook-certs --service haptic-controller-webhook

``--secret`` writes them into a Secret (``tls.crt``, ``tls.key``, ``ca.crt``), keeping one that already
serves (valid beyond ``--renew-before-days``, naming the Service): deploy/webhook-certs-job.yaml runs it.
    haptic webhook configuration -f examples/ingress/haproxytemplateconfig.yaml \\
        --service haptic-system/haptic-webhook --ca-file certs/ca.crt | kubectl apply -f -
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import sys
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import yaml

from haptic.config.errors import ConfigError
from haptic.core import RealClock
from haptic.k8s.api import JSON, ApiError, NotFound, ResourceRef
from haptic.live.certs import ca_bundle, generate_webhook_certs, service_dns_names
from haptic.preflight.certificates import inspect_certificate
from haptic.validation.config_file import read_config_file
from haptic.webhook.admission import webhook_resources
from haptic.webhook.configuration import DEFAULT_NAME, ServiceEndpoint, build_webhook_configuration


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "webhook",
        help="admission webhook helpers (certificates, ValidatingWebhookConfiguration)",
        description="Helpers for the validating admission webhook.",
    )
    sub = parser.add_subparsers(dest="webhook_command", metavar="SUBCOMMAND", required=True)

    certs = sub.add_parser("certs", help="write a self-signed CA and a serving certificate (ca.crt, tls.crt, tls.key)")
    where = certs.add_mutually_exclusive_group(required=True)
    where.add_argument("-o", "--output", type=Path, help="directory to write into")
    where.add_argument("--secret", metavar="NS/NAME", help="Secret to write into (created, or replaced when its "
                                                           "certificate does not serve)")
    certs.add_argument("--renew-before-days", type=int, default=30,
                       help="with --secret: replace a certificate that expires within this many days (default 30)")
    certs.add_argument("--kubeconfig", default=None,
                       help="with --secret: kubeconfig (default: in-cluster, $KUBECONFIG)")
    certs.add_argument("--server", default=None, help="with --secret: API server URL without credentials (tests)")
    certs.add_argument("--service", default="haptic-webhook", help="webhook Service name (for the DNS SANs)")
    certs.add_argument("--namespace", default="haptic-system", help="webhook Service namespace")
    certs.add_argument("--dns", action="append", default=[], help="extra DNS name (repeatable)")
    certs.add_argument("--ip", action="append", default=[], help="IP address SAN (repeatable, e.g. 127.0.0.1)")
    certs.add_argument("--days", type=int, default=365, help="validity in days (default 365)")
    certs.set_defaults(func=run_certs)

    config = sub.add_parser("configuration", help="print the ValidatingWebhookConfiguration for a config")
    config.add_argument("-f", "--file", type=Path, required=True, help="HAProxyTemplateConfig YAML")
    target = config.add_mutually_exclusive_group(required=True)
    target.add_argument("--service", help="NAMESPACE/NAME[:PORT] of the webhook Service")
    target.add_argument("--url", help="https URL of the webhook (outside the cluster)")
    config.add_argument("--ca-file", type=Path, required=True, help="PEM CA that signed the serving certificate")
    config.add_argument("--name", default=DEFAULT_NAME, help=f"object name (default {DEFAULT_NAME})")
    config.set_defaults(func=run_configuration)


async def _now() -> datetime:
    return RealClock().now()


def run_certs(args: argparse.Namespace) -> int:
    dns = [*service_dns_names(args.service, args.namespace), *args.dns]
    if args.secret:
        try:
            return asyncio.run(_certs_to_secret(args, dns))
        except (ValueError, OSError, ApiError) as exc:
            print(f"haptic webhook certs: {exc}", file=sys.stderr)
            return 2
    try:
        certs = generate_webhook_certs(
            asyncio.run(_now()), dns, args.ip, validity=timedelta(days=args.days), directory=args.output
        )
    except (ValueError, OSError) as exc:
        print(f"haptic webhook certs: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {certs.ca_path}, {certs.cert_path}, {certs.key_path} (SANs: {', '.join([*dns, *args.ip])})")
    return 0


_SECRETS = ResourceRef("v1", "secrets", True, "Secret")


async def _certs_to_secret(args: argparse.Namespace, dns: list[str]) -> int:
    from haptic.live.kube_client import connect

    namespace, slash, name = str(args.secret).partition("/")
    if not slash or not namespace or not name:
        raise ValueError(f"--secret must be NAMESPACE/NAME, got {args.secret!r}")
    now = await _now()
    kube = await connect(kubeconfig=args.kubeconfig, host=args.server)
    try:
        try:
            existing: JSON | None = await kube.get(_SECRETS, name, namespace)
        except NotFound:
            existing = None
        if existing is not None:
            data = existing.get("data") or {}
            pems = {k: base64.b64decode(str(data.get(k) or "")) for k in ("tls.crt", "tls.key", "ca.crt")}
            report = inspect_certificate(pems["tls.crt"], now=now, dns_names=dns, ca_pem=pems["ca.crt"],
                                         key_pem=pems["tls.key"], renew_before=timedelta(days=args.renew_before_days))
            if report.ok:
                print(f"kept Secret {namespace}/{name}: its certificate serves until {report.not_after}")
                return 0
            print(f"replacing Secret {namespace}/{name}: {'; '.join(report.problems)}")
        certs = generate_webhook_certs(now, dns, args.ip, validity=timedelta(days=args.days))
        body: JSON = {
            "apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/tls",
            "metadata": {"name": name, "namespace": namespace, "labels": {"app.kubernetes.io/managed-by": "haptic"}},
            "data": {key: base64.b64encode(pem).decode("ascii") for key, pem in
                     (("tls.crt", certs.cert_pem), ("tls.key", certs.key_pem), ("ca.crt", certs.ca_pem))},
        }
        if existing is None:
            await kube.create(_SECRETS, body, namespace)
        else:
            body["metadata"]["resourceVersion"] = (existing.get("metadata") or {}).get("resourceVersion")
            await kube.replace(_SECRETS, body)
    finally:
        await kube.close()
    print(f"wrote Secret {namespace}/{name} (SANs: {', '.join([*dns, *args.ip])})")
    return 0


def _service(value: str) -> ServiceEndpoint:
    namespace, slash, rest = value.partition("/")
    name, colon, port = rest.partition(":")
    if not slash or not namespace or not name or (colon and not port.isdigit()):
        raise ValueError(f"--service must be NAMESPACE/NAME[:PORT], got {value!r}")
    return ServiceEndpoint(namespace, name, int(port) if colon else 443)


def run_configuration(args: argparse.Namespace) -> int:
    try:
        config = read_config_file(args.file)
        service = _service(args.service) if args.service else None
        resources = webhook_resources(config.spec.watched_resources)
        body = build_webhook_configuration(
            resources,
            ca_bundle(args.ca_file.read_bytes()),
            name=args.name,
            service=service,
            url=args.url,
            # as the controller registers it: the config's own webhook comes with the others
            config_namespace=(config.metadata.namespace or None) if resources else None,
        )
    except ConfigError as exc:
        print(f"haptic webhook configuration: invalid configuration: {exc}", file=sys.stderr)
        return 2
    except (ValueError, OSError) as exc:
        print(f"haptic webhook configuration: {exc}", file=sys.stderr)
        return 2
    if not body["webhooks"]:
        print("haptic webhook configuration: no watched resource has enableValidationWebhook: true", file=sys.stderr)
        return 1
    print(yaml.safe_dump(body, sort_keys=False), end="")
    return 0
