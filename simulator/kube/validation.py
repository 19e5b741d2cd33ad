"""Input checks the API server makes before storing anything: names, kinds, namespaces."""

from __future__ import annotations

import re
from typing import Any

from haptic.k8s.api import ApiError, Invalid

from .resources import ResourceType

_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9])?$")
_LABEL_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9]$")


def _label_key_ok(key: object) -> bool:
    if not isinstance(key, str):
        return False
    prefix, _, name = key.rpartition("/")
    if prefix and (len(prefix) > 253 or not _SUBDOMAIN.match(prefix)):
        return False
    return bool(_LABEL_NAME.match(name))


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


def invalid(rt: ResourceType, name: str, field: str, value: Any, why: str) -> Invalid:
    return Invalid(
        f'{rt.kind} "{name}" is invalid: {field}: Invalid value: "{value}": {why}',
        {"name": name, "group": rt.group, "kind": rt.kind,
         "causes": [{"reason": "FieldValueInvalid", "message": f'Invalid value: "{value}": {why}', "field": field}]},
    )


def check_name(rt: ResourceType, name: Any) -> None:
    if not isinstance(name, str) or not name:
        raise Invalid(f"{rt.kind} is invalid: metadata.name: Required value: name or generateName is required",
                      {"kind": rt.kind, "group": rt.group})
    if rt.storage_key in _PATH_SEGMENT_NAMED:
        for bad in ("/", "%"):
            if bad in name:
                raise invalid(rt, name, "metadata.name", name, f"may not contain '{bad}'")
        if name in (".", ".."):
            raise invalid(rt, name, "metadata.name", name, f"may not be '{name}'")
    elif rt.storage_key in _LABEL_NAMED:
        if len(name) > 63 or not _LABEL.match(name):
            raise invalid(rt, name, "metadata.name", name,
                          "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
                          "and must start and end with an alphanumeric character (e.g. 'my-name', or '123-abc')")
    elif len(name) > 253 or not _SUBDOMAIN.match(name):
        raise invalid(rt, name, "metadata.name", name,
                      "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
                      "'.', and must start and end with an alphanumeric character (e.g. 'example.com')")


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
    if isinstance(labels, dict):
        for key, value in labels.items():
            if not _label_key_ok(key) or not (isinstance(value, str) and _LABEL_VALUE.match(value)):
                raise invalid(rt, str(meta.get("name", "")), f"metadata.labels[{key}]", value,
                              "label keys are [prefix/]name and values at most 63 characters of alphanumerics, "
                              "'-', '_' or '.', starting and ending with an alphanumeric character")
    for key in ("labels", "annotations"):
        value = meta.get(key)
        if value is not None and (not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values())):
            # The value is not echoed: annotations may carry secret material (last-applied-configuration).
            raise Invalid(f'{rt.kind} "{meta.get("name", "")}" is invalid: metadata.{key}: Invalid value: '
                          "must be a map of strings to strings",
                          {"name": meta.get("name", ""), "kind": rt.kind,
                           "causes": [{"reason": "FieldValueInvalid", "field": f"metadata.{key}"}]})
