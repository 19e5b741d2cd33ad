"""Optional validating admission for the fake API: it calls the webhooks its own
``ValidatingWebhookConfiguration`` objects register, before persisting a matching write.

Off unless ``FakeKubeAPI.admission`` is set (``enable_admission(api)``). Then, for a create, update or
patch whose type/operation/subresource matches a webhook rule, the front-end computes the resulting
object in a dry run, POSTs an ``AdmissionReview`` (v1) to the webhook's ``clientConfig.url``
(HTTPS, verified against ``caBundle``; ``service`` references cannot be reached from here and count as
a call failure), and only then performs the write. A denial becomes the API server's error:
``admission webhook "<name>" denied the request: <message>`` with the webhook's status code. A call
failure fails the write under ``failurePolicy: Fail`` and is ignored under ``Ignore``. Deletes,
``namespaceSelector``/``objectSelector`` and mutating webhooks are not modelled.

``WebhookAdmission.in_process`` maps a ``clientConfig.url`` to a coroutine function that answers the
``AdmissionReview`` directly (no socket, no TLS): the simulator's Harness routes its controller
replicas' webhook there, so admission stays deterministic under virtual time.
"""

from __future__ import annotations

import base64
import binascii
import itertools
import ssl
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import httpx

from haptic.core.tls import default_ssl_context
from haptic.k8s.api import JSON, ApiError, NotFound

from .resources import ResourceType

if TYPE_CHECKING:
    from .store import FakeKubeAPI

WEBHOOK_CONFIGURATIONS = ("admissionregistration.k8s.io", "v1", "validatingwebhookconfigurations")
DEFAULT_TIMEOUT_SECONDS = 10


@dataclass(frozen=True)
class AdmissionAttempt:
    operation: str
    rt: ResourceType
    namespace: str | None
    name: str
    subresource: str | None
    obj: JSON
    old: JSON | None


def _resource_matches(patterns: Iterable[str], plural: str, subresource: str | None) -> bool:
    wanted = f"{plural}/{subresource}" if subresource else plural
    for pattern in patterns:
        if pattern == wanted or pattern == "*/*":
            return True
        if pattern == "*" and not subresource:
            return True
        if subresource and pattern in (f"{plural}/*", f"*/{subresource}"):
            return True
    return False


def rule_matches(rule: Mapping[str, Any], attempt: AdmissionAttempt) -> bool:
    rt = attempt.rt
    operations = rule.get("operations") or []
    groups = rule.get("apiGroups") or []
    versions = rule.get("apiVersions") or []
    scope = rule.get("scope") or "*"
    return (
        ("*" in operations or attempt.operation in operations)
        and ("*" in groups or rt.group in groups)
        and ("*" in versions or rt.version in versions)
        and (scope == "*" or scope == ("Namespaced" if rt.namespaced else "Cluster"))
        and _resource_matches(rule.get("resources") or [], rt.plural, attempt.subresource)
    )


class WebhookAdmission:
    """Reads the fake's ValidatingWebhookConfigurations at each write and calls the matching webhooks."""

    def __init__(self, api: FakeKubeAPI) -> None:
        self.api = api
        self.calls = 0
        self._uids = itertools.count(1)
        #: ``clientConfig.url`` -> an in-process reviewer (AdmissionReview in, AdmissionReview out).
        self.in_process: dict[str, Callable[[JSON], Awaitable[Mapping[str, Any]]]] = {}

    def webhooks_for(self, attempt: AdmissionAttempt) -> list[Mapping[str, Any]]:
        try:
            rt = self.api.resolve("/".join(WEBHOOK_CONFIGURATIONS[:2]), WEBHOOK_CONFIGURATIONS[2])
        except NotFound:
            return []
        found = []
        for config in self.api.objects(rt):
            for webhook in config.get("webhooks") or []:
                if any(rule_matches(rule, attempt) for rule in webhook.get("rules") or []):
                    found.append(webhook)
        return found

    def wants(self, rt: ResourceType) -> bool:
        """Cheap pre-check so writes of unrelated types skip the dry run."""
        try:
            vwc = self.api.resolve("/".join(WEBHOOK_CONFIGURATIONS[:2]), WEBHOOK_CONFIGURATIONS[2])
        except NotFound:
            return False
        return rt != vwc and bool(self.api.objects(vwc))

    def review_body(self, attempt: AdmissionAttempt) -> JSON:
        rt = attempt.rt
        gvk = {"group": rt.group, "version": rt.version, "kind": rt.kind}
        gvr = {"group": rt.group, "version": rt.version, "resource": rt.plural}
        request: JSON = {
            "uid": f"fake-admission-{next(self._uids)}",
            "kind": gvk,
            "resource": gvr,
            "requestKind": gvk,
            "requestResource": gvr,
            "name": attempt.name,
            "operation": attempt.operation,
            "userInfo": {"username": "fake-admin", "groups": ["system:masters"]},
            "object": attempt.obj,
            "oldObject": attempt.old,
            "dryRun": False,
            "options": {"apiVersion": "meta.k8s.io/v1", "kind": "CreateOptions" if attempt.operation == "CREATE"
                        else "UpdateOptions"},
        }
        if attempt.namespace:
            request["namespace"] = attempt.namespace
        if attempt.subresource:
            request["subResource"] = attempt.subresource
        return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request}

    async def __call__(self, attempt: AdmissionAttempt) -> None:
        for webhook in self.webhooks_for(attempt):
            await self._call(webhook, attempt)

    async def _call(self, webhook: Mapping[str, Any], attempt: AdmissionAttempt) -> None:
        name = str(webhook.get("name") or "")
        self.calls += 1
        try:
            response = await self._post(webhook, self.review_body(attempt))
        except (httpx.HTTPError, ssl.SSLError, ValueError) as exc:
            if webhook.get("failurePolicy", "Fail") == "Ignore":
                return
            raise ApiError(500, "InternalError",
                           f'Internal error occurred: failed calling webhook "{name}": {exc}') from None
        if response.get("allowed") is True:
            return
        status = response.get("status") or {}
        code = int(status.get("code") or 400)
        reason = str(status.get("reason") or ("Forbidden" if code == 403 else "BadRequest"))
        message = f'admission webhook "{name}" denied the request'
        if status.get("message"):
            message += f": {status['message']}"
        raise ApiError(code, reason, message)

    async def _post(self, webhook: Mapping[str, Any], body: JSON) -> Mapping[str, Any]:
        client = webhook.get("clientConfig") or {}
        url = client.get("url")
        if not url:
            raise ValueError("the fake API reaches webhooks by clientConfig.url only")
        reviewer = self.in_process.get(str(url))
        if reviewer is not None:
            return _response_of(await reviewer(body), body)
        verify = _verify_context(str(client.get("caBundle") or ""))
        timeout = float(webhook.get("timeoutSeconds") or DEFAULT_TIMEOUT_SECONDS)
        async with httpx.AsyncClient(verify=verify, timeout=timeout) as http:
            answer = await http.post(url, json=body)
        if answer.status_code != 200:
            raise ValueError(f"webhook answered HTTP {answer.status_code}: {answer.text[:200]}")
        return _response_of(answer.json(), body)


def _response_of(review: Any, body: JSON) -> Mapping[str, Any]:
    response = review.get("response") if isinstance(review, Mapping) else None
    if not isinstance(response, Mapping) or response.get("uid") != body["request"]["uid"]:
        raise ValueError("webhook response is not an AdmissionReview answering this request")
    return response


def enable_admission(api: FakeKubeAPI) -> WebhookAdmission:
    """Makes ``api`` call the webhooks its ValidatingWebhookConfigurations register."""
    hook = WebhookAdmission(api)
    api.admission = hook
    return hook


async def admitted(
    api: FakeKubeAPI,
    rt: ResourceType,
    namespace: str | None,
    name: str | None,
    subresource: str | None,
    write: Callable[[], JSON],
) -> JSON:
    """Runs ``write`` once in a dry run, lets the webhooks judge the result, then runs it for real."""
    hook = api.admission
    # A dryRun=All request is computed inside the front-end's own dry-run block: nothing to persist.
    if hook is None or api.in_dry_run or not hook.wants(rt):
        return write()
    old: JSON | None = None
    if name is not None:
        try:
            old = api.get(rt, namespace, name)
        except NotFound:
            old = None
    operation = "UPDATE" if old is not None else "CREATE"
    # Rules match on type, operation and subresource only (no selectors are modelled): a write no
    # webhook wants (a status patch, for a webhook on ``ingresses``) needs no dry run.
    probe = AdmissionAttempt(operation, rt, namespace, str(name or ""), subresource, {}, old)
    if not hook.webhooks_for(probe):
        return write()
    with api.dry_run():
        proposed = write()
    meta = proposed.get("metadata") or {}
    attempt = AdmissionAttempt(
        operation=operation,
        rt=rt,
        namespace=meta.get("namespace") or namespace,
        name=str(meta.get("name") or name or ""),
        subresource=subresource,
        obj=proposed,
        old=old,
    )
    await hook(attempt)
    return write()


@lru_cache(maxsize=64)
def _verify_context(bundle: str) -> ssl.SSLContext:
    """The TLS context that trusts ``bundle`` (base64 PEM; empty: the default CAs), built once per bundle:
    building one costs tens of milliseconds, which every admission call paid."""
    if not bundle:
        return default_ssl_context()
    try:
        ca = base64.b64decode(bundle, validate=True).decode("ascii")
    except (binascii.Error, UnicodeDecodeError):
        raise ValueError("clientConfig.caBundle is not base64 PEM") from None
    return ssl.create_default_context(cadata=ca)
