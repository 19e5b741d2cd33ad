"""Validating admission: an ``AdmissionReview`` (admission.k8s.io/v1) request in, a response out.

Pure logic, no HTTP (``haptic.live.webhook_server`` serves it). For one request:

1. parse and check the review (a clear 400 naming the field when it is malformed);
2. map the request's group/version/resource to the watched resources with that GVR; a GVR no watched
   resource enables the webhook for is allowed (fail-open: the API server only sends what the
   ``ValidatingWebhookConfiguration`` registers, so this is a stale registration);
3. basic checks: a name or generateName; no control characters in our own annotations, which would
   inject HAProxy directives into the configuration;
4. a dry-run reconciliation: every store of that GVR is overlaid with the change (CREATE adds,
   UPDATE replaces, DELETE removes) without touching the live stores, and the ``ProposalCheck``
   renders, validates (``haproxy -c``, strict) and runs the embedded validationTests;
5. deny when the check reports problems, when the templates would leave the proposed object out
   (an exclusion notice about it: hostile fields, a host another namespace owns, lines ``haproxy -c``
   rejects; the message names the field), or when the check did not finish within the timeout (5 s by
   default); otherwise allow, passing on template warnings about the object as admission warnings.

Messages are bounded (``MAX_MESSAGE`` characters, ``MAX_WARNINGS`` warnings) and name the object.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.alias_generators import to_camel

from haptic.config.models import HAProxyTemplateConfigSpec, WatchedResource
from haptic.core.control_characters import has_control_characters
from haptic.k8s.store import ResourceStore
from haptic.k8s.store_overlay import OverlayStore
from haptic.names import ANNOTATION_PREFIX, GROUP_VERSION
from haptic.templating.context import StoreLike
from haptic.templating.notices import ObjectNotice, object_ref
from haptic.templating.safety import object_id

ADMISSION_API_VERSION = "admission.k8s.io/v1"
DEFAULT_TIMEOUT = 5.0
MAX_MESSAGE = 2000
MAX_WARNINGS = 10
MAX_WARNING_LENGTH = 256
DENIED_CODE = 403
# Generated names get a random suffix from the API server only after admission; renders need a name.
GENERATED_SUFFIX = "xxxxx"

Result = Literal["allowed", "denied", "error"]
Operation = Literal["CREATE", "UPDATE", "DELETE", "CONNECT"]


# -- the review ---------------------------------------------------------------------------------------


class _Wire(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore")


class GroupVersionKind(_Wire):
    group: str = ""
    version: str = Field(min_length=1)
    kind: str = Field(min_length=1)

    def __str__(self) -> str:
        return f"{self.group}/{self.version}/{self.kind}" if self.group else f"{self.version}/{self.kind}"


class GroupVersionResource(_Wire):
    model_config = ConfigDict(frozen=True)
    group: str = ""
    version: str = Field(min_length=1)
    resource: str = Field(min_length=1)

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    def __str__(self) -> str:
        return f"{self.api_version}/{self.resource}"


class AdmissionRequest(_Wire):
    uid: str = Field(min_length=1)
    kind: GroupVersionKind
    resource: GroupVersionResource
    sub_resource: str = ""
    name: str = ""
    namespace: str = ""
    operation: Operation
    object: dict[str, Any] | None = None
    old_object: dict[str, Any] | None = None
    dry_run: bool = False


class AdmissionReview(_Wire):
    api_version: Literal["admission.k8s.io/v1"]
    kind: Literal["AdmissionReview"]
    request: AdmissionRequest


class AdmissionReviewError(ValueError):
    """The body is not an ``AdmissionReview`` v1 request; the message names the field."""


def parse_review(body: Any) -> AdmissionRequest:
    try:
        return AdmissionReview.model_validate(body).request
    except ValidationError as exc:
        problems = []
        for error in exc.errors()[:5]:
            where = ".".join(str(p) for p in error["loc"]) or "body"
            problems.append(f"{where}: {error['msg']}")
        raise AdmissionReviewError("not an admission.k8s.io/v1 AdmissionReview: " + "; ".join(problems)) from None


# -- the decision ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AdmissionDecision:
    """The answer to one review, with what metrics and events need."""

    uid: str
    allowed: bool
    result: Result
    message: str = ""
    code: int = 200
    warnings: tuple[str, ...] = ()
    gvk: str = ""
    kind: str = ""
    namespace: str = ""
    name: str = ""
    operation: str = ""

    def response(self) -> dict[str, Any]:
        """The ``AdmissionReview`` response body."""
        response: dict[str, Any] = {"uid": self.uid, "allowed": self.allowed}
        if not self.allowed:
            reason = "Forbidden" if self.code == DENIED_CODE else "InternalError"
            response["status"] = {"code": self.code, "reason": reason, "message": self.message}
        if self.warnings:
            response["warnings"] = list(self.warnings)
        return {"apiVersion": ADMISSION_API_VERSION, "kind": "AdmissionReview", "response": response}


def bounded(text: str, limit: int = MAX_MESSAGE) -> str:
    return text if len(text) <= limit else text[: limit - 15].rstrip() + " … (truncated)"


# -- the check ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ProposalOutcome:
    """What a dry-run reconciliation found: failing checks (empty: valid), the render's warnings and its
    notices about single objects."""

    problems: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    notices: tuple[ObjectNotice, ...] = ()


ProposalCheck = Callable[[Mapping[str, StoreLike]], Awaitable[ProposalOutcome]]
"""Renders the configuration from these stores, validates it and runs the validationTests."""


# -- the validator --------------------------------------------------------------------------------------


def _gvr_of(watched: WatchedResource) -> GroupVersionResource:
    group, _, version = watched.api_version.rpartition("/")
    return GroupVersionResource(group=group, version=version, resource=watched.resources)


def webhook_resources(watched: Mapping[str, WatchedResource]) -> list[GroupVersionResource]:
    """The GVRs with ``enableValidationWebhook: true``, sorted and without duplicates."""
    found = {_gvr_of(w) for w in watched.values() if w.enable_validation_webhook}
    return sorted(found, key=lambda g: (g.group, g.version, g.resource))


def _control_characters(obj: Mapping[str, Any]) -> list[str]:
    """Our annotations (and names) are single HAProxy words or values: a control character injects lines."""
    meta = obj.get("metadata") or {}
    fields = []
    for key in ("name", "generateName", "namespace"):
        value = meta.get(key)
        if isinstance(value, str) and has_control_characters(value):
            fields.append(f"metadata.{key}")
    annotations = meta.get("annotations") or {}
    if isinstance(annotations, Mapping):
        for key in sorted(annotations):
            value = annotations[key]
            if str(key).startswith(ANNOTATION_PREFIX) and isinstance(value, str) and has_control_characters(value):
                fields.append(f"metadata.annotations[{key}]")
    return fields


#: the controller's own configuration (reviewed by ``config_check`` when the validator has one)
TEMPLATE_CONFIG_GVR = GroupVersionResource(group=GROUP_VERSION.partition("/")[0],
                                           version=GROUP_VERSION.partition("/")[2], resource="haproxytemplateconfigs")


@dataclass(frozen=True)
class ConfigVerdict:
    """What ``AdmissionValidator.config_check`` found about a proposed HAProxyTemplateConfig."""

    problems: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()


ConfigCheck = Callable[[Mapping[str, Any]], Awaitable[ConfigVerdict]]


class AdmissionValidator:
    """Answers admission reviews for one configuration against its live stores."""

    #: reviews the controller's own HAProxyTemplateConfig (``config_target``: its namespace and name)
    config_check: ConfigCheck | None = None
    config_target: tuple[str, str] | None = None

    def __init__(
        self,
        watched: Mapping[str, WatchedResource],
        stores: Mapping[str, ResourceStore],
        check: ProposalCheck,
        *,
        timeout: float = DEFAULT_TIMEOUT,
    ) -> None:
        self.watched = dict(watched)
        self.stores = stores
        self.check = check
        self.timeout = timeout
        enabled = set(webhook_resources(self.watched))
        self._targets: dict[GroupVersionResource, list[str]] = {}
        for name in sorted(self.watched):
            gvr = _gvr_of(self.watched[name])
            if gvr in enabled:
                self._targets.setdefault(gvr, []).append(name)

    @classmethod
    def from_spec(
        cls,
        spec: HAProxyTemplateConfigSpec,
        stores: Mapping[str, ResourceStore],
        check: ProposalCheck,
        *,
        timeout: float = DEFAULT_TIMEOUT,
    ) -> AdmissionValidator:
        return cls(spec.watched_resources, stores, check, timeout=timeout)

    def registered(self) -> list[GroupVersionResource]:
        return sorted(self._targets, key=lambda g: (g.group, g.version, g.resource))

    def targets(self, gvr: GroupVersionResource) -> list[str]:
        """The watched resources (store names) a request for ``gvr`` concerns; empty when unregistered."""
        return list(self._targets.get(gvr, ()))

    async def review(self, body: Any) -> AdmissionDecision:
        """The decision for an ``AdmissionReview`` body; raises ``AdmissionReviewError`` if it is not one."""
        request = parse_review(body)
        return await self.decide(request)

    async def decide(self, request: AdmissionRequest) -> AdmissionDecision:
        obj = request.object if request.operation != "DELETE" else (request.old_object or request.object)
        meta = (obj or {}).get("metadata") or {}
        if not isinstance(meta, Mapping):
            meta = {}
        namespace = request.namespace or str(meta.get("namespace") or "")
        name = request.name or str(meta.get("name") or "") or (str(meta.get("generateName") or "") + "*")
        label = f"{request.kind.kind} {namespace + '/' if namespace else ''}{name}"

        def decided(
            result: Result, message: str = "", code: int = 200, warnings: Sequence[str] = ()
        ) -> AdmissionDecision:
            return AdmissionDecision(
                uid=request.uid,
                allowed=result == "allowed",
                result=result,
                message=bounded(f"{label}: {message}") if message else "",
                code=code,
                warnings=tuple(bounded(w, MAX_WARNING_LENGTH) for w in warnings[:MAX_WARNINGS]),
                gvk=str(request.kind),
                kind=request.kind.kind,
                namespace=namespace,
                name=name,
                operation=request.operation,
            )

        if request.resource == TEMPLATE_CONFIG_GVR and self.config_check is not None:
            if (request.sub_resource or request.operation not in ("CREATE", "UPDATE")
                    or self.config_target != (namespace, name) or not isinstance(obj, Mapping)):
                return decided("allowed")
            try:
                verdict = await asyncio.wait_for(self.config_check(obj), self.timeout)
            except TimeoutError:
                return decided("error", f"validation did not finish within {self.timeout:g}s", DENIED_CODE)
            except Exception as exc:
                return decided("error", f"validation failed unexpectedly: {type(exc).__name__}: {exc}", 500)
            if verdict.problems:
                return decided("denied", "this configuration would not be adopted: " + "; ".join(verdict.problems),
                               DENIED_CODE, verdict.warnings)
            return decided("allowed", warnings=verdict.warnings)
        names = self.targets(request.resource)
        if not names or request.sub_resource or request.operation == "CONNECT":
            return decided("allowed")
        if not isinstance(obj, Mapping):
            return decided("denied", f"{request.operation} request without an object", 400)
        if request.operation != "DELETE" and not (meta.get("name") or meta.get("generateName")):
            return decided("denied", "metadata.name or metadata.generateName is required", 400)
        hostile = _control_characters(obj)
        if hostile:
            return decided(
                "denied",
                "control characters would inject HAProxy directives: " + ", ".join(hostile),
                DENIED_CODE,
            )
        proposed = self._proposed(obj, namespace)
        stores: dict[str, StoreLike] = dict(self.stores)
        for store_name in names:
            base = self.stores.get(store_name)
            if base is None:
                continue
            if request.operation == "DELETE":
                stores[store_name] = OverlayStore(base, remove=proposed)
            else:
                stores[store_name] = OverlayStore(base, put=proposed)
        try:
            outcome = await asyncio.wait_for(self.check(stores), self.timeout)
        except TimeoutError:
            return decided("error", f"validation did not finish within {self.timeout:g}s", DENIED_CODE)
        except Exception as exc:  # a bug in a check must answer, not hang the API server
            return decided("error", f"validation failed unexpectedly: {type(exc).__name__}: {exc}", 500)
        unsafe = _unsafe_warnings(outcome.warnings, proposed)
        if unsafe and request.operation != "DELETE":
            return decided("denied", "unsafe fields, the templates would skip this object: " + "; ".join(unsafe),
                           DENIED_CODE)
        about = _notices_about(outcome.notices, proposed, request.kind.kind)
        left_out = [n for n in about if n.excluded]
        if left_out and request.operation != "DELETE":
            return decided("denied", "the templates would leave this object out: " + "; ".join(
                f"{n.message} ({n.field}) [{n.reason}]" if n.field else f"{n.message} [{n.reason}]" for n in left_out),
                DENIED_CODE)
        if outcome.problems:
            return decided("denied", "the configuration would be invalid: " + "; ".join(outcome.problems),
                           DENIED_CODE)
        own = [f"{n.message} [{n.reason}]" for n in about if not n.excluded]
        own += [w for w in _object_warnings(outcome.warnings, namespace, str(proposed["metadata"]["name"]))
                if not any(w == n.text() for n in about)]
        return decided("allowed", warnings=own)

    @staticmethod
    def _proposed(obj: Mapping[str, Any], namespace: str) -> dict[str, Any]:
        """The object as stores hold it: namespace from the request, a stand-in name for generateName."""
        raw = obj.get("metadata")
        meta = dict(raw) if isinstance(raw, Mapping) else {}
        if not meta.get("name"):
            meta["name"] = str(meta.get("generateName") or "") + GENERATED_SUFFIX
        if namespace and not meta.get("namespace"):
            meta["namespace"] = namespace
        return {**obj, "metadata": meta}


def _notices_about(notices: Sequence[ObjectNotice], proposed: Mapping[str, Any], kind: str) -> list[ObjectNotice]:
    ref = object_ref(proposed, kind)
    if ref is None:
        return []
    return [n for n in notices if n.ref.namespace == ref.namespace and n.ref.name == ref.name
            and n.ref.kind in (ref.kind, kind)]


def _unsafe_warnings(warnings: Sequence[str], proposed: Mapping[str, Any]) -> list[str]:
    """The reasons ``reject_unsafe`` gave for skipping the proposed object (it names fields and values)."""
    prefix = f"skipping {object_id(proposed)}: "
    return [w[len(prefix):] for w in warnings if w.startswith(prefix)]


def _object_warnings(warnings: Sequence[str], namespace: str, name: str) -> list[str]:
    ref = re.escape(f"{namespace}/{name}" if namespace else name)
    mentions = re.compile(rf"(?<![\w./-]){ref}(?![\w./-])")
    return [w for w in warnings if mentions.search(w)]


@dataclass
class AdmissionHandler:
    """What the webhook server calls: the current validator, fixed (``validator``) or asked for at each
    review (``source``, e.g. ``IterationValidators``: it follows reinitializations).

    With no validator (the controller is starting or has no valid config) every review is allowed:
    fail-open, as the original, so a broken controller cannot block the cluster's writes.
    """

    validator: AdmissionValidator | None = None
    observers: list[Callable[[AdmissionDecision], None]] = field(default_factory=list)
    source: Callable[[], AdmissionValidator | None] | None = None

    def current(self) -> AdmissionValidator | None:
        return self.source() if self.source is not None else self.validator

    async def review(self, body: Any) -> AdmissionDecision:
        validator = self.current()
        if validator is None:
            request = parse_review(body)
            decision = AdmissionDecision(
                uid=request.uid, allowed=True, result="allowed", gvk=str(request.kind), kind=request.kind.kind,
                namespace=request.namespace, name=request.name, operation=request.operation,
            )
        else:
            decision = await validator.review(body)
        for observer in self.observers:
            observer(decision)
        return decision
