"""Decoding of the Kubernetes protobuf envelope for the few kinds ``kubectl create <kind>`` generators send.

client-go's typed clients post protobuf; this covers ConfigMap, Secret, Namespace and ServiceAccount
(field numbers from k8s.io/api/core/v1/generated.proto) and the reviews and TokenRequests of
``kubectl auth`` and ``kubectl create token`` (authorization/v1 and authentication/v1) and the RBAC
objects of ``kubectl create role|clusterrole|rolebinding|clusterrolebinding`` (rbac/v1), and, through
field tables (``MESSAGES``), what ``kubectl create deployment|job|cronjob|service|ingress|pdb`` and
``kubectl autoscale`` send (pod templates included). Any other kind, or a field the tables do not
know carrying a value, answers 415.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from haptic.k8s.api import JSON, ApiError

MAGIC = b"k8s\x00"
Field = tuple[int, int, Any]  # (number, wire type, value: int or bytes)


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= len(data):
            raise ValueError("truncated varint")
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7


def _fields(data: bytes) -> Iterator[Field]:
    pos = 0
    while pos < len(data):
        tag, pos = _varint(data, pos)
        number, wire = tag >> 3, tag & 7
        if wire == 0:
            value, pos = _varint(data, pos)
            yield number, wire, value
        elif wire == 2:
            length, pos = _varint(data, pos)
            if pos + length > len(data):
                raise ValueError("truncated field")
            yield number, wire, data[pos:pos + length]
            pos += length
        elif wire == 1:
            yield number, wire, data[pos:pos + 8]
            pos += 8
        elif wire == 5:
            yield number, wire, data[pos:pos + 4]
            pos += 4
        else:
            raise ValueError(f"unsupported wire type {wire}")


def _text(value: bytes) -> str:
    return value.decode()


def _entry(value: bytes, as_bytes: bool = False) -> tuple[str, str]:
    key, val = "", ""
    for number, _, item in _fields(value):
        if number == 1:
            key = _text(item)
        elif number == 2:
            val = base64.b64encode(item).decode() if as_bytes else _text(item)
    return key, val


def _time(value: bytes) -> str:
    seconds = next((v for n, _, v in _fields(value) if n == 1), 0)
    return datetime.fromtimestamp(int(seconds), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _owner_reference(value: bytes) -> JSON:
    names = {1: "kind", 3: "name", 4: "uid", 5: "apiVersion"}
    flags = {6: "controller", 7: "blockOwnerDeletion"}
    out: JSON = {}
    for number, _, item in _fields(value):
        if number in names:
            out[names[number]] = _text(item)
        elif number in flags:
            out[flags[number]] = bool(item)
    return out


def _metadata(value: bytes) -> JSON:
    strings = {1: "name", 2: "generateName", 3: "namespace", 5: "uid", 6: "resourceVersion"}
    meta: JSON = {}
    # Go's generated encoders write empty strings and zeros explicitly: those mean "unset".
    for number, _, item in _fields(value):
        if number in strings:
            if item:
                meta[strings[number]] = _text(item)
        elif number == 7:
            if item:
                meta["generation"] = item
        elif number == 8:
            if any(n == 1 and v for n, _, v in _fields(item)):
                meta["creationTimestamp"] = _time(item)
        elif number in (11, 12):
            key, val = _entry(item)
            meta.setdefault("labels" if number == 11 else "annotations", {})[key] = val
        elif number == 13:
            meta.setdefault("ownerReferences", []).append(_owner_reference(item))
        elif number == 14:
            meta.setdefault("finalizers", []).append(_text(item))
    return meta


def _configmap(raw: bytes) -> JSON:
    obj: JSON = {}
    for number, _, item in _fields(raw):
        if number == 1:
            obj["metadata"] = _metadata(item)
        elif number in (2, 3):
            key, val = _entry(item, as_bytes=number == 3)
            obj.setdefault("data" if number == 2 else "binaryData", {})[key] = val
        elif number == 4:
            obj["immutable"] = bool(item)
    return obj


def _secret(raw: bytes) -> JSON:
    obj: JSON = {}
    for number, _, item in _fields(raw):
        if number == 1:
            obj["metadata"] = _metadata(item)
        elif number in (2, 4):
            key, val = _entry(item, as_bytes=number == 2)
            obj.setdefault("data" if number == 2 else "stringData", {})[key] = val
        elif number == 3 and item:
            obj["type"] = _text(item)
        elif number == 5:
            obj["immutable"] = bool(item)
    return obj


def _namespace(raw: bytes) -> JSON:
    obj: JSON = {}
    for number, _, item in _fields(raw):
        if number == 1:
            obj["metadata"] = _metadata(item)
        elif number == 2:
            obj["spec"] = {"finalizers": [_text(v) for n, _, v in _fields(item) if n == 1]}
    return obj


def _service_account(raw: bytes) -> JSON:
    obj: JSON = {}
    for number, _, item in _fields(raw):
        if number == 1:
            obj["metadata"] = _metadata(item)
        elif number == 3:
            name = next((_text(v) for n, _, v in _fields(item) if n == 1), "")
            obj.setdefault("imagePullSecrets", []).append({"name": name})
        elif number == 4:
            obj["automountServiceAccountToken"] = bool(item)
    return obj


def _message(raw: bytes, strings: dict[int, str], nested: Mapping[int, tuple[str, Callable[[bytes], JSON]]],
             repeated: dict[int, str] | None = None, integers: dict[int, str] | None = None) -> JSON:
    """A message of string, repeated-string, integer and nested-message fields (zero values mean unset)."""
    out: JSON = {}
    for number, _, item in _fields(raw):
        if number in strings:
            if item:
                out[strings[number]] = _text(item)
        elif number in nested:
            name, decoder = nested[number]
            out[name] = decoder(item)
        elif repeated and number in repeated:
            out.setdefault(repeated[number], []).append(_text(item))
        elif integers and number in integers:
            out[integers[number]] = item
    return out


def _resource_attributes(raw: bytes) -> JSON:
    names = {1: "namespace", 2: "verb", 3: "group", 4: "version", 5: "resource", 6: "subresource", 7: "name"}
    return _message(raw, names, {})


def _non_resource_attributes(raw: bytes) -> JSON:
    return _message(raw, {1: "path", 2: "verb"}, {})


def _access_review_spec(raw: bytes) -> JSON:
    # SelfSubjectAccessReviewSpec, and the first fields of SubjectAccessReviewSpec (user, groups, uid after).
    nested = {1: ("resourceAttributes", _resource_attributes), 2: ("nonResourceAttributes", _non_resource_attributes)}
    return _message(raw, {3: "user", 6: "uid"}, nested, {4: "groups"})


def _rules_review_spec(raw: bytes) -> JSON:
    return _message(raw, {1: "namespace"}, {})


def _bound_object(raw: bytes) -> JSON:
    return _message(raw, {1: "kind", 2: "apiVersion", 3: "name", 4: "uid"}, {})


def _token_request_spec(raw: bytes) -> JSON:
    return _message(raw, {}, {3: ("boundObjectRef", _bound_object)}, {1: "audiences"}, {4: "expirationSeconds"})


def _token_review_spec(raw: bytes) -> JSON:
    return _message(raw, {1: "token"}, {}, {2: "audiences"})


def _with_spec(spec: Callable[[bytes], JSON]) -> Callable[[bytes], JSON]:
    def decode(raw: bytes) -> JSON:
        return _message(raw, {}, {1: ("metadata", _metadata), 2: ("spec", spec)})

    return decode


def _metadata_only(raw: bytes) -> JSON:
    return _message(raw, {}, {1: ("metadata", _metadata)})


def _policy_rule(raw: bytes) -> JSON:
    lists = {1: "verbs", 2: "apiGroups", 3: "resources", 4: "resourceNames", 5: "nonResourceURLs"}
    return _message(raw, {}, {}, lists)


def _label_requirement(raw: bytes) -> JSON:
    return _message(raw, {1: "key", 2: "operator"}, {}, {3: "values"})


def _label_selector(raw: bytes) -> JSON:
    out: JSON = {}
    for number, _, item in _fields(raw):
        if number == 1:
            key, val = _entry(item)
            out.setdefault("matchLabels", {})[key] = val
        elif number == 2:
            out.setdefault("matchExpressions", []).append(_label_requirement(item))
    return out


def _role(raw: bytes) -> JSON:
    obj: JSON = {}
    for number, _, item in _fields(raw):
        if number == 1:
            obj["metadata"] = _metadata(item)
        elif number == 2:
            obj.setdefault("rules", []).append(_policy_rule(item))
        elif number == 3:  # ClusterRole.aggregationRule
            selectors = [_label_selector(v) for n, _, v in _fields(item) if n == 1]
            obj["aggregationRule"] = {"clusterRoleSelectors": selectors}
    return obj


def _binding(raw: bytes) -> JSON:
    obj: JSON = {}
    for number, _, item in _fields(raw):
        if number == 1:
            obj["metadata"] = _metadata(item)
        elif number == 2:
            obj.setdefault("subjects", []).append(_message(item, {1: "kind", 2: "apiGroup", 3: "name",
                                                                  4: "namespace"}, {}))
        elif number == 3:
            obj["roleRef"] = _message(item, {1: "apiGroup", 2: "kind", 3: "name"}, {})
    return obj


# -- workloads, described by tables -----------------------------------------------------------------------
#
# Go's generated encoders write every non-pointer field, zero or not, and a pointer field only when it is
# set. Decoded as the API server decodes (into Go structs, printed as JSON with ``omitempty``): a zero
# scalar means unset unless the field is a pointer, and a nested struct that is not a pointer is always
# there (``resources: {}``). A field number the tables do not know is refused (415) unless its value is
# zero, so that nothing kubectl sent is silently lost.


@dataclass(frozen=True)
class PField:
    name: str
    kind: str  # "string", "int", "bool", a special (_SPECIALS) or a message of MESSAGES
    repeated: bool = False
    pointer: bool = False  # a Go pointer: present means set, even to zero
    map_of: str = ""  # "string" or "quantity": a map field (entries: key 1, value 2)
    inline: bool = False  # an embedded Go struct: in JSON its fields are the enclosing message's


def _f(name: str, kind: str = "string", *, rep: bool = False, ptr: bool = False, map_of: str = "",
       inline: bool = False) -> PField:
    return PField(name, kind, rep, ptr, map_of, inline)


def _int_or_string(raw: bytes) -> Any:
    kind, number, text = 0, 0, ""
    for field, _, item in _fields(raw):
        if field == 1:
            kind = item
        elif field == 2:
            number = _signed(item)
        elif field == 3:
            text = _text(item)
    return text if kind == 1 else number


def _quantity(raw: bytes) -> str:
    return next((_text(v) for n, _, v in _fields(raw) if n == 1), "")


_SPECIALS: dict[str, Callable[[bytes], Any]] = {
    "meta": _metadata, "selector": _label_selector, "intstr": _int_or_string, "quantity": _quantity,
}
_TEMPLATE = {1: _f("metadata", "meta"), 2: _f("spec", "PodSpec")}
# Field numbers from k8s.io/api's generated.proto (apps, batch, core, networking, policy, autoscaling):
# protobuf field numbers never change, and a field a newer client sends that is missing here is refused,
# not lost.
MESSAGES: dict[str, dict[int, PField]] = {
    "Deployment": {1: _f("metadata", "meta"), 2: _f("spec", "DeploymentSpec")},
    "DeploymentSpec": {
        1: _f("replicas", "int", ptr=True), 2: _f("selector", "selector"), 3: _f("template", "PodTemplateSpec"),
        4: _f("strategy", "DeploymentStrategy"), 5: _f("minReadySeconds", "int"),
        6: _f("revisionHistoryLimit", "int", ptr=True), 7: _f("paused", "bool"),
        9: _f("progressDeadlineSeconds", "int", ptr=True),
    },
    "DeploymentStrategy": {1: _f("type"), 2: _f("rollingUpdate", "RollingUpdateDeployment", ptr=True)},
    "RollingUpdateDeployment": {1: _f("maxUnavailable", "intstr", ptr=True), 2: _f("maxSurge", "intstr", ptr=True)},
    "Job": {1: _f("metadata", "meta"), 2: _f("spec", "JobSpec")},
    "JobSpec": {
        1: _f("parallelism", "int", ptr=True), 2: _f("completions", "int", ptr=True),
        3: _f("activeDeadlineSeconds", "int", ptr=True), 4: _f("selector", "selector"),
        5: _f("manualSelector", "bool", ptr=True), 6: _f("template", "PodTemplateSpec"),
        7: _f("backoffLimit", "int", ptr=True), 8: _f("ttlSecondsAfterFinished", "int", ptr=True),
        9: _f("completionMode", ptr=True), 10: _f("suspend", "bool", ptr=True),
    },
    "CronJob": {1: _f("metadata", "meta"), 2: _f("spec", "CronJobSpec")},
    "CronJobSpec": {
        1: _f("schedule"), 2: _f("startingDeadlineSeconds", "int", ptr=True), 3: _f("concurrencyPolicy"),
        4: _f("suspend", "bool", ptr=True), 5: _f("jobTemplate", "JobTemplateSpec"),
        6: _f("successfulJobsHistoryLimit", "int", ptr=True), 7: _f("failedJobsHistoryLimit", "int", ptr=True),
        8: _f("timeZone", ptr=True),
    },
    "JobTemplateSpec": {1: _f("metadata", "meta"), 2: _f("spec", "JobSpec")},
    "PodTemplateSpec": _TEMPLATE,
    "PodSpec": {
        2: _f("containers", "Container", rep=True), 3: _f("restartPolicy"),
        4: _f("terminationGracePeriodSeconds", "int", ptr=True), 5: _f("activeDeadlineSeconds", "int", ptr=True),
        6: _f("dnsPolicy"), 7: _f("nodeSelector", map_of="string"), 8: _f("serviceAccountName"),
        9: _f("serviceAccount"), 10: _f("nodeName"), 11: _f("hostNetwork", "bool"), 12: _f("hostPID", "bool"),
        13: _f("hostIPC", "bool"), 15: _f("imagePullSecrets", "LocalObjectReference", rep=True),
        16: _f("hostname"), 17: _f("subdomain"), 19: _f("schedulerName"),
        20: _f("initContainers", "Container", rep=True), 21: _f("automountServiceAccountToken", "bool", ptr=True),
        24: _f("priorityClassName"),
    },
    "Container": {
        1: _f("name"), 2: _f("image"), 3: _f("command", rep=True), 4: _f("args", rep=True), 5: _f("workingDir"),
        6: _f("ports", "ContainerPort", rep=True), 7: _f("env", "EnvVar", rep=True),
        8: _f("resources", "ResourceRequirements"), 13: _f("terminationMessagePath"), 14: _f("imagePullPolicy"),
        16: _f("stdin", "bool"), 17: _f("stdinOnce", "bool"), 18: _f("tty", "bool"),
        20: _f("terminationMessagePolicy"), 24: _f("restartPolicy", ptr=True),
    },
    "ContainerPort": {1: _f("name"), 2: _f("hostPort", "int"), 3: _f("containerPort", "int"), 4: _f("protocol"),
                      5: _f("hostIP")},
    "EnvVar": {1: _f("name"), 2: _f("value")},
    "ResourceRequirements": {1: _f("limits", map_of="quantity"), 2: _f("requests", map_of="quantity")},
    "LocalObjectReference": {1: _f("name")},
    "Service": {1: _f("metadata", "meta"), 2: _f("spec", "ServiceSpec")},
    "ServiceSpec": {
        1: _f("ports", "ServicePort", rep=True), 2: _f("selector", map_of="string"), 3: _f("clusterIP"),
        4: _f("type"), 5: _f("externalIPs", rep=True), 7: _f("sessionAffinity"), 8: _f("loadBalancerIP"),
        9: _f("loadBalancerSourceRanges", rep=True), 10: _f("externalName"), 11: _f("externalTrafficPolicy"),
        12: _f("healthCheckNodePort", "int"), 13: _f("publishNotReadyAddresses", "bool"),
        17: _f("ipFamilyPolicy", ptr=True), 18: _f("clusterIPs", rep=True), 19: _f("ipFamilies", rep=True),
        20: _f("allocateLoadBalancerNodePorts", "bool", ptr=True), 21: _f("loadBalancerClass", ptr=True),
        22: _f("internalTrafficPolicy", ptr=True),
    },
    "ServicePort": {1: _f("name"), 2: _f("protocol"), 3: _f("port", "int"), 4: _f("targetPort", "intstr"),
                    5: _f("nodePort", "int"), 6: _f("appProtocol", ptr=True)},
    # networking.k8s.io/v1
    "Ingress": {1: _f("metadata", "meta"), 2: _f("spec", "IngressSpec")},
    "IngressSpec": {1: _f("defaultBackend", "IngressBackend", ptr=True), 2: _f("tls", "IngressTLS", rep=True),
                    3: _f("rules", "IngressRule", rep=True), 4: _f("ingressClassName", ptr=True)},
    "IngressBackend": {3: _f("resource", "TypedLocalObjectReference", ptr=True),
                       4: _f("service", "IngressServiceBackend", ptr=True)},
    "IngressServiceBackend": {1: _f("name"), 2: _f("port", "ServiceBackendPort")},
    "ServiceBackendPort": {1: _f("name"), 2: _f("number", "int")},
    "TypedLocalObjectReference": {1: _f("apiGroup", ptr=True), 2: _f("kind"), 3: _f("name")},
    "IngressRule": {1: _f("host"), 2: _f("ingressRuleValue", "IngressRuleValue", inline=True)},
    "IngressRuleValue": {1: _f("http", "HTTPIngressRuleValue", ptr=True)},
    "HTTPIngressRuleValue": {1: _f("paths", "HTTPIngressPath", rep=True)},
    "HTTPIngressPath": {1: _f("path"), 2: _f("backend", "IngressBackend"), 3: _f("pathType", ptr=True)},
    "IngressTLS": {1: _f("hosts", rep=True), 2: _f("secretName")},
    "IngressClass": {1: _f("metadata", "meta"), 2: _f("spec", "IngressClassSpec")},
    "IngressClassSpec": {1: _f("controller"), 2: _f("parameters", "IngressClassParametersReference", ptr=True)},
    "IngressClassParametersReference": {1: _f("apiGroup", ptr=True), 2: _f("kind"), 3: _f("name"),
                                        4: _f("scope", ptr=True), 5: _f("namespace", ptr=True)},
    # policy/v1 and autoscaling/v1
    "PodDisruptionBudget": {1: _f("metadata", "meta"), 2: _f("spec", "PodDisruptionBudgetSpec")},
    "PodDisruptionBudgetSpec": {1: _f("minAvailable", "intstr", ptr=True), 2: _f("selector", "selector"),
                                3: _f("maxUnavailable", "intstr", ptr=True),
                                4: _f("unhealthyPodEvictionPolicy", ptr=True)},
    "HorizontalPodAutoscaler": {1: _f("metadata", "meta"), 2: _f("spec", "HorizontalPodAutoscalerSpec")},
    "HorizontalPodAutoscalerSpec": {1: _f("scaleTargetRef", "CrossVersionObjectReference"),
                                    2: _f("minReplicas", "int", ptr=True), 3: _f("maxReplicas", "int"),
                                    4: _f("targetCPUUtilizationPercentage", "int", ptr=True)},
    "CrossVersionObjectReference": {1: _f("kind"), 2: _f("name"), 3: _f("apiVersion")},
}
# A top-level status is the server's to set: what a create sends there is dropped, as the store drops it.
_STATUS = 3


def _signed(value: int) -> int:
    """A varint as Go's int32/int64 (negative numbers travel as their 64-bit two's complement)."""
    return value - (1 << 64) if value >= 1 << 63 else value


def _is_zero(wire: int, value: Any, depth: int = 0) -> bool:
    """Whether an unknown field carries Go's zero value (an empty string, 0, or a message of zeros)."""
    if wire == 0:
        return bool(value == 0)
    if wire in (1, 5):
        return not any(value)
    if not value:
        return True
    if depth > 8:
        return False
    try:
        return all(_is_zero(w, v, depth + 1) for _, w, v in _fields(value))
    except ValueError:
        return False  # not a message: a non-empty string or bytes


def _scalar(kind: str, wire: int, item: Any) -> Any:
    if kind == "int":
        return _signed(item)
    if kind == "bool":
        return bool(item)
    return _text(item)


def _decode_message(raw: bytes, name: str, top: bool = False) -> JSON:
    table = MESSAGES[name]
    out: JSON = {}
    for number, wire, item in _fields(raw):
        field = table.get(number)
        if field is None:
            if (top and number == _STATUS) or _is_zero(wire, item):
                continue
            raise ApiError(415, "UnsupportedMediaType",
                           f"protobuf field {number} of {name} is not understood by the fake API server; send "
                           f"JSON or YAML")
        if field.map_of:
            key, val = "", ""
            for n, _, v in _fields(item):
                if n == 1:
                    key = _text(v)
                elif n == 2:
                    val = _quantity(v) if field.map_of == "quantity" else _text(v)
            out.setdefault(field.name, {})[key] = val
            continue
        if field.kind in _SPECIALS or field.kind in MESSAGES:
            value = _SPECIALS[field.kind](item) if field.kind in _SPECIALS else _decode_message(item, field.kind)
        else:
            value = _scalar(field.kind, wire, item)
            if not value and not field.pointer and not field.repeated:
                continue  # Go's zero value: unset (omitempty)
        if field.inline:
            out.update(value)
        elif field.repeated:
            out.setdefault(field.name, []).append(value)
        else:
            out[field.name] = value
    return out


def _tabled(name: str) -> Callable[[bytes], JSON]:
    def decode(raw: bytes) -> JSON:
        return _decode_message(raw, name, top=True)

    return decode


_DECODERS: dict[tuple[str, str], Callable[[bytes], JSON]] = {
    ("rbac.authorization.k8s.io/v1", "Role"): _role,
    ("rbac.authorization.k8s.io/v1", "ClusterRole"): _role,
    ("rbac.authorization.k8s.io/v1", "RoleBinding"): _binding,
    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"): _binding,
    ("authorization.k8s.io/v1", "SelfSubjectAccessReview"): _with_spec(_access_review_spec),
    ("authorization.k8s.io/v1", "SubjectAccessReview"): _with_spec(_access_review_spec),
    ("authorization.k8s.io/v1", "LocalSubjectAccessReview"): _with_spec(_access_review_spec),
    ("authorization.k8s.io/v1", "SelfSubjectRulesReview"): _with_spec(_rules_review_spec),
    ("authentication.k8s.io/v1", "TokenRequest"): _with_spec(_token_request_spec),
    ("authentication.k8s.io/v1", "TokenReview"): _with_spec(_token_review_spec),
    ("authentication.k8s.io/v1", "SelfSubjectReview"): _metadata_only,
    ("v1", "ConfigMap"): _configmap,
    ("v1", "Secret"): _secret,
    ("v1", "Namespace"): _namespace,
    ("v1", "ServiceAccount"): _service_account,
    ("apps/v1", "Deployment"): _tabled("Deployment"),
    ("batch/v1", "Job"): _tabled("Job"),
    ("batch/v1", "CronJob"): _tabled("CronJob"),
    ("v1", "Service"): _tabled("Service"),
    ("networking.k8s.io/v1", "Ingress"): _tabled("Ingress"),
    ("networking.k8s.io/v1", "IngressClass"): _tabled("IngressClass"),
    ("policy/v1", "PodDisruptionBudget"): _tabled("PodDisruptionBudget"),
    ("autoscaling/v1", "HorizontalPodAutoscaler"): _tabled("HorizontalPodAutoscaler"),
}


def decode(body: bytes) -> JSON:
    """The JSON form of a protobuf-encoded object, or a 415 naming what is not supported."""
    if not body.startswith(MAGIC):
        raise ApiError(415, "UnsupportedMediaType", "protobuf body without the k8s envelope")
    try:
        type_meta: JSON = {}
        raw = b""
        for number, _, item in _fields(body[len(MAGIC):]):
            if number == 1:
                type_meta = {("apiVersion", "kind")[n - 1]: _text(v) for n, _, v in _fields(item) if n in (1, 2)}
            elif number == 2:
                raw = item
        key = (str(type_meta.get("apiVersion", "")), str(type_meta.get("kind", "")))
        decoder = _DECODERS.get(key)
        if decoder is None:
            raise ApiError(415, "UnsupportedMediaType",
                           f"protobuf bodies are understood for {', '.join(k for _, k in _DECODERS)} only, not "
                           f"{key[1] or 'this object'} ({key[0]}); send JSON or YAML")
        obj = decoder(raw)
    except (ValueError, UnicodeDecodeError, StopIteration) as exc:
        raise ApiError(400, "BadRequest", f"error decoding protobuf body: {exc}") from exc
    return {"apiVersion": key[0], "kind": key[1], **obj}
