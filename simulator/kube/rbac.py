"""RBAC as the API server evaluates it, over the Roles, ClusterRoles and bindings a ``FakeKubeAPI`` stores.

``authorize`` answers one request (a ``RequestAttributes``) for one ``UserInfo`` with the decision
and the reason the RBAC authorizer gives (``RBAC: allowed by ClusterRoleBinding "x" of ClusterRole
"y" to ServiceAccount "sa/ns"``, or the resolution errors when denied); ``rules_for`` lists a user's
rules in a namespace (``SelfSubjectRulesReview``). Members of ``system:masters`` are always allowed
(the API server's privileged-group authorizer runs before RBAC). ClusterRole ``aggregationRule``s
are resolved when read, as the aggregation controller would have filled them in.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from haptic.k8s.api import JSON

from .selectors import label_selector_string, parse_label_selector

if TYPE_CHECKING:
    from .store import FakeKubeAPI

RBAC_GROUP = "rbac.authorization.k8s.io"
PRIVILEGED_GROUP = "system:masters"
SA_PREFIX = "system:serviceaccount:"


@dataclass(frozen=True)
class UserInfo:
    name: str
    groups: tuple[str, ...] = ()
    uid: str = ""
    extra: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def to_json(self) -> JSON:
        out: JSON = {"username": self.name}
        if self.uid:
            out["uid"] = self.uid
        if self.groups:
            out["groups"] = list(self.groups)
        if self.extra:
            out["extra"] = {k: list(v) for k, v in sorted(self.extra.items())}
        return out


@dataclass(frozen=True)
class RequestAttributes:
    """What the API server's RequestInfo says about a request (or what a SubjectAccessReview asks)."""

    verb: str
    resource_request: bool = True
    api_group: str = ""
    api_version: str = ""
    resource: str = ""
    subresource: str = ""
    name: str = ""
    namespace: str = ""
    path: str = ""


@dataclass(frozen=True)
class Decision:
    allowed: bool
    reason: str = ""


def _has(values: Any, wanted: str) -> bool:
    return isinstance(values, list) and (wanted in values or "*" in values)


def _resource_matches(rule: JSON, resource: str, subresource: str) -> bool:
    combined = f"{resource}/{subresource}" if subresource else resource
    for pattern in rule.get("resources") or []:
        if pattern == "*" or pattern == combined or (subresource and pattern == f"*/{subresource}"):
            return True
    return False


def _path_matches(rule: JSON, path: str) -> bool:
    for pattern in rule.get("nonResourceURLs") or []:
        if pattern == "*" or pattern == path or (pattern.endswith("*") and path.startswith(pattern[:-1])):
            return True
    return False


def rule_allows(rule: JSON, attrs: RequestAttributes) -> bool:
    if not _has(rule.get("verbs"), attrs.verb):
        return False
    if not attrs.resource_request:
        return _path_matches(rule, attrs.path)
    names = rule.get("resourceNames") or []
    return (_has(rule.get("apiGroups"), attrs.api_group)
            and _resource_matches(rule, attrs.resource, attrs.subresource)
            and (not names or attrs.name in names))


def _applies(subject: JSON, user: UserInfo, namespace: str) -> bool:
    kind, name = subject.get("kind"), subject.get("name")
    if kind == "User":
        return bool(user.name == name)
    if kind == "Group":
        return name in user.groups
    if kind == "ServiceAccount":
        sa_namespace = subject.get("namespace") or namespace
        return bool(sa_namespace) and user.name == f"{SA_PREFIX}{sa_namespace}:{name}"
    return False


def _describe_subject(subject: JSON, namespace: str) -> str:
    if subject.get("kind") == "ServiceAccount":
        return f'ServiceAccount "{subject.get("name")}/{subject.get("namespace") or namespace}"'
    return f'{subject.get("kind")} "{subject.get("name")}"'


class _Resolver:
    """Reads the RBAC objects of one store for one evaluation."""

    def __init__(self, api: FakeKubeAPI) -> None:
        self.api = api

    def _objects(self, plural: str) -> list[JSON]:
        rt = self.api.types.find(RBAC_GROUP, "v1", plural)
        return [] if rt is None else self.api.objects(rt)

    def _get(self, plural: str, namespace: str, name: str) -> JSON | None:
        rt = self.api.types.find(RBAC_GROUP, "v1", plural)
        if rt is None:
            return None
        for obj in self.api.objects(rt):
            meta = obj["metadata"]
            if meta.get("name") == name and (meta.get("namespace") or "") == namespace:
                return obj
        return None

    def cluster_role_rules(self, name: str) -> tuple[list[JSON], str | None]:
        role = self._get("clusterroles", "", name)
        if role is None:
            return [], f'clusterrole.{RBAC_GROUP} "{name}" not found'
        rules = list(role.get("rules") or [])
        aggregation = role.get("aggregationRule") or {}
        # An empty selector (no requirement) selects every ClusterRole, as LabelSelectorAsSelector does.
        selectors = [parse_label_selector(label_selector_string(s))
                     for s in aggregation.get("clusterRoleSelectors") or []]
        if selectors:
            for other in self._objects("clusterroles"):
                if other is not role and any(m is None or m(other) for m in selectors):
                    rules.extend(other.get("rules") or [])
        return rules, None

    def role_rules(self, ref: JSON, namespace: str) -> tuple[list[JSON], str | None]:
        kind, name = ref.get("kind"), str(ref.get("name", ""))
        if kind == "ClusterRole":
            return self.cluster_role_rules(name)
        role = self._get("roles", namespace, name)
        if role is None:
            return [], f'role.{RBAC_GROUP} "{name}" not found'
        return list(role.get("rules") or []), None

    def visit(self, user: UserInfo, namespace: str) -> Iterator[tuple[str, list[JSON], str | None]]:
        """(source description, rules, resolution error) for every binding that applies to ``user``."""
        for binding in self._objects("clusterrolebindings"):
            ref = binding.get("roleRef") or {}
            for subject in binding.get("subjects") or []:
                if _applies(subject, user, ""):
                    rules, error = self.cluster_role_rules(str(ref.get("name", "")))
                    source = (f'ClusterRoleBinding "{binding["metadata"]["name"]}" of {ref.get("kind")} '
                              f'"{ref.get("name")}" to {_describe_subject(subject, "")}')
                    yield source, rules, error
                    break
        if not namespace:
            return
        for binding in self._objects("rolebindings"):
            meta = binding["metadata"]
            if meta.get("namespace") != namespace:
                continue
            ref = binding.get("roleRef") or {}
            for subject in binding.get("subjects") or []:
                if _applies(subject, user, namespace):
                    rules, error = self.role_rules(ref, namespace)
                    source = (f'RoleBinding "{meta["name"]}/{namespace}" of {ref.get("kind")} "{ref.get("name")}" '
                              f"to {_describe_subject(subject, namespace)}")
                    yield source, rules, error
                    break


def authorize(api: FakeKubeAPI, user: UserInfo, attrs: RequestAttributes) -> Decision:
    if PRIVILEGED_GROUP in user.groups:
        return Decision(True)
    errors: list[str] = []
    for source, rules, error in _Resolver(api).visit(user, attrs.namespace if attrs.resource_request else ""):
        if error:
            errors.append(error)
        if any(rule_allows(rule, attrs) for rule in rules):
            return Decision(True, f"RBAC: allowed by {source}")
    if not errors:
        return Decision(False)
    # utilerrors.NewAggregate prints one error as itself and several as a bracketed list.
    return Decision(False, "RBAC: " + (errors[0] if len(errors) == 1 else f"[{', '.join(errors)}]"))


def rules_for(api: FakeKubeAPI, user: UserInfo, namespace: str) -> tuple[list[JSON], list[JSON], list[str]]:
    """(resource rules, non-resource rules, resolution errors) that apply to ``user`` in ``namespace``."""
    if PRIVILEGED_GROUP in user.groups:
        return ([{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}],
                [{"verbs": ["*"], "nonResourceURLs": ["*"]}], [])
    resource_rules: list[JSON] = []
    path_rules: list[JSON] = []
    errors: list[str] = []
    for _source, rules, error in _Resolver(api).visit(user, namespace):
        if error:
            errors.append(error)
        for rule in rules:
            if rule.get("nonResourceURLs"):
                path_rules.append({"verbs": list(rule.get("verbs") or []),
                                   "nonResourceURLs": list(rule["nonResourceURLs"])})
            else:
                entry = {k: list(rule[k]) for k in ("verbs", "apiGroups", "resources", "resourceNames") if rule.get(k)}
                resource_rules.append(entry)
    return resource_rules, path_rules, errors
