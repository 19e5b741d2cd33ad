"""Authentication and (opt-in) RBAC authorization of the fake API's HTTP requests.

Every ``KubeHTTPServer`` has an ``Authorization``. Until ``enable()`` it enforces nothing: requests
without credentials act as the cluster admin (``kubernetes-admin`` in ``system:masters``, as a kind
cluster's kubeconfig does) and a bearer token of a ServiceAccount identifies that account (so
``kubectl auth whoami`` and access reviews answer for it). After ``enable()``:

- a request without credentials is ``system:anonymous`` (group ``system:unauthenticated``), an
  unknown or expired token gets 401, ``admin_token`` is the admin;
- every request is authorized against the stored RBAC objects before anything else happens (as in
  the API server, a 403 comes before a 404), with the API server's RequestInfo attributes
  (``namespaces/<name>`` requests are in namespace ``<name>``; a list or watch with
  ``fieldSelector=metadata.name=<n>`` is about object ``<n>``);
- the bootstrap ClusterRoles and bindings every cluster has are created (``cluster-admin`` for
  ``system:masters``, ``system:discovery``, ``system:basic-user``, ``system:public-info-viewer``);
- ``Impersonate-User``/``-Group``/``-Uid`` need the ``impersonate`` verb on ``users``,
  ``serviceaccounts``, ``groups`` or ``uids`` (``kubectl --as``);
- a denial is the API server's 403 ``Status`` (``pods is forbidden: User "..." cannot list resource
  "pods" in API group "" in the namespace "x"``).
"""

from __future__ import annotations

import contextlib
import hmac
import secrets
from collections.abc import Mapping
from typing import TYPE_CHECKING

from multidict import MultiMapping

from haptic.k8s.api import JSON, ApiError, Conflict

from .rbac import RBAC_GROUP, SA_PREFIX, RequestAttributes, UserInfo, authorize
from .resources import ResourceType
from .tokens import TokenIssuer, service_account_user

if TYPE_CHECKING:
    from .store import FakeKubeAPI

ADMIN = UserInfo("kubernetes-admin", ("system:masters", "system:authenticated"))
ANONYMOUS = UserInfo("system:anonymous", ("system:unauthenticated",))
_VERBS = {"POST": "create", "GET": "get", "HEAD": "get", "PUT": "update", "PATCH": "patch", "DELETE": "delete"}
_NAMESPACE_SUBRESOURCES = ("status", "finalize")


def _truthy(value: str | None) -> bool:
    return value is not None and value.lower() in ("true", "1")


def _name_from_field_selector(selector: str | None) -> str:
    for term in (selector or "").split(","):
        key, _, value = term.partition("==") if "==" in term else term.partition("=")
        if key.strip() == "metadata.name" and value.strip():
            return value.strip()
    return ""


def request_attributes(method: str, path: str, query: Mapping[str, str]) -> RequestAttributes:
    """The authorization attributes of an HTTP request, parsed from its URL like the API server's RequestInfo."""
    parts = [p for p in path.split("/") if p]
    if parts[:1] == ["api"] and len(parts) >= 3:
        group, version, rest = "", parts[1], parts[2:]
    elif parts[:1] == ["apis"] and len(parts) >= 4:
        group, version, rest = parts[1], parts[2], parts[3:]
    else:
        return RequestAttributes(verb=method.lower(), resource_request=False, path=path)
    verb = _VERBS.get(method, method.lower())
    namespace = ""
    if rest[0] == "namespaces" and len(rest) > 1:
        namespace = rest[1]
        if len(rest) > 2 and rest[2] not in _NAMESPACE_SUBRESOURCES:
            rest = rest[2:]
    resource = rest[0]
    name = rest[1] if len(rest) > 1 else ""
    subresource = rest[2] if len(rest) > 2 else ""
    if not name and verb == "get":
        verb = "watch" if _truthy(query.get("watch")) else "list"
        name = _name_from_field_selector(query.get("fieldSelector"))
    elif not name and verb == "delete":
        verb = "deletecollection"
    return RequestAttributes(verb, True, group, version, resource, subresource, name, namespace, path)


def forbidden(user: UserInfo, attrs: RequestAttributes, reason: str = "") -> ApiError:
    """The API server's 403 for a denied request (responsewriters.Forbidden + errors.NewForbidden)."""
    if not attrs.resource_request:
        text = f'User "{user.name}" cannot {attrs.verb} path "{attrs.path}"'
    else:
        resource = f"{attrs.resource}/{attrs.subresource}" if attrs.subresource else attrs.resource
        scope = f'in the namespace "{attrs.namespace}"' if attrs.namespace else "at the cluster scope"
        text = f'User "{user.name}" cannot {attrs.verb} resource "{resource}" in API group "{attrs.api_group}" {scope}'
    if reason:
        text = f"{text}: {reason}"
    if not attrs.resource_request:
        # NewForbidden always sets StatusDetails; for a path its fields are empty (serialized as {}).
        return ApiError(403, "Forbidden", f"forbidden: {text}", {"name": "", "group": "", "kind": ""})
    qualified = f"{attrs.resource}.{attrs.api_group}" if attrs.api_group else attrs.resource
    subject = f'{qualified} "{attrs.name}"' if attrs.name else qualified
    details: JSON = {}
    if attrs.name:
        details["name"] = attrs.name
    if attrs.api_group:
        details["group"] = attrs.api_group
    details["kind"] = attrs.resource
    return ApiError(403, "Forbidden", f"{subject} is forbidden: {text}", details)


def unauthorized() -> ApiError:
    return ApiError(401, "Unauthorized", "Unauthorized")


_BOOTSTRAP_META = {"labels": {"kubernetes.io/bootstrapping": "rbac-defaults"},
                   "annotations": {"rbac.authorization.kubernetes.io/autoupdate": "true"}}
_DISCOVERY_URLS = ["/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez", "/openapi", "/openapi/*", "/readyz",
                   "/version", "/version/"]
_PUBLIC_URLS = ["/healthz", "/livez", "/readyz", "/version", "/version/"]
_BOOTSTRAP_ROLES: tuple[tuple[str, list[JSON]], ...] = (
    ("cluster-admin", [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]},
                       {"nonResourceURLs": ["*"], "verbs": ["*"]}]),
    ("system:discovery", [{"nonResourceURLs": _DISCOVERY_URLS, "verbs": ["get"]}]),
    ("system:basic-user", [
        {"apiGroups": ["authorization.k8s.io"], "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"],
         "verbs": ["create"]},
        {"apiGroups": ["authentication.k8s.io"], "resources": ["selfsubjectreviews"], "verbs": ["create"]},
    ]),
    ("system:public-info-viewer", [{"nonResourceURLs": _PUBLIC_URLS, "verbs": ["get"]}]),
)
_BOOTSTRAP_BINDINGS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("cluster-admin", ("system:masters",)),
    ("system:discovery", ("system:authenticated",)),
    ("system:basic-user", ("system:authenticated",)),
    ("system:public-info-viewer", ("system:authenticated", "system:unauthenticated")),
)


class Authorization:
    """Who a request is and whether RBAC lets it through (see the module docstring)."""

    def __init__(self, api: FakeKubeAPI, ca_pem: bytes = b"") -> None:
        self.api = api
        self.tokens = TokenIssuer(api, ca_pem)
        self.enforcing = False
        self.admin_token = secrets.token_urlsafe(32)

    def enable(self) -> str:
        """Starts enforcing RBAC (creating the bootstrap policy once); returns the admin's bearer token."""
        if not self.enforcing:
            self._bootstrap()
            self.enforcing = True
        return self.admin_token

    def _bootstrap(self) -> None:
        roles = self.api.resolve(f"{RBAC_GROUP}/v1", "clusterroles")
        bindings = self.api.resolve(f"{RBAC_GROUP}/v1", "clusterrolebindings")
        for name, rules in _BOOTSTRAP_ROLES:
            self._ensure(roles, {"metadata": {"name": name, **_BOOTSTRAP_META}, "rules": rules})
        for name, groups in _BOOTSTRAP_BINDINGS:
            subjects = [{"apiGroup": RBAC_GROUP, "kind": "Group", "name": g} for g in groups]
            self._ensure(bindings, {"metadata": {"name": name, **_BOOTSTRAP_META}, "subjects": subjects,
                                    "roleRef": {"apiGroup": RBAC_GROUP, "kind": "ClusterRole", "name": name}})

    def _ensure(self, rt: ResourceType, body: JSON) -> None:
        # An object of that name may be there already (an earlier enable, or a user's own).
        with contextlib.suppress(Conflict):
            self.api.create(rt, None, body, "kube-apiserver")

    def authenticate(self, header: str | None) -> UserInfo:
        """The user of a request's ``Authorization`` header (401 for a bad one while enforcing)."""
        if not header:
            return ANONYMOUS if self.enforcing else ADMIN
        scheme, _, token = header.strip().partition(" ")
        token = token.strip()
        if scheme.lower() == "bearer" and token:
            if hmac.compare_digest(token.encode(), self.admin_token.encode()):
                return ADMIN
            user, _why = self.tokens.verify(token)
            if user is not None:
                return user
        if self.enforcing:
            raise unauthorized()
        return ADMIN

    def identify(self, headers: MultiMapping[str]) -> UserInfo:
        """The user a request acts as: its credentials, then its ``Impersonate-*`` headers (which the
        authenticated user must be allowed to ``impersonate`` while enforcing)."""
        user = self.authenticate(headers.get("Authorization"))
        wanted = headers.get("Impersonate-User")
        groups = tuple(headers.getall("Impersonate-Group", ()))
        uid = headers.get("Impersonate-Uid", "")
        if not wanted:
            if groups or uid:
                raise ApiError(500, "InternalError", "Internal error occurred: requested impersonation of groups or "
                                                     "uid without impersonating a user")
            return user
        checks = [RequestAttributes("impersonate", resource="groups", name=g) for g in groups]
        if wanted.startswith(SA_PREFIX) and wanted.count(":") == 3:
            namespace, name = wanted[len(SA_PREFIX):].split(":")
            checks.insert(0, RequestAttributes("impersonate", resource="serviceaccounts", name=name,
                                               namespace=namespace))
            # Only explicitly requested groups need the impersonate verb; a ServiceAccount brings its own.
            groups = groups or service_account_user(namespace, name).groups
        else:
            checks.insert(0, RequestAttributes("impersonate", resource="users", name=wanted))
        if uid:
            checks.append(RequestAttributes("impersonate", api_group="authentication.k8s.io", resource="uids",
                                            name=uid))
        for attrs in checks:
            self.check(user, attrs)
        implicit = "system:unauthenticated" if wanted == ANONYMOUS.name else "system:authenticated"
        if implicit not in groups:
            groups = (*groups, implicit)
        return UserInfo(wanted, groups, uid)

    def check(self, user: UserInfo, attrs: RequestAttributes) -> None:
        """Raises the API server's 403 unless RBAC allows ``attrs`` for ``user`` (no-op unless enforcing)."""
        if not self.enforcing:
            return
        decision = authorize(self.api, user, attrs)
        if not decision.allowed:
            raise forbidden(user, attrs, decision.reason)
