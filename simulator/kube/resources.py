"""Resource types the fake API serves: the built-in table and types registered from CRDs."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from haptic.k8s.api import JSON, NotFound

ALL_VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")
CREATE_ONLY = ("create",)


@dataclass(frozen=True)
class ResourceType:
    """One resource type at one group/version, as discovery describes it."""

    group: str
    version: str
    kind: str
    plural: str
    namespaced: bool
    singular: str = ""
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    has_status: bool = False
    custom: bool = False
    list_kind: str = ""
    printer_columns: tuple[Mapping[str, Any], ...] = field(default=(), compare=False, hash=False)
    # The openAPIV3Schema of a CRD's version (custom resources are validated and pruned against it).
    schema: Mapping[str, Any] | None = field(default=None, compare=False, hash=False)
    # What discovery advertises and the HTTP app allows; review types are create-only and never stored.
    verbs: tuple[str, ...] = ALL_VERBS
    # Subresources besides ``status`` (``scale``, ``token``): see ``SUBRESOURCE_KINDS``.
    subresources: tuple[str, ...] = ()

    storage_key: tuple[str, str] = field(default=("", ""), init=False, compare=False)
    api_version: str = field(default="", init=False, compare=False)

    def __post_init__(self) -> None:
        # Objects are stored once per group and plural, whatever version serves them. Both derived
        # fields are computed once because every write reads them.
        object.__setattr__(self, "storage_key", (self.group, self.plural))
        object.__setattr__(self, "api_version", f"{self.group}/{self.version}" if self.group else self.version)

    @property
    def singular_name(self) -> str:
        return self.singular or self.kind.lower()

    def describe(self) -> str:
        return f"{self.plural}.{self.group}" if self.group else self.plural


# Subresources besides ``status``: the group, version and kind they serve, and their verbs (discovery).
SUBRESOURCE_KINDS: dict[str, tuple[str, str, str, tuple[str, ...]]] = {
    "scale": ("autoscaling", "v1", "Scale", ("get", "patch", "update")),
    "token": ("authentication.k8s.io", "v1", "TokenRequest", CREATE_ONLY),
}


def _t(
    group: str,
    version: str,
    kind: str,
    plural: str,
    namespaced: bool = True,
    short: tuple[str, ...] = (),
    status: bool = False,
    categories: tuple[str, ...] = (),
    subresources: tuple[str, ...] = (),
    verbs: tuple[str, ...] = ALL_VERBS,
) -> ResourceType:
    return ResourceType(
        group, version, kind, plural, namespaced, kind.lower(), short, categories, status, False, kind + "List",
        verbs=verbs, subresources=subresources,
    )


_ALL = ("all",)
_SCALE = ("scale",)
BUILTIN_TYPES: tuple[ResourceType, ...] = (
    _t("", "v1", "Namespace", "namespaces", False, ("ns",), True),
    _t("", "v1", "Node", "nodes", False, ("no",), True),
    _t("", "v1", "Pod", "pods", True, ("po",), True, _ALL),
    _t("", "v1", "Service", "services", True, ("svc",), True, _ALL),
    _t("", "v1", "Endpoints", "endpoints", True, ("ep",)),
    _t("", "v1", "ConfigMap", "configmaps", True, ("cm",)),
    _t("", "v1", "Secret", "secrets", True),
    _t("", "v1", "ServiceAccount", "serviceaccounts", True, ("sa",), subresources=("token",)),
    _t("", "v1", "Event", "events", True, ("ev",)),
    _t("", "v1", "ReplicationController", "replicationcontrollers", True, ("rc",), True, _ALL, _SCALE),
    _t("apps", "v1", "Deployment", "deployments", True, ("deploy",), True, _ALL, _SCALE),
    _t("apps", "v1", "StatefulSet", "statefulsets", True, ("sts",), True, _ALL, _SCALE),
    _t("apps", "v1", "DaemonSet", "daemonsets", True, ("ds",), True, _ALL),
    _t("apps", "v1", "ReplicaSet", "replicasets", True, ("rs",), True, _ALL, _SCALE),
    _t("batch", "v1", "Job", "jobs", True, (), True, _ALL),
    _t("batch", "v1", "CronJob", "cronjobs", True, ("cj",), True, _ALL),
    # autoscaling/v2 first: it is the preferred (and storage) version; v1 is converted (see ``conversion``).
    _t("autoscaling", "v2", "HorizontalPodAutoscaler", "horizontalpodautoscalers", True, ("hpa",), True, _ALL),
    _t("autoscaling", "v1", "HorizontalPodAutoscaler", "horizontalpodautoscalers", True, ("hpa",), True, _ALL),
    _t("policy", "v1", "PodDisruptionBudget", "poddisruptionbudgets", True, ("pdb",), True),
    _t("networking.k8s.io", "v1", "Ingress", "ingresses", True, ("ing",), True),
    _t("networking.k8s.io", "v1", "IngressClass", "ingressclasses", False),
    _t("networking.k8s.io", "v1", "NetworkPolicy", "networkpolicies", True, ("netpol",)),
    _t("discovery.k8s.io", "v1", "EndpointSlice", "endpointslices", True),
    _t("coordination.k8s.io", "v1", "Lease", "leases", True),
    _t("events.k8s.io", "v1", "Event", "events", True, ("ev",)),
    _t("rbac.authorization.k8s.io", "v1", "ClusterRoleBinding", "clusterrolebindings", False),
    _t("rbac.authorization.k8s.io", "v1", "ClusterRole", "clusterroles", False),
    _t("rbac.authorization.k8s.io", "v1", "RoleBinding", "rolebindings", True),
    _t("rbac.authorization.k8s.io", "v1", "Role", "roles", True),
    _t("authorization.k8s.io", "v1", "SelfSubjectAccessReview", "selfsubjectaccessreviews", False,
       verbs=CREATE_ONLY),
    _t("authorization.k8s.io", "v1", "SelfSubjectRulesReview", "selfsubjectrulesreviews", False,
       verbs=CREATE_ONLY),
    _t("authorization.k8s.io", "v1", "SubjectAccessReview", "subjectaccessreviews", False, verbs=CREATE_ONLY),
    _t("authorization.k8s.io", "v1", "LocalSubjectAccessReview", "localsubjectaccessreviews", True,
       verbs=CREATE_ONLY),
    _t("authentication.k8s.io", "v1", "TokenReview", "tokenreviews", False, verbs=CREATE_ONLY),
    _t("authentication.k8s.io", "v1", "SelfSubjectReview", "selfsubjectreviews", False, verbs=CREATE_ONLY),
    _t("admissionregistration.k8s.io", "v1", "ValidatingWebhookConfiguration", "validatingwebhookconfigurations",
       False),
    _t("apiextensions.k8s.io", "v1", "CustomResourceDefinition", "customresourcedefinitions", False, ("crd", "crds"),
       True),
    _t("apiregistration.k8s.io", "v1", "APIService", "apiservices", False, (), True, ("api-extensions",)),
)

CRD_KEY = ("apiextensions.k8s.io", "customresourcedefinitions")
NAMESPACES_KEY = ("", "namespaces")


def _schema(version: Mapping[str, Any]) -> Mapping[str, Any] | None:
    schema = (version.get("schema") or {}).get("openAPIV3Schema")
    return schema if isinstance(schema, Mapping) else None


class TypeRegistry:
    """All served types, indexed by (group, version, plural), with discovery order kept stable."""

    def __init__(self, types: Iterable[ResourceType] = BUILTIN_TYPES) -> None:
        self._types: dict[tuple[str, str, str], ResourceType] = {}
        self._crd_types: dict[str, list[ResourceType]] = {}
        for rt in types:
            self.add(rt)

    def add(self, rt: ResourceType) -> None:
        self._types[(rt.group, rt.version, rt.plural)] = rt

    def all(self) -> list[ResourceType]:
        return list(self._types.values())

    def resolve(self, api_version: str, plural: str) -> ResourceType:
        group, _, version = api_version.rpartition("/")
        rt = self._types.get((group, version, plural))
        if rt is None:
            raise NotFound(
                f"the server could not find the requested resource (resource {plural!r} in {api_version!r})",
                {"group": group, "kind": plural},
            )
        return rt

    def find(self, group: str, version: str, plural: str) -> ResourceType | None:
        return self._types.get((group, version, plural))

    def by_kind(self, api_version: str, kind: str) -> ResourceType | None:
        group, _, version = api_version.rpartition("/")
        for rt in self._types.values():
            if rt.group == group and rt.version == version and rt.kind == kind:
                return rt
        return None

    def groups(self) -> dict[str, list[str]]:
        """Group name to its versions, preferred (first registered) version first."""
        out: dict[str, list[str]] = {}
        for rt in self._types.values():
            versions = out.setdefault(rt.group, [])
            if rt.version not in versions:
                versions.append(rt.version)
        return out

    def in_group_version(self, group: str, version: str) -> list[ResourceType]:
        return [rt for rt in self._types.values() if rt.group == group and rt.version == version]

    def register_crd(self, crd: JSON) -> list[ResourceType]:
        """Adds (or refreshes) the served versions of a CRD; returns the types it now provides."""
        self.unregister_crd(crd["metadata"]["name"])
        spec = crd.get("spec") or {}
        names = spec.get("names") or {}
        added: list[ResourceType] = []
        for version in spec.get("versions") or []:
            if not version.get("served", True):
                continue
            rt = ResourceType(
                group=spec["group"],
                version=version["name"],
                kind=names["kind"],
                plural=names["plural"],
                namespaced=spec.get("scope", "Namespaced") == "Namespaced",
                singular=names.get("singular") or names["kind"].lower(),
                short_names=tuple(names.get("shortNames") or ()),
                categories=tuple(names.get("categories") or ()),
                has_status="status" in (version.get("subresources") or {}),
                custom=True,
                list_kind=names.get("listKind") or names["kind"] + "List",
                printer_columns=tuple(version.get("additionalPrinterColumns") or ()),
                schema=_schema(version),
            )
            self.add(rt)
            added.append(rt)
        self._crd_types[crd["metadata"]["name"]] = added
        return added

    def unregister_crd(self, crd_name: str) -> list[ResourceType]:
        removed = self._crd_types.pop(crd_name, [])
        for rt in removed:
            self._types.pop((rt.group, rt.version, rt.plural), None)
        return removed

    def storage_keys_of_crd(self, crd_name: str) -> list[tuple[str, str]]:
        return sorted({rt.storage_key for rt in self._crd_types.get(crd_name, [])})
