"""``haptic preflight``: checks a cluster before and after installing HAPTIC, and says what to fix.

It reads (never writes, except the SelfSubjectAccessReviews it asks for): the CRDs against this
build's, the HAProxyTemplateConfig the controller reads, the controller's permissions (one
SelfSubjectAccessReview per permission of ``haptic.preflight.permissions``, as the controller's
ServiceAccount through impersonation — ``--as ''`` asks for the caller, e.g. when run in the
controller's pod), the HAProxy pods found by ``spec.podSelector`` with their Dataplane API reachable
and their version matching the local haproxy's (the controller image's, when run there), the webhook
certificate Secret and the ValidatingWebhookConfiguration. Exit status 0 only when every check passed.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import shutil
import sys
from typing import Any

from haptic.config.crds import all_crds
from haptic.config.errors import ConfigError
from haptic.config.models import HAProxyTemplateConfig, PodSelector, load_config
from haptic.k8s.api import ApiError, KubeAPI, NotFound, ResourceRef, Selectors
from haptic.preflight.checks import (
    Check,
    PodObservation,
    check_config,
    check_crd,
    check_permissions,
    check_pods,
    check_webhook_certificate,
    check_webhook_registration,
    table,
)
from haptic.preflight.permissions import WEBHOOK_CONFIGURATION_NAME, Permission, required_permissions

CRDS = ResourceRef("apiextensions.k8s.io/v1", "customresourcedefinitions", False, "CustomResourceDefinition")
CONFIGS = ResourceRef("haproxy-haptic.org/v1alpha1", "haproxytemplateconfigs", True, "HAProxyTemplateConfig")
SECRETS = ResourceRef("v1", "secrets", True, "Secret")
PODS = ResourceRef("v1", "pods", True, "Pod")
REVIEWS = ResourceRef("authorization.k8s.io/v1", "selfsubjectaccessreviews", False, "SelfSubjectAccessReview")
WEBHOOKS = ResourceRef("admissionregistration.k8s.io/v1", "validatingwebhookconfigurations", False,
                       "ValidatingWebhookConfiguration")


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "preflight", help="check a cluster before/after installing HAPTIC",
        description="Checks CRDs, the config, the controller's permissions (SelfSubjectAccessReview), the HAProxy "
                    "pods' Dataplane API and version, and the webhook certificate and registration. Prints a table "
                    "with what to fix; exit status 0 only when every check passes.")
    parser.add_argument("--namespace", default="haptic-system", help="the controller's namespace")
    parser.add_argument("--config-name", default="haptic-config", help="the HAProxyTemplateConfig (CRD_NAME)")
    parser.add_argument("--service-account", default="haptic-controller", help="the controller's ServiceAccount")
    parser.add_argument("--as", dest="as_user", default=None,
                        help="user to check permissions for (default: the controller's ServiceAccount, by "
                             "impersonation; '' for the caller itself)")
    parser.add_argument("--no-webhook", action="store_true", help="the controller runs without the webhook")
    parser.add_argument("--webhook-secret", default="haproxy-webhook-certs")
    parser.add_argument("--webhook-service", default="haptic-controller-webhook")
    parser.add_argument("--haproxy-binary", default="haproxy",
                        help="haproxy whose major.minor the pods must run (the controller image's)")
    parser.add_argument("--kubeconfig", default=None)
    parser.add_argument("--context", default=None)
    parser.add_argument("--server", default=None, help="API server URL without credentials (tests, fakes)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        checks = asyncio.run(_preflight(args))
    except ApiError as exc:
        print(f"haptic preflight: the API server refused: {exc}", file=sys.stderr)
        return 2
    print(table(checks))
    return 0 if all(c.ok for c in checks) else 1


async def _preflight(args: argparse.Namespace) -> list[Check]:
    from haptic.live.kube_client import connect

    kube = await connect(kubeconfig=args.kubeconfig, context=args.context, host=args.server)
    subject = f"system:serviceaccount:{args.namespace}:{args.service_account}" if args.as_user is None \
        else args.as_user
    try:
        checks = [await _crd(kube, name, crd) for name, crd in sorted(
            (str(c["metadata"]["name"]), c) for c in all_crds().values())]
        config, config_check = await _config(kube, args)
        checks.append(config_check)
        if config is not None:
            reviewer = await connect(kubeconfig=args.kubeconfig, context=args.context, host=args.server)
            if subject:
                reviewer._client.set_default_header("Impersonate-User", subject)
            try:
                checks.append(await _permissions(reviewer, subject or "the caller", config, args))
            finally:
                await reviewer.close()
            checks += await _pods(kube, config, args)
        if not args.no_webhook:
            checks += await _webhook(kube, args)
    finally:
        await kube.close()
    return checks


async def _crd(kube: KubeAPI, name: str, wanted: dict[str, Any]) -> Check:
    try:
        served = await kube.get(CRDS, name)
    except NotFound:
        served = None
    return check_crd(name, wanted, served)


async def _config(kube: KubeAPI, args: argparse.Namespace) -> tuple[HAProxyTemplateConfig | None, Check]:
    name = f"{args.namespace}/{args.config_name}"
    try:
        obj = await kube.get(CONFIGS, args.config_name, args.namespace)
    except NotFound:
        return None, check_config(name, None)
    try:
        from haptic.templating.libraries import expand_libraries

        return load_config(expand_libraries(obj)), check_config(name, [])
    except (ConfigError, ValueError) as exc:
        return None, check_config(name, [str(exc)])


async def _permissions(kube: KubeAPI, subject: str, config: HAProxyTemplateConfig,
                       args: argparse.Namespace) -> Check:
    needed = required_permissions(config.spec, namespace=args.namespace, config_name=args.config_name,
                                  secret_name=config.spec.credentials_secret_ref.name, webhook=not args.no_webhook)
    answers: list[tuple[Permission, bool | None, str]] = []
    for p in needed:
        attributes = {"verb": p.verb, "group": p.group, "resource": p.resource}
        attributes.update({k: v for k, v in (("subresource", p.subresource), ("namespace", p.namespace or ""),
                                             ("name", p.name)) if v})
        body = {"apiVersion": REVIEWS.api_version, "kind": REVIEWS.kind, "spec": {"resourceAttributes": attributes}}
        try:
            review = await kube.create(REVIEWS, body)
        except ApiError as exc:
            answers.append((p, None, f"{exc.code} {exc}"))
            break
        status = review.get("status") or {}
        answers.append((p, bool(status.get("allowed")), str(status.get("reason") or "")))
    return check_permissions(subject, answers)


async def _pods(kube: KubeAPI, config: HAProxyTemplateConfig, args: argparse.Namespace) -> list[Check]:
    from haptic.dataplane.client import DataplaneClient, RetryPolicy

    spec = config.spec
    selector = PodSelector.model_validate(spec.pod_selector.model_dump(by_alias=True)).label_selector
    items = (await kube.list(PODS, args.namespace, Selectors(label_selector=selector))).items
    running = [p for p in items if (p.get("status") or {}).get("phase") == "Running"]
    try:
        secret = await kube.get(SECRETS, spec.credentials_secret_ref.name, args.namespace)
        data = secret.get("data") or {}
        user, password = (base64.b64decode(str(data.get(k) or "")).decode() for k in ("dataplane_username",
                                                                                    "dataplane_password"))
    except NotFound:
        return [Check(f"credentials Secret {args.namespace}/{spec.credentials_secret_ref.name}", False,
                      "not found", "apply deploy/credentials-secret.yaml")]
    observed = []
    for pod in sorted(running, key=lambda p: str(p["metadata"]["name"])):
        url = f"http://{(pod.get('status') or {}).get('podIP')}:{spec.dataplane.port}/v3"
        try:
            once = RetryPolicy(connect_attempts=1)
            async with DataplaneClient(url, user, password, timeout=5.0, retry=once) as client:
                info = await client.info()
            observed.append(PodObservation(str(pod["metadata"]["name"]), url, (info.major, info.minor)))
        except Exception as exc:  # unreachable, refused, 401: the check says which
            observed.append(PodObservation(str(pod["metadata"]["name"]), url, None, f"{type(exc).__name__}: {exc}"))
    return check_pods(selector, args.namespace, observed, await _local_version(args.haproxy_binary))


async def _local_version(binary: str) -> tuple[int, int] | None:
    from haptic.validation.local_haproxy import detect_local_haproxy, local_major_minor
    from haptic.validation.process import AsyncSubprocessRunner

    found = shutil.which(binary) or shutil.which(binary, path="/usr/sbin:/usr/local/sbin")
    if found is None:
        return None
    try:
        return local_major_minor(await detect_local_haproxy(found, AsyncSubprocessRunner()))
    except RuntimeError:
        return None


async def _webhook(kube: KubeAPI, args: argparse.Namespace) -> list[Check]:
    from haptic.core import RealClock
    from haptic.live.certs import service_dns_names

    secret_name = f"{args.namespace}/{args.webhook_secret}"
    try:
        raw = (await kube.get(SECRETS, args.webhook_secret, args.namespace)).get("data") or {}
        data: dict[str, bytes] | None = {k: base64.b64decode(str(v)) for k, v in raw.items()}
    except NotFound:
        data = None
    dns = service_dns_names(args.webhook_service, args.namespace)
    checks = [check_webhook_certificate(secret_name, data, now=RealClock().now(), dns_names=dns[2:3])]
    try:
        registered = await kube.get(WEBHOOKS, WEBHOOK_CONFIGURATION_NAME)
    except NotFound:
        registered = None
    checks.append(check_webhook_registration(WEBHOOK_CONFIGURATION_NAME, registered,
                                             ca_pem=(data or {}).get("ca.crt"),
                                             service=(args.namespace, args.webhook_service)))
    return checks
