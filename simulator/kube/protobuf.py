"""Decoding of the Kubernetes protobuf envelope for the few kinds ``kubectl create <kind>`` generators send.

client-go's typed clients post protobuf; this covers ConfigMap, Secret, Namespace and ServiceAccount
(field numbers from k8s.io/api/core/v1/generated.proto) and the reviews and TokenRequests of
``kubectl auth`` and ``kubectl create token`` (authorization/v1 and authentication/v1) and the RBAC
objects of ``kubectl create role|clusterrole|rolebinding|clusterrolebinding`` (rbac/v1). Anything
else answers 415.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Iterator, Mapping
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
