"""The create-only review APIs, answered from the stored RBAC objects and never stored themselves:
``authorization.k8s.io/v1`` SelfSubjectAccessReview, SubjectAccessReview, LocalSubjectAccessReview and
SelfSubjectRulesReview (``kubectl auth can-i [--list]``), ``authentication.k8s.io/v1`` TokenReview and
SelfSubjectReview (``kubectl auth whoami``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from haptic.k8s.api import JSON, Invalid

from . import field_errors
from .field_errors import FieldError, Raw, invalid_value, required
from .rbac import RequestAttributes, UserInfo, authorize, rules_for
from .resources import ResourceType
from .tokens import DEFAULT_AUDIENCES
from .validation import bad_request

if TYPE_CHECKING:
    from .authorization import Authorization


def _invalid(rt: ResourceType, error: FieldError) -> Invalid:
    return field_errors.invalid(rt.kind, rt.group, "", [error])


def _attributes(rt: ResourceType, spec: JSON) -> RequestAttributes:
    resource, path = spec.get("resourceAttributes"), spec.get("nonResourceAttributes")
    if resource is not None and path is not None:
        raise _invalid(rt, invalid_value("spec.nonResourceAttributes", Raw("{...}"),
                                         "cannot be specified in combination with resourceAttributes"))
    if resource is None and path is None:
        raise _invalid(rt, required("spec.resourceAttributes",
                                    "exactly one of nonResourceAttributes or resourceAttributes must be specified"))
    if isinstance(path, dict):
        return RequestAttributes(verb=str(path.get("verb", "")), resource_request=False, path=str(path.get("path", "")))
    if not isinstance(resource, dict):
        raise bad_request(f"spec of a {rt.kind}: resourceAttributes and nonResourceAttributes must be objects")
    return RequestAttributes(
        verb=str(resource.get("verb", "")), api_group=str(resource.get("group", "")),
        api_version=str(resource.get("version", "")), resource=str(resource.get("resource", "")),
        subresource=str(resource.get("subresource", "")), name=str(resource.get("name", "")),
        namespace=str(resource.get("namespace", "")),
    )


def _answer(rt: ResourceType, body: JSON, status: JSON) -> JSON:
    meta = {k: v for k, v in (body.get("metadata") or {}).items() if k in ("name", "namespace", "labels",
                                                                          "annotations")}
    meta["creationTimestamp"] = None
    return {"kind": rt.kind, "apiVersion": rt.api_version, "metadata": meta, "spec": body.get("spec") or {},
            "status": status}


def _access_status(auth: Authorization, user: UserInfo, attrs: RequestAttributes) -> JSON:
    decision = authorize(auth.api, user, attrs)
    status: JSON = {"allowed": decision.allowed}
    if decision.reason:
        status["reason"] = decision.reason
    return status


def _subject(rt: ResourceType, spec: JSON) -> UserInfo:
    user, groups = str(spec.get("user") or ""), tuple(str(g) for g in spec.get("groups") or ())
    if not user and not groups:
        raise _invalid(rt, invalid_value("spec.user", "", "at least one of user or group must be specified"))
    extra = {str(k): tuple(str(x) for x in v) for k, v in (spec.get("extra") or {}).items()}
    return UserInfo(user, groups, str(spec.get("uid") or ""), extra)


def review(auth: Authorization, user: UserInfo, rt: ResourceType, namespace: str | None, body: Any) -> JSON:
    """The answer to creating a review of type ``rt`` (its ``status`` filled in)."""
    if not isinstance(body, dict):
        raise bad_request(f"the body of a {rt.kind} must be a JSON object")
    spec = body.get("spec") or {}
    if not isinstance(spec, dict):
        raise bad_request(f"spec of a {rt.kind} must be an object")
    kind = rt.kind
    if kind == "SelfSubjectAccessReview":
        return _answer(rt, body, _access_status(auth, user, _attributes(rt, spec)))
    if kind in ("SubjectAccessReview", "LocalSubjectAccessReview"):
        subject = _subject(rt, spec)
        attrs = _attributes(rt, spec)
        if kind == "LocalSubjectAccessReview":
            if not attrs.resource_request:
                raise _invalid(rt, invalid_value("spec.nonResourceAttributes", Raw("{...}"),
                                                 "disallowed on this kind of request"))
            if attrs.namespace != namespace:
                raise _invalid(rt, invalid_value("spec.resourceAttributes.namespace", attrs.namespace,
                                                 "must match metadata.namespace"))
        return _answer(rt, body, _access_status(auth, subject, attrs))
    if kind == "SelfSubjectRulesReview":
        resource_rules, path_rules, errors = rules_for(auth.api, user, str(spec.get("namespace") or ""))
        status = {"resourceRules": resource_rules, "nonResourceRules": path_rules, "incomplete": bool(errors)}
        if errors:
            status["evaluationError"] = "; ".join(errors)
        return _answer(rt, body, status)
    if kind == "SelfSubjectReview":
        return {"kind": kind, "apiVersion": rt.api_version, "metadata": {"creationTimestamp": None},
                "status": {"userInfo": user.to_json()}}
    if kind == "TokenReview":
        token = spec.get("token")
        if not isinstance(token, str) or not token:
            raise _invalid(rt, required("spec.token", "token must be specified"))
        audiences = [str(a) for a in spec.get("audiences") or []] or None
        found, why = auth.tokens.verify(token, audiences)
        if found is None:
            return _answer(rt, body, {"user": {}, "error": f"[{why}]"})
        return _answer(rt, body, {"authenticated": True, "user": found.to_json(),
                                  "audiences": audiences or list(DEFAULT_AUDIENCES)})
    raise bad_request(f"{kind} cannot be created")
