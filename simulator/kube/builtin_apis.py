"""Requests the object store does not answer by itself: the ``scale`` and ``token`` subresources and the
create-only review types (``reviews``). The HTTP app hands them here (``is_special`` / ``serve``), and
tells ``after_write`` about the writes it made (for what a controller would do next)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from haptic.k8s.api import JSON, ApiError, NotFound

from . import reviews, scale
from .rbac import UserInfo
from .resources import CREATE_ONLY, ResourceType

if TYPE_CHECKING:
    from .authorization import Authorization


@dataclass(frozen=True)
class Call:
    """One request to a special endpoint, decoded by the front-end."""

    method: str
    rt: ResourceType
    namespace: str | None
    name: str | None
    subresource: str | None
    body: Any
    patch_type: str | None
    manager: str | None
    user: UserInfo


def is_special(rt: ResourceType, subresource: str | None) -> bool:
    return subresource in ("scale", "token") or rt.verbs == CREATE_ONLY


def not_allowed() -> ApiError:
    return ApiError(405, "MethodNotAllowed", "the server does not allow this method on the requested resource")


def after_write(auth: Authorization, rt: ResourceType, obj: JSON) -> None:
    """What controllers do right after a write, done at once: the token controller fills a
    ``kubernetes.io/service-account-token`` Secret (the answer to the write still shows it unfilled)."""
    if rt.storage_key != ("", "secrets") or auth.api.in_dry_run:
        return
    filled = auth.tokens.fill_token_secret(obj)
    if filled is not None:
        meta = filled["metadata"]
        auth.api.update(rt, meta.get("namespace"), meta["name"], filled, None, "kube-controller-manager")


def serve(auth: Authorization, call: Call) -> tuple[JSON, int]:
    """The answer (object, HTTP status) to a special request."""
    api, rt = auth.api, call.rt
    if call.subresource is not None and call.subresource not in rt.subresources:
        raise NotFound(f"the server could not find the requested resource ({rt.describe()}/{call.subresource})",
                       {"kind": rt.plural, "group": rt.group})
    if call.subresource == "scale" and call.name is not None:
        if call.method == "GET":
            return scale.read(api, rt, call.namespace, call.name), 200
        if call.method == "PUT":
            return scale.write(api, rt, call.namespace, call.name, call.body, call.manager), 200
        if call.method == "PATCH":
            return scale.patch(api, rt, call.namespace, call.name, str(call.patch_type), call.body, call.manager), 200
        raise not_allowed()
    if call.subresource == "token" and call.name is not None:
        if call.method != "POST":
            raise not_allowed()
        return auth.tokens.request(str(call.namespace or "default"), call.name, call.body), 201
    if rt.verbs == CREATE_ONLY and call.name is None and call.subresource is None:
        if call.method != "POST":
            raise not_allowed()
        return reviews.review(auth, call.user, rt, call.namespace, call.body), 201
    raise not_allowed()
