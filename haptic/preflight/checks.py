"""The verdicts of ``haptic preflight``, each from observations the command gathered, and the table.

A ``Check`` passes or fails and, when it fails, says what to fix. The functions here decide; they
never talk to a cluster (``haptic.commands.preflight`` does, and hands them what it saw).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from .certificates import inspect_certificate
from .permissions import Permission


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str
    fix: str = ""


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def check_crd(name: str, wanted: Mapping[str, Any], served: Mapping[str, Any] | None) -> Check:
    """A CRD is installed and its versions and schemas are the ones this build generates."""
    label = f"CRD {name}"
    fix = "kubectl apply -f deploy/crds (or `haptic crds -o DIR`)"
    if served is None:
        return Check(label, False, "not installed", fix)

    def versions(crd: Mapping[str, Any]) -> dict[str, str]:
        return {str(v.get("name")): _canonical(v.get("schema")) for v in (crd.get("spec") or {}).get("versions") or []}

    ours, theirs = versions(wanted), versions(served)
    if ours == theirs:
        return Check(label, True, f"current ({', '.join(sorted(ours))})")
    missing = sorted(set(ours) - set(theirs))
    stale = sorted(v for v in set(ours) & set(theirs) if ours[v] != theirs[v])
    parts = ([f"missing version(s) {', '.join(missing)}"] if missing else []) + \
        ([f"schema of {', '.join(stale)} differs from this build's"] if stale else [])
    return Check(label, False, "; ".join(parts) or "versions differ", fix)


def check_config(name: str, problems: Sequence[str] | None) -> Check:
    """``problems`` None: the HAProxyTemplateConfig is absent; empty: it loads and validates."""
    label = f"HAProxyTemplateConfig {name}"
    if problems is None:
        return Check(label, False, "not found",
                     "kubectl apply -f deploy/haproxytemplateconfig.yaml (CRD_NAME names it)")
    if problems:
        return Check(label, False, "; ".join(problems), "fix the fields named (`haptic validate -f FILE` offline)")
    return Check(label, True, "loads and validates")


def check_permissions(subject: str, answers: Sequence[tuple[Permission, bool | None, str]]) -> Check:
    """One line for every permission the controller needs: allowed by a SelfSubjectAccessReview or not.

    ``None`` as an answer: the review could not be made (its reason is in the third field)."""
    label = f"permissions of {subject}"
    unknown = [(p, why) for p, allowed, why in answers if allowed is None]
    if unknown:
        return Check(label, False, f"could not ask the API server: {unknown[0][1]}",
                     "SelfSubjectAccessReview must be served; with --as, you need the impersonate verb")
    denied = [p for p, allowed, _ in answers if not allowed]
    if denied:
        listed = "; ".join(f"{p.describe()} ({p.why})" for p in denied)
        return Check(label, False, f"{len(denied)} of {len(answers)} denied: {listed}",
                     "apply deploy/rbac.yaml, or add those rules to your Role/ClusterRole")
    return Check(label, True, f"all {len(answers)} allowed")


@dataclass(frozen=True)
class PodObservation:
    name: str
    url: str
    #: the Dataplane API's ``api.version`` major.minor, None when it could not be read
    version: tuple[int, int] | None
    error: str = ""


def check_pods(selector: str, namespace: str, pods: Sequence[PodObservation],
               expected: tuple[int, int] | None) -> list[Check]:
    """HAProxy pods found by the selector, their Dataplane API reachable with the credentials, and the
    major.minor the controller admits (its own haproxy's: ``expected``)."""
    if not pods:
        return [Check("HAProxy pods", False, f"none running with {selector} in {namespace}",
                      "apply deploy/haproxy/ (its labels must match spec.podSelector)")]
    checks = []
    for pod in pods:
        label = f"HAProxy pod {pod.name}"
        if pod.version is None:
            checks.append(Check(label, False, f"Dataplane API at {pod.url} not usable: {pod.error}",
                                "check the dataplane container, the credentials Secret and the NetworkPolicy "
                                "(run preflight in the cluster if pod IPs are not reachable from here)"))
            continue
        got = f"{pod.version[0]}.{pod.version[1]}"
        if expected is not None and pod.version != expected:
            want = f"{expected[0]}.{expected[1]}"
            checks.append(Check(label, False, f"Dataplane API {got}, the controller validates with haproxy {want}: "
                                "it would not be admitted", "run the same HAProxy major.minor in the controller "
                                "image (deploy/Dockerfile HAPROXY_IMAGE) and the pods"))
        else:
            checks.append(Check(label, True, f"Dataplane API {got} reachable at {pod.url}"))
    return checks


def check_webhook_certificate(secret: str, data: Mapping[str, bytes] | None, *, now: datetime,
                              dns_names: Sequence[str], renew_days: int = 30) -> Check:
    label = f"webhook certificate {secret}"
    fix = "apply deploy/webhook-certs-job.yaml (or examples/cert-manager), then restart the controller"
    if data is None:
        return Check(label, False, "Secret not found", fix)
    missing = [k for k in ("tls.crt", "tls.key", "ca.crt") if not data.get(k)]
    if missing:
        return Check(label, False, f"no {', '.join(missing)} in the Secret", fix)
    from datetime import timedelta

    report = inspect_certificate(data["tls.crt"], now=now, dns_names=dns_names, ca_pem=data["ca.crt"],
                                 key_pem=data["tls.key"], renew_before=timedelta(days=renew_days))
    if not report.ok:
        return Check(label, False, "; ".join(report.problems), fix)
    return Check(label, True, f"valid until {report.not_after:%Y-%m-%d}, names {', '.join(report.dns_names)}")


def check_webhook_registration(name: str, registered: Mapping[str, Any] | None, *, ca_pem: bytes | None,
                               service: tuple[str, str] | None) -> Check:
    """The ValidatingWebhookConfiguration exists, trusts the Secret's CA and calls the webhook Service."""
    import base64

    label = f"ValidatingWebhookConfiguration {name}"
    if registered is None:
        return Check(label, False, "not registered", "the controller registers it once its config enables a "
                     "webhook and WEBHOOK_CERT_DIR is set; check the controller's log")
    problems = []
    for hook in registered.get("webhooks") or []:
        client = hook.get("clientConfig") or {}
        if ca_pem is not None and base64.b64decode(str(client.get("caBundle") or "")) != ca_pem:
            problems.append(f"{hook.get('name')}: caBundle is not the Secret's ca.crt")
        if service is not None:
            svc = client.get("service") or {}
            if (svc.get("namespace"), svc.get("name")) != service:
                problems.append(f"{hook.get('name')}: calls {svc or client.get('url')}, not Service "
                                f"{service[0]}/{service[1]}")
    if problems:
        return Check(label, False, "; ".join(problems), "restart the controller (it registers its CA and Service "
                     "at start)")
    return Check(label, True, f"{len(registered.get('webhooks') or [])} webhook(s) registered")


def table(checks: Sequence[Check]) -> str:
    """The report: one row per check (result, check, detail), then what to fix for each failure."""
    rows = [("RESULT", "CHECK", "DETAIL")] + [("PASS" if c.ok else "FAIL", c.name, c.detail) for c in checks]
    widths = [max(len(r[i]) for r in rows) for i in range(2)]
    lines = [f"{r[0]:<{widths[0]}}  {r[1]:<{widths[1]}}  {r[2]}" for r in rows]
    failures = [c for c in checks if not c.ok]
    if failures:
        lines += ["", "To fix:"] + [f"- {c.name}: {c.fix}" for c in failures]
    lines += ["", f"{len(checks) - len(failures)} of {len(checks)} checks passed"]
    return "\n".join(lines)
