"""Validation and immutability of the built-in kinds controllers and their templates touch, worded as the
API server's ``pkg/apis/*/validation`` words them: ConfigMap, Secret, Service, EndpointSlice, Ingress,
IngressClass, Deployment (and its pod template), Pod, Job, Lease.

``errors(rt, obj, old)`` returns the field errors of a create (``old`` None) or an update; the store
refuses the write with one 422 carrying them all. Values that Go prints as internal structs are shown in
the shape the server uses for the common cases (label selectors); deep structs are abbreviated.
"""

from __future__ import annotations

import ipaddress
import json
import re
from collections.abc import Callable
from typing import Any

from haptic.k8s.api import JSON

from .field_errors import (
    FieldError,
    Raw,
    duplicate,
    forbidden,
    immutable,
    invalid_value,
    not_supported,
    required,
    too_long,
    too_long_bytes,
    too_many,
)
from .gofmt import go_quote
from .known_good import KnownGood
from .resources import ResourceType
from .validation import dns1123_label_errors, dns1123_subdomain_errors

_CONFIG_KEY = re.compile(r"^[-._a-zA-Z0-9]+$")
_IANA_SVC_NAME = re.compile(r"^[a-z0-9]([a-z0-9-]*[a-z0-9])?$")
_MAX_DATA = 1024 * 1024
_IMMUTABLE_SET = "field is immutable when `immutable` is set"
_PORT_RANGE = "must be between 1 and 65535, inclusive"
Check = Callable[[JSON, JSON | None], list[FieldError]]


def _map(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _nonneg(errors: list[FieldError], field: str, value: Any) -> None:
    if isinstance(value, int) and not isinstance(value, bool) and value < 0:
        errors.append(invalid_value(field, value, "must be greater than or equal to 0"))


def _port_number(errors: list[FieldError], field: str, value: Any) -> None:
    if isinstance(value, int) and not isinstance(value, bool) and not 1 <= value <= 65535:
        errors.append(invalid_value(field, value, _PORT_RANGE))


def _port_name(errors: list[FieldError], field: str, value: str) -> None:
    """``validation.IsValidPortName`` (an IANA service name)."""
    if len(value) > 15:
        errors.append(invalid_value(field, value, "must be no more than 15 characters"))
    if not _IANA_SVC_NAME.match(value):
        errors.append(invalid_value(field, value, "must contain only alpha-numeric characters (a-z, 0-9), and "
                                                  "hyphens (-)"))
    elif "--" in value:
        errors.append(invalid_value(field, value, "must not contain consecutive hyphens"))
    if value and not re.search(r"[a-z]", value):
        errors.append(invalid_value(field, value, "must contain at least one letter (a-z)"))


def _int_or_string_port(errors: list[FieldError], field: str, value: Any) -> None:
    if isinstance(value, str):
        _port_name(errors, field, value)
    else:
        _port_number(errors, field, value)


# -- data-carrying kinds --------------------------------------------------------------------------------


_CONFIG_KEYS = KnownGood(lambda key: isinstance(key, str) and len(key) <= 253 and _CONFIG_KEY.match(key) is not None)


def _data_keys(errors: list[FieldError], obj: JSON, fields: tuple[str, ...]) -> int:
    """Checks the keys of the data maps; returns their size (keys and values) as the API server counts it."""
    first = obj.get(fields[0])
    if len(fields) == 1 or not obj.get(fields[1]):
        # The usual case, one map: no key can be a duplicate, and valid keys are known from earlier writes.
        if not isinstance(first, dict):
            return 0
        if _CONFIG_KEYS.all(first):
            try:
                return sum(map(len, first)) + sum(map(len, first.values()))
            except TypeError:  # a value that is not a string: counted below
                pass
    maps = [(name, _map(obj.get(name))) for name in fields]
    seen: dict[str, str] = {}
    size = 0
    for name, values in maps:
        for key, value in values.items():
            key = str(key)
            size += len(key) + len(value if isinstance(value, str) else str(value))
            if not _CONFIG_KEYS.all((key,)):
                path = f"{name}[{key}]"
                if len(key) > 253:
                    errors.append(invalid_value(path, key, "must be no more than 253 characters"))
                if not _CONFIG_KEY.match(key):
                    errors.append(invalid_value(path, key, "a valid config key must consist of alphanumeric "
                                                "characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  "
                                                "or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')"))
            if key in seen:
                errors.append(invalid_value(f"{name}[{key}]", key, f"duplicate of key present in {seen[key]}"))
            seen.setdefault(key, name)
    return size


def _immutable_data(errors: list[FieldError], obj: JSON, old: JSON | None, fields: tuple[str, ...]) -> None:
    if old is None or old.get("immutable") is not True:
        return
    for name in fields:
        if obj.get(name) != old.get(name):
            errors.append(forbidden(name, _IMMUTABLE_SET))
    if obj.get("immutable") is not True:
        errors.append(forbidden("immutable", _IMMUTABLE_SET))


def config_map(obj: JSON, old: JSON | None) -> list[FieldError]:
    errors: list[FieldError] = []
    fields = ("data", "binaryData")
    if _data_keys(errors, obj, fields) > _MAX_DATA:
        errors.append(too_long_bytes("", _MAX_DATA))
    _immutable_data(errors, obj, old, fields)
    return errors


_SECRET_REQUIRED = {
    "kubernetes.io/dockercfg": (".dockercfg",),
    "kubernetes.io/dockerconfigjson": (".dockerconfigjson",),
    "kubernetes.io/ssh-auth": ("ssh-privatekey",),
    "kubernetes.io/tls": ("tls.key", "tls.crt"),
}


def secret(obj: JSON, old: JSON | None) -> list[FieldError]:
    errors: list[FieldError] = []
    size = _data_keys(errors, obj, ("data",))
    data = _map(obj.get("data"))
    kind = str(obj.get("type") or "Opaque")
    for key in _SECRET_REQUIRED.get(kind, ()):
        if key not in data:
            errors.append(required(f"data[{key}]"))
    if kind == "kubernetes.io/basic-auth" and not data.get("username") and not data.get("password"):
        errors.extend([required("data[username]"), required("data[password]")])
    if kind == "kubernetes.io/service-account-token":
        annotations = _map(_map(obj.get("metadata")).get("annotations"))
        if not annotations.get("kubernetes.io/service-account.name"):
            errors.append(required("metadata.annotations[kubernetes.io/service-account.name]"))
    if size > _MAX_DATA:
        errors.append(too_long_bytes("data", _MAX_DATA))
    if old is not None and str(old.get("type") or "Opaque") != kind:
        errors.append(immutable("type", kind))
    _immutable_data(errors, obj, old, ("data",))
    return errors


# -- services and endpoints ------------------------------------------------------------------------------


_SERVICE_TYPES = ["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"]
_PROTOCOLS = ["SCTP", "TCP", "UDP"]


def service(obj: JSON, old: JSON | None) -> list[FieldError]:
    errors: list[FieldError] = []
    spec = _map(obj.get("spec"))
    kind = spec.get("type", "ClusterIP")
    if kind not in _SERVICE_TYPES:
        errors.append(not_supported("spec.type", kind, _SERVICE_TYPES))
    affinity = spec.get("sessionAffinity", "None")
    if affinity not in ("ClientIP", "None"):
        errors.append(not_supported("spec.sessionAffinity", affinity, ["ClientIP", "None"]))
    ports = _list(spec.get("ports"))
    if kind == "ExternalName":
        if not spec.get("externalName"):
            errors.append(required("spec.externalName"))
    elif not ports and spec.get("clusterIP") != "None":
        errors.append(required("spec.ports"))
    names: set[str] = set()
    for index, port in enumerate(ports):
        port = _map(port)
        base = f"spec.ports[{index}]"
        name = port.get("name")
        if len(ports) > 1 and not name:
            errors.append(required(f"{base}.name"))
        elif name:
            errors.extend(dns1123_label_errors(f"{base}.name", str(name)))
            if name in names:
                errors.append(duplicate(f"{base}.name", name))
            names.add(str(name))
        if "port" not in port:
            errors.append(required(f"{base}.port"))
        _port_number(errors, f"{base}.port", port.get("port"))
        if port.get("protocol", "TCP") not in _PROTOCOLS:
            errors.append(not_supported(f"{base}.protocol", port.get("protocol"), _PROTOCOLS))
        if "targetPort" in port:
            _int_or_string_port(errors, f"{base}.targetPort", port["targetPort"])
        if "nodePort" in port:
            _port_number(errors, f"{base}.nodePort", port["nodePort"])
    return errors


_ADDRESS_TYPES = ["FQDN", "IPv4", "IPv6"]


def _address_ok(address: str, kind: str) -> str | None:
    if kind == "FQDN":
        return None if not dns1123_subdomain_errors("", address) else \
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters"
    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:
        parsed = None
    wanted = 4 if kind == "IPv4" else 6
    if parsed is None or parsed.version != wanted:
        return f"must be a valid {kind} address"
    return None


def endpoint_slice(obj: JSON, old: JSON | None) -> list[FieldError]:
    errors: list[FieldError] = []
    kind = obj.get("addressType")
    if not kind:
        errors.append(required("addressType"))
    elif kind not in _ADDRESS_TYPES:
        errors.append(not_supported("addressType", kind, _ADDRESS_TYPES))
    if old is not None and old.get("addressType") != kind:
        errors.append(immutable("addressType", kind))
    for index, endpoint in enumerate(_list(obj.get("endpoints"))):
        addresses = _list(_map(endpoint).get("addresses"))
        base = f"endpoints[{index}].addresses"
        if not addresses:
            errors.append(required(base, "must contain at least 1 address"))
        elif len(addresses) > 100:
            errors.append(too_many(base, len(addresses), 100))
        for position, address in enumerate(addresses):
            why = _address_ok(str(address), str(kind)) if kind in _ADDRESS_TYPES else None
            if why:
                errors.append(invalid_value(f"{base}[{position}]", address, why))
    names: set[str] = set()
    for index, port in enumerate(_list(obj.get("ports"))):
        # Port numbers are not range-checked here (``validatePorts`` checks names and protocols only).
        port = _map(port)
        name = str(port.get("name") or "")
        if name:
            errors.extend(dns1123_label_errors(f"ports[{index}].name", name))
        if name in names:
            errors.append(duplicate(f"ports[{index}].name", name))
        names.add(name)
        if port.get("protocol", "TCP") not in _PROTOCOLS:
            errors.append(not_supported(f"ports[{index}].protocol", port.get("protocol"), _PROTOCOLS))
    return errors


# -- ingress ---------------------------------------------------------------------------------------------------


_PATH_TYPES = ["Exact", "ImplementationSpecific", "Prefix"]


def _host_errors(field: str, host: str) -> list[FieldError]:
    if host.startswith("*."):
        return [invalid_value(field, host, e.detail.replace("a lowercase RFC 1123 subdomain", "a wildcard "
                                                             "DNS-1123 subdomain must start with '*.', followed by "
                                                             "a valid DNS subdomain, which"))
                for e in dns1123_subdomain_errors(field, host[2:])]
    return dns1123_subdomain_errors(field, host)


def _backend(errors: list[FieldError], field: str, backend: Any) -> None:
    backend = _map(backend)
    service_ref, resource = backend.get("service"), backend.get("resource")
    if service_ref and resource:
        errors.append(invalid_value(field, "", "cannot set both resource and service backends"))
    elif resource:
        return
    elif not service_ref:
        errors.append(invalid_value(field, "", "resource or service backend is required"))
        return
    service_ref = _map(service_ref)
    if not service_ref.get("name"):
        errors.append(required(f"{field}.service.name"))
    else:
        errors.extend(dns1123_label_errors(f"{field}.service.name", str(service_ref["name"])))
    port = _map(service_ref.get("port"))
    name, number = port.get("name"), port.get("number")
    if name and number:
        errors.append(invalid_value(f"{field}.service.port", Raw(f"networking.ServiceBackendPort{{Name:"
                                                                 f"{go_quote(str(name))}, Number:{number}}}"),
                                    "cannot set both port name & port number"))
    elif name:
        _port_name(errors, f"{field}.service.port.name", str(name))
    elif number:
        _port_number(errors, f"{field}.service.port.number", number)
    else:
        errors.append(required(f"{field}.service.port", "port name or number is required"))


def _path(errors: list[FieldError], base: str, entry: Any) -> None:
    entry = _map(entry)
    path_type = entry.get("pathType")
    path = entry.get("path", "")
    if not path_type:
        errors.append(required(f"{base}.pathType", "pathType must be specified"))
        return  # the server checks nothing else of such a path
    if path_type not in _PATH_TYPES:
        errors.append(not_supported(f"{base}.pathType", path_type, _PATH_TYPES))
    if path_type in ("Exact", "Prefix") or (path_type == "ImplementationSpecific" and path):
        if not str(path).startswith("/"):
            errors.append(invalid_value(f"{base}.path", path, "must be an absolute path"))
        elif path_type in ("Exact", "Prefix"):
            for bad in ("//", "/./", "/../", "%2f", "%2F"):
                if bad in path:
                    errors.append(invalid_value(f"{base}.path", path, f"must not contain '{bad}'"))
            for bad in ("/..", "/."):
                if str(path).endswith(bad):
                    errors.append(invalid_value(f"{base}.path", path, f"cannot end with '{bad}'"))
    _backend(errors, f"{base}.backend", entry.get("backend"))


def ingress(obj: JSON, old: JSON | None) -> list[FieldError]:
    errors: list[FieldError] = []
    spec = _map(obj.get("spec"))
    rules = _list(spec.get("rules"))
    if not rules and not spec.get("defaultBackend"):
        errors.append(invalid_value("spec", Raw("networking.IngressSpec{...}"),
                                    "either `defaultBackend` or `rules` must be specified"))
    if spec.get("defaultBackend"):
        _backend(errors, "spec.defaultBackend", spec["defaultBackend"])
    if spec.get("ingressClassName"):
        errors.extend(dns1123_subdomain_errors("spec.ingressClassName", str(spec["ingressClassName"])))
    for index, rule in enumerate(rules):
        rule = _map(rule)
        base = f"spec.rules[{index}]"
        if rule.get("host"):
            errors.extend(_host_errors(f"{base}.host", str(rule["host"])))
        http = rule.get("http")
        if http is None:
            continue
        paths = _list(_map(http).get("paths"))
        if not paths:
            errors.append(required(f"{base}.http.paths"))
        for position, entry in enumerate(paths):
            _path(errors, f"{base}.http.paths[{position}]", entry)
    for index, tls in enumerate(_list(spec.get("tls"))):
        for position, host in enumerate(_list(_map(tls).get("hosts"))):
            errors.extend(_host_errors(f"spec.tls[{index}].hosts[{position}]", str(host)))
    return errors


def ingress_class(obj: JSON, old: JSON | None) -> list[FieldError]:
    errors: list[FieldError] = []
    controller = _map(obj.get("spec")).get("controller")
    if not controller:
        errors.append(required("spec.controller"))
    else:
        if len(str(controller)) > 250:
            errors.append(too_long("spec.controller", 250))
        domain = str(controller).split("/", 1)[0]
        if "/" not in str(controller) or dns1123_subdomain_errors("", domain):
            errors.append(invalid_value("spec.controller", controller, "must be a domain-prefixed path (such as "
                                                                       '"acme.io/foo")'))
    if old is not None and _map(old.get("spec")).get("controller") != controller:
        errors.append(immutable("spec.controller", controller))
    return errors


# -- workloads ---------------------------------------------------------------------------------------------------


def selector_text(selector: Any) -> str:
    """A ``*metav1.LabelSelector`` as ``field.Error`` prints it (its generated ``String()``)."""
    selector = _map(selector)
    labels = _map(selector.get("matchLabels"))
    labels_text = "map[string]string{" + "".join(f"{k}: {labels[k]}," for k in sorted(labels)) + "}"
    expressions = "".join(_requirement_text(_map(e)) for e in _list(selector.get("matchExpressions")))
    return f"&LabelSelector{{MatchLabels:{labels_text},MatchExpressions:[]LabelSelectorRequirement{{{expressions}}},}}"


def _requirement_text(requirement: dict[str, Any]) -> str:
    values = " ".join(str(v) for v in _list(requirement.get("values")))
    return (f"&LabelSelectorRequirement{{Key:{requirement.get('key', '')},Operator:{requirement.get('operator', '')},"
            f"Values:[{values}],}},")


def _selector_matches(selector: Any, labels: dict[str, Any]) -> bool:
    selector = _map(selector)
    if any(labels.get(k) != v for k, v in _map(selector.get("matchLabels")).items()):
        return False
    for expression in _list(selector.get("matchExpressions")):
        expression = _map(expression)
        key, operator = str(expression.get("key")), expression.get("operator")
        values = _list(expression.get("values"))
        present = key in labels
        if (operator == "In" and (not present or labels[key] not in values)) or \
                (operator == "NotIn" and present and labels[key] in values) or \
                (operator == "Exists" and not present) or (operator == "DoesNotExist" and present):
            return False
    return True


def _containers(errors: list[FieldError], base: str, containers: list[Any], kind: str,
                names: set[str]) -> None:
    for index, container in enumerate(containers):
        container = _map(container)
        path = f"{base}.{kind}[{index}]"
        name = container.get("name")
        if not name:
            errors.append(required(f"{path}.name"))
        else:
            errors.extend(dns1123_label_errors(f"{path}.name", str(name)))
            if name in names:
                errors.append(duplicate(f"{path}.name", name))
            names.add(str(name))
        if not container.get("image") and kind != "ephemeralContainers":
            errors.append(required(f"{path}.image"))
        for position, port in enumerate(_list(container.get("ports"))):
            port = _map(port)
            if "containerPort" not in port:
                errors.append(required(f"{path}.ports[{position}].containerPort"))
            _port_number(errors, f"{path}.ports[{position}].containerPort", port.get("containerPort"))
            if port.get("protocol", "TCP") not in _PROTOCOLS:
                errors.append(not_supported(f"{path}.ports[{position}].protocol", port.get("protocol"), _PROTOCOLS))


def pod_spec_errors(spec: Any, base: str, restart_policies: list[str]) -> list[FieldError]:
    errors: list[FieldError] = []
    spec = _map(spec)
    containers = _list(spec.get("containers"))
    if not containers:
        errors.append(required(f"{base}.containers"))
    names: set[str] = set()
    _containers(errors, base, containers, "containers", names)
    _containers(errors, base, _list(spec.get("initContainers")), "initContainers", names)
    policy = spec.get("restartPolicy", "Always")
    if policy not in restart_policies:
        errors.append(not_supported(f"{base}.restartPolicy", policy, restart_policies))
    _nonneg(errors, f"{base}.terminationGracePeriodSeconds", spec.get("terminationGracePeriodSeconds"))
    return errors


def _template(errors: list[FieldError], spec: JSON, restart_policies: list[str], check_selector: bool) -> None:
    template = _map(spec.get("template"))
    labels = _map(_map(template.get("metadata")).get("labels"))
    selector = spec.get("selector")
    if check_selector and selector is not None and not _selector_matches(selector, labels):
        errors.append(invalid_value("spec.template.metadata.labels", Raw(_labels_text(labels)),
                                    "`selector` does not match template `labels`"))
    errors.extend(pod_spec_errors(template.get("spec"), "spec.template.spec", restart_policies))


def _labels_text(labels: dict[str, Any]) -> str:
    return "map[string]string{" + ", ".join(f"{json.dumps(k)}:{json.dumps(labels[k])}" for k in sorted(labels)) + "}"


def deployment(obj: JSON, old: JSON | None) -> list[FieldError]:
    errors: list[FieldError] = []
    spec = _map(obj.get("spec"))
    _nonneg(errors, "spec.replicas", spec.get("replicas"))
    selector = spec.get("selector")
    if selector is None:
        errors.append(required("spec.selector"))
    elif not _map(selector).get("matchLabels") and not _map(selector).get("matchExpressions"):
        errors.append(invalid_value("spec.selector", Raw(selector_text(selector)),
                                    "empty selector is invalid for deployment"))
    _template(errors, spec, ["Always"], selector is not None)
    strategy = _map(spec.get("strategy")).get("type")
    if strategy is not None and strategy not in ("Recreate", "RollingUpdate"):
        errors.append(not_supported("spec.strategy.type", strategy, ["Recreate", "RollingUpdate"]))
    _nonneg(errors, "spec.minReadySeconds", spec.get("minReadySeconds"))
    _nonneg(errors, "spec.revisionHistoryLimit", spec.get("revisionHistoryLimit"))
    if old is not None:
        before = _map(old.get("spec")).get("selector")
        if before != selector:
            errors.append(immutable("spec.selector", Raw(selector_text(selector))))
    return errors


def pod(obj: JSON, old: JSON | None) -> list[FieldError]:
    errors = pod_spec_errors(obj.get("spec"), "spec", ["Always", "OnFailure", "Never"])
    if old is not None:
        mutable = ("activeDeadlineSeconds", "tolerations", "terminationGracePeriodSeconds")
        before = {k: v for k, v in _map(old.get("spec")).items() if k not in mutable}
        after = {k: v for k, v in _map(obj.get("spec")).items() if k not in mutable}
        if _without_images(before) != _without_images(after):
            errors.append(forbidden("spec", "pod updates may not change fields other than "
                                            "`spec.containers[*].image`,`spec.initContainers[*].image`,"
                                            "`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to "
                                            "existing tolerations),`spec.terminationGracePeriodSeconds` (allow it "
                                            "to be set to 1 if it was previously negative)"))
    return errors


def _without_images(spec: dict[str, Any]) -> dict[str, Any]:
    out = dict(spec)
    for kind in ("containers", "initContainers"):
        if kind in out:
            out[kind] = [{k: v for k, v in _map(c).items() if k != "image"} for c in _list(out[kind])]
    return out


def job(obj: JSON, old: JSON | None) -> list[FieldError]:
    errors: list[FieldError] = []
    spec = _map(obj.get("spec"))
    for field in ("parallelism", "completions", "backoffLimit", "activeDeadlineSeconds", "ttlSecondsAfterFinished"):
        _nonneg(errors, f"spec.{field}", spec.get(field))
    _template(errors, spec, ["OnFailure", "Never"], spec.get("manualSelector") is True)
    if old is not None:
        before = _map(old.get("spec"))
        if before.get("template") != spec.get("template"):
            errors.append(immutable("spec.template", Raw("core.PodTemplateSpec{...}")))
        if before.get("selector") != spec.get("selector"):
            errors.append(immutable("spec.selector", Raw(selector_text(spec.get("selector")))))
        if before.get("completions") != spec.get("completions"):
            errors.append(immutable("spec.completions", spec.get("completions")))
    return errors


def lease(obj: JSON, old: JSON | None) -> list[FieldError]:
    errors: list[FieldError] = []
    spec = _map(obj.get("spec"))
    duration = spec.get("leaseDurationSeconds")
    if isinstance(duration, int) and not isinstance(duration, bool) and duration <= 0:
        errors.append(invalid_value("spec.leaseDurationSeconds", duration, "must be greater than 0"))
    _nonneg(errors, "spec.leaseTransitions", spec.get("leaseTransitions"))
    return errors


CHECKS: dict[tuple[str, str], Check] = {
    ("", "configmaps"): config_map,
    ("", "secrets"): secret,
    ("", "services"): service,
    ("", "pods"): pod,
    ("discovery.k8s.io", "endpointslices"): endpoint_slice,
    ("networking.k8s.io", "ingresses"): ingress,
    ("networking.k8s.io", "ingressclasses"): ingress_class,
    ("apps", "deployments"): deployment,
    ("batch", "jobs"): job,
    ("coordination.k8s.io", "leases"): lease,
}


def errors(rt: ResourceType, obj: JSON, old: JSON | None) -> list[FieldError]:
    check = CHECKS.get(rt.storage_key)
    return check(obj, old) if check is not None else []
