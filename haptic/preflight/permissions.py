"""Every API permission the controller needs for one configuration: the one list that ``deploy/rbac.yaml``
is checked against (nothing missing, nothing more) and that ``haptic preflight`` asks the API server
about, one SelfSubjectAccessReview each.

Scopes follow what the controller does: its config, credentials Secret, published ``HAProxyCfg``,
HAProxy pods and leader-election Lease live in its own namespace; the resources the templates watch
are listed and watched in every namespace (tenants' Ingresses, Services, EndpointSlices and the TLS
Secrets they name), and the ValidatingWebhookConfiguration is cluster-scoped.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from haptic.config.aux_resources import AUX_KINDS
from haptic.config.haproxycfg import runtime_config_name
from haptic.config.models import HAProxyTemplateConfigSpec
from haptic.k8s.builtin_groups import is_builtin_group

CONFIG_GROUP = "haproxy-haptic.org"
#: The ValidatingWebhookConfiguration the controller applies (``haptic.webhook.configuration``).
WEBHOOK_CONFIGURATION_NAME = "haptic-validating-webhook"
_READ = ("list", "watch")


@dataclass(frozen=True)
class Permission:
    """One verb on one resource; ``namespace`` None means every namespace (or a cluster-scoped resource)."""

    verb: str
    group: str
    resource: str
    subresource: str = ""
    namespace: str | None = None
    name: str = ""
    why: str = ""

    @property
    def resource_path(self) -> str:
        resource = f"{self.resource}/{self.subresource}" if self.subresource else self.resource
        return f"{resource}.{self.group}" if self.group else resource

    def describe(self) -> str:
        where = f"in {self.namespace}" if self.namespace else "cluster-wide"
        named = f" {self.name}" if self.name else ""
        return f"{self.verb} {self.resource_path}{named} {where}"


def _group(api_version: str) -> str:
    return api_version.rpartition("/")[0]


#: the Gateway API resources whose status the ``gateway`` template library writes (set_status)
_GATEWAY_STATUSES = ("gatewayclasses", "gateways", "httproutes", "grpcroutes")


def required_permissions(spec: HAProxyTemplateConfigSpec, *, namespace: str, config_name: str,
                         secret_name: str, webhook: bool) -> list[Permission]:
    """The permissions of a controller in ``namespace`` running config ``config_name`` (sorted, no duplicates).

    ``webhook``: the controller serves the validating webhook (``WEBHOOK_CERT_DIR`` set) and so keeps
    the ValidatingWebhookConfiguration in step (applies it, or deletes it when no resource enables it).
    """
    cfg = runtime_config_name(config_name)
    lease = spec.controller.leader_election.lease_name
    own: list[Permission] = [
        *(Permission(v, CONFIG_GROUP, "haproxytemplateconfigs", namespace=namespace, name=config_name,
                     why="its configuration") for v in ("get", *_READ)),
        Permission("patch", CONFIG_GROUP, "haproxytemplateconfigs", "status", namespace, config_name,
                   "the config's validation status"),
        *(Permission(v, "", "secrets", namespace=namespace, name=secret_name, why="the Dataplane API credentials")
          for v in ("get", *_READ)),
        *(Permission(v, CONFIG_GROUP, "haproxycfgs", namespace=namespace, name=cfg, why="the published config")
          for v in ("get", "create", "patch")),
        Permission("patch", CONFIG_GROUP, "haproxycfgs", "status", namespace, cfg, "the deployment status"),
        *(Permission(v, CONFIG_GROUP, kind.plural, namespace=namespace, why="the published auxiliary files")
          for kind in AUX_KINDS for v in ("list", "create", "patch", "delete")),
        *(Permission(v, "", "pods", namespace=namespace, why="HAProxy pod discovery (podSelector)") for v in _READ),
    ]
    if spec.controller.leader_election.enabled:
        own += [Permission(v, "coordination.k8s.io", "leases", namespace=namespace, name=lease,
                           why="leader election") for v in ("get", "watch", "create", "update")]
    cluster: list[Permission] = []
    for key, watched in spec.watched_resources.items():
        group = _group(watched.api_version)
        cluster += [Permission(v, group, watched.resources, why=f"watchedResources.{key}") for v in _READ]
        if watched.resources == "ingresses" and group == "networking.k8s.io":
            cluster.append(Permission("patch", group, "ingresses", "status", why="Ingress status.loadBalancer"))
        if group == "gateway.networking.k8s.io" and watched.resources in _GATEWAY_STATUSES:
            cluster.append(Permission("patch", group, watched.resources, "status",
                                      why="the Gateway API status the gateway library declares"))
    if any(w.namespace_selector for w in spec.watched_resources.values()):
        cluster += [Permission(v, "", "namespaces", why="namespaceSelector of watched resources") for v in _READ]
    if any(not is_builtin_group(_group(w.api_version)) for w in spec.watched_resources.values()):
        cluster += [Permission(v, "apiextensions.k8s.io", "customresourcedefinitions",
                               why="reinitializing when a CRD of a watched resource changes") for v in _READ]
    if webhook:
        cluster += [Permission(v, "admissionregistration.k8s.io", "validatingwebhookconfigurations",
                               name=WEBHOOK_CONFIGURATION_NAME, why="the validating webhook's registration")
                    for v in ("patch", "delete")]
    return sorted(set(own + cluster), key=lambda p: (p.namespace or "", p.group, p.resource, p.subresource,
                                                      p.verb, p.name))


@dataclass(frozen=True)
class Grant:
    """What one RBAC rule grants, where: ``namespace`` None for a ClusterRole bound cluster-wide."""

    verbs: frozenset[str]
    groups: frozenset[str]
    resources: frozenset[str]
    names: frozenset[str]
    namespace: str | None
    source: str

    def allows(self, p: Permission) -> bool:
        resource = f"{p.resource}/{p.subresource}" if p.subresource else p.resource
        in_scope = self.namespace is None or self.namespace == p.namespace
        named = not self.names or (bool(p.name) and p.name in self.names)
        return (in_scope and named and _has(self.verbs, p.verb) and _has(self.groups, p.group)
                and _has(self.resources, resource))


def _has(values: frozenset[str], wanted: str) -> bool:
    return wanted in values or "*" in values


def grants_from_rules(rules: Iterable[dict[str, object]], namespace: str | None, source: str) -> list[Grant]:
    def strings(rule: dict[str, object], key: str) -> frozenset[str]:
        value = rule.get(key) or []
        return frozenset(str(v) for v in value) if isinstance(value, list) else frozenset()

    return [Grant(strings(r, "verbs"), strings(r, "apiGroups"), strings(r, "resources"),
                  strings(r, "resourceNames"), namespace, source) for r in rules]


def missing(required: Sequence[Permission], grants: Sequence[Grant]) -> list[Permission]:
    return [p for p in required if not any(g.allows(p) for g in grants)]


def unneeded(required: Sequence[Permission], grants: Sequence[Grant]) -> list[str]:
    """Each (verb, resource, scope) a grant gives that no required permission uses: least privilege."""
    found = []
    for g in grants:
        for verb in sorted(g.verbs):
            for group in sorted(g.groups):
                for resource in sorted(g.resources):
                    base, _, sub = resource.partition("/")
                    used = any(p.verb == verb and p.group == group and p.resource == base and p.subresource == sub
                               and (g.namespace is None or p.namespace == g.namespace)
                               and (g.namespace is not None or p.namespace is None) for p in required)
                    if not used:
                        where = f"in {g.namespace}" if g.namespace else "cluster-wide"
                        found.append(f"{g.source}: {verb} {resource}.{group or 'core'} {where}")
    return found
