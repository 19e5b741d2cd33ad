"""Input checks the API server makes before storing anything: names, kinds, namespaces."""

from __future__ import annotations

import re
from typing import Any

from haptic.k8s.api import ApiError, Invalid

from . import field_errors
from .field_errors import FieldError, invalid_value, required, too_long_bytes
from .known_good import KnownGood
from .resources import ResourceType

_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
_LABEL_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_JSON_TYPES = {bool: "bool", int: "number", float: "number", list: "array", dict: "object"}

_ANNOTATIONS_LIMIT = 256 * 1024
# Types whose names must be DNS-1123 labels rather than subdomains.
_LABEL_NAMED = {("", "namespaces"), ("", "services")}
# RBAC objects only need names that are a URL path segment ("system:discovery" is valid).
_PATH_SEGMENT_NAMED = {("rbac.authorization.k8s.io", plural)
                       for plural in ("roles", "clusterroles", "rolebindings", "clusterrolebindings")}


def yaml_error(exc: Exception) -> str:
    """Where and why YAML failed to parse, without quoting the offending text (it may be a Secret)."""
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or type(exc).__name__
    where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
    return f"{problem}{where}"


def bad_request(message: str) -> ApiError:
    return ApiError(400, "BadRequest", message)


def undecodable(rt: ResourceType, detail: str) -> ApiError:
    """A body the server cannot decode into the kind's type (400, as the JSON decoder words it)."""
    return bad_request(f'{rt.kind} in version "{rt.version}" cannot be handled as a {rt.kind}: {detail}')


def invalid(rt: ResourceType, name: str, errors: list[FieldError]) -> Invalid:
    """The 422 answer for ``errors`` of an object of type ``rt``."""
    return field_errors.invalid(rt.kind, rt.group, name, errors)


_DNS1123_LABEL_MSG = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must "
                      "start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for "
                      "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')")
_DNS1123_SUBDOMAIN_MSG = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
                          "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
                          "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
_LABEL_VALUE_MSG = ("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and "
                    "must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', "
                    "regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')")
_QUALIFIED_NAME_MSG = ("name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
                       "with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
                       "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")


def dns1123_label_errors(field: str, value: str) -> list[FieldError]:
    errors = []
    if len(value) > 63:
        errors.append(invalid_value(field, value, "must be no more than 63 characters"))
    if not _LABEL.match(value):
        errors.append(invalid_value(field, value, _DNS1123_LABEL_MSG))
    return errors


def dns1123_subdomain_errors(field: str, value: str) -> list[FieldError]:
    errors = []
    if len(value) > 253:
        errors.append(invalid_value(field, value, "must be no more than 253 characters"))
    if not _SUBDOMAIN.match(value):
        errors.append(invalid_value(field, value, _DNS1123_SUBDOMAIN_MSG))
    return errors


def label_value_errors(field: str, value: str) -> list[FieldError]:
    errors = []
    if len(value) > 63:
        errors.append(invalid_value(field, value, "must be no more than 63 characters"))
    if not _LABEL_VALUE.match(value):
        errors.append(invalid_value(field, value, _LABEL_VALUE_MSG))
    return errors


def qualified_name_errors(field: str, key: str) -> list[FieldError]:
    """``validation.IsQualifiedName`` (label and annotation keys: ``[prefix/]name``)."""
    prefix, slash, name = key.rpartition("/")
    errors: list[FieldError] = []
    if slash and not prefix:
        errors.append(invalid_value(field, key, "prefix part must be non-empty"))
    elif prefix:
        errors.extend(invalid_value(field, key, "prefix part " + e.detail) for e in
                      dns1123_subdomain_errors(field, prefix))
    if not name:
        errors.append(invalid_value(field, key, "name part must be non-empty"))
    else:
        if len(name) > 63:
            errors.append(invalid_value(field, key, "name part must be no more than 63 characters"))
        if not _LABEL_NAME.match(name):
            errors.append(invalid_value(field, key, _QUALIFIED_NAME_MSG))
    return errors


def path_segment_errors(field: str, value: str) -> list[FieldError]:
    """``path.ValidatePathSegmentName``: the name must be usable as one URL path segment."""
    if value in (".", ".."):
        return [invalid_value(field, value, f"may not be '{value}'")]
    return [invalid_value(field, value, f"may not contain '{bad}'") for bad in ("/", "%") if bad in value]


def check_name(rt: ResourceType, name: Any) -> None:
    if not isinstance(name, str) or not name:
        raise invalid(rt, "", [required("metadata.name", "name or generateName is required")])
    key = rt.storage_key
    if len(name) <= 253 and key not in _LABEL_NAMED and key not in _PATH_SEGMENT_NAMED and _SUBDOMAIN.match(name):
        return  # the usual case, checked without building an error list
    if key in _PATH_SEGMENT_NAMED:
        errors = path_segment_errors("metadata.name", name)
    else:
        errors = (dns1123_label_errors if key in _LABEL_NAMED else dns1123_subdomain_errors)(
            "metadata.name", name)
    if errors:
        raise invalid(rt, name, errors)


def check_body(rt: ResourceType, body: Any, url_name: str | None = None, url_namespace: str | None = None) -> None:
    """The body is an object of the URL's kind, name and namespace."""
    if not isinstance(body, dict):
        raise bad_request(f"the body of a {rt.kind} request must be a JSON object, not {type(body).__name__}")
    kind = body.get("kind")
    if kind is not None and kind != rt.kind:
        raise bad_request(f'the kind in the body ("{kind}") does not match the kind of the URL ("{rt.kind}", '
                          f"resource {rt.describe()})")
    api_version = body.get("apiVersion")
    if api_version is not None and api_version.rpartition("/")[0] != rt.group:
        raise bad_request(f'the API version in the body ("{api_version}") does not match the expected API group '
                          f'"{rt.group or "core"}" of resource {rt.describe()}')
    meta = body.get("metadata")
    if meta is not None and not isinstance(meta, dict):
        raise bad_request(f"metadata of the {rt.kind} must be an object")
    meta = meta or {}
    if url_name is not None and meta.get("name") not in (None, url_name):
        raise bad_request(f"the name of the object ({meta.get('name')}) does not match the name on the URL "
                          f"({url_name})")
    if rt.namespaced and url_namespace is not None and meta.get("namespace") not in (None, url_namespace):
        raise bad_request("the namespace of the provided object does not match the namespace sent on the request")
    labels = meta.get("labels")
    known = isinstance(labels, dict) and _known_labels(labels)
    for key in ("annotations",) if known else ("labels", "annotations"):
        value = meta.get(key)
        if value is None:
            continue
        if not isinstance(value, dict):
            raise undecodable(rt, f"json: cannot unmarshal {_JSON_TYPES.get(type(value), 'string')} into Go struct "
                                  f"field ObjectMeta.metadata.{key} of type map[string]string")
        for item in value.values():
            if not isinstance(item, str) and item is not None:  # null decodes as ""
                # The value is not echoed: annotations may carry secret material (last-applied-configuration).
                raise undecodable(rt, f"json: cannot unmarshal {_JSON_TYPES.get(type(item), 'null')} into Go "
                                      f"struct field ObjectMeta.metadata.{key} of type string")
    errors = metadata_errors(meta, labels_known=known)
    if errors:
        raise invalid(rt, str(meta.get("name") or ""), errors)


_QUALIFIED_NAMES = KnownGood(lambda key: not qualified_name_errors("", str(key)))
# null decodes as ""
_LABEL_VALUES = KnownGood(lambda value: value is None or (isinstance(value, str) and not label_value_errors("", value)))


def _known_labels(labels: dict[Any, Any]) -> bool:
    """Whether every label key and value is a string (or null) known to be valid."""
    try:
        return _QUALIFIED_NAMES.all(labels) and _LABEL_VALUES.all(labels.values())
    except TypeError:  # an unhashable value: not a string, found by the slow path
        return False


def metadata_errors(meta: dict[str, Any], labels_known: bool = False) -> list[FieldError]:
    """Labels and annotations as ``ValidateObjectMeta`` checks them (keys and values are strings by now)."""
    errors: list[FieldError] = []
    labels = meta.get("labels")
    if labels and not labels_known and not _known_labels(labels):
        for key, value in labels.items():
            errors.extend(qualified_name_errors("metadata.labels", str(key)))
            if value is not None:
                errors.extend(label_value_errors("metadata.labels", value))
    annotations = meta.get("annotations")
    if annotations:
        lowered = [str(key).lower() for key in annotations]
        if not _QUALIFIED_NAMES.all(lowered):
            for key in lowered:
                errors.extend(qualified_name_errors("metadata.annotations", key))
        total = sum(len(str(k)) + len(v) for k, v in annotations.items() if v is not None)
        if total > _ANNOTATIONS_LIMIT:
            errors.append(too_long_bytes("metadata.annotations", _ANNOTATIONS_LIMIT))
    return errors
