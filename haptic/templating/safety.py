"""Guards against Kubernetes objects whose strings would inject HAProxy directives.

Hosts, paths, names and annotation values end up in ``haproxy.cfg`` and map files, where a newline,
a space, a ``#`` or a quote changes the meaning of the line. ``unsafe_reasons`` lists what is wrong
with an object (a validation helper templates can call); ``reject_unsafe`` is the render-context
filter that drops such objects with a warning naming them.
"""

from __future__ import annotations

import base64
import binascii
import ipaddress
import re
from collections.abc import Callable, Iterable, Mapping
from functools import partial
from typing import Any

from haptic.core.control_characters import CONTROL, CONTROL_CHARACTERS
from haptic.core.linear_regex import PatternError, compile_pattern
from haptic.names import ANNOTATION_PREFIX
from haptic.templating.notices import UNSAFE_INPUT, ObjectNotice, field_of_reason, object_ref

_KINDS = {"ingress": "Ingress", "secret": "Secret"}

_HOST = re.compile(r"^(\*\.)?[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?(\.[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)*\Z")
_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?\Z")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?\Z")
# Paths go into map files keyed by host+path: whitespace, '#', quotes and backslashes would split or
# comment the line; '%', '[' and ']' are kept out because HAProxy log-format expands them.
_PATH = re.compile(r"^/[A-Za-z0-9\-._~!$&()*+,;=:@/]*\Z")
# No control character (``haptic.core.control_characters``) may appear in a value the templates write out.
_TOKEN_FORBIDDEN = re.compile(f"[\\s#\"'\\\\%\\[\\]{{}}`{CONTROL_CHARACTERS}]")
_DURATION = re.compile(r"^[0-9]{1,9}(us|ms|s|m|h|d)?\Z")
_HEADER_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9\-]{0,127}\Z")
_HEADER_VALUE_FORBIDDEN = re.compile(f"[\"'\\\\%#;{CONTROL_CHARACTERS}]")
_PORT_NAME = re.compile(r"^[a-z0-9]([-a-z0-9]{0,13}[a-z0-9])?\Z")
# bound once: the checks of every Ingress of a first render call them
_DNS_LABEL_MATCH, _DNS_SUBDOMAIN_MATCH = _DNS_LABEL.match, _DNS_SUBDOMAIN.match
_PATH_TYPES = ("Exact", "Prefix", "ImplementationSpecific")
_PATH_BACKEND = "rules[{}].http.paths[{}].backend"

BALANCE_ALGORITHMS = ("roundrobin", "static-rr", "leastconn", "first", "source", "random")
BACKEND_PROTOCOLS = ("http", "h2c", "https", "h2")


def is_haproxy_token(value: Any) -> bool:
    """True for a non-empty string that is safe as one HAProxy config word."""
    return isinstance(value, str) and 0 < len(value) <= 1024 and not _TOKEN_FORBIDDEN.search(value)


def is_hostname(value: Any) -> bool:
    """A lower-case DNS name, optionally with a leading ``*.`` wildcard label."""
    return isinstance(value, str) and len(value) <= 253 and bool(_HOST.match(value))


def is_ingress_path(value: Any) -> bool:
    return isinstance(value, str) and len(value) <= 2048 and bool(_PATH.match(value))


def path_regex_problem(value: Any) -> str | None:
    """Why ``value`` cannot be a path regular expression (None: it can): RE2 must accept it (linear time; the
    PCRE2 of haproxy accepts what RE2 does) and it must be safe inside single quotes and map files."""
    if not isinstance(value, str) or not value or len(value) > 1024:
        return "expected a regular expression of 1 to 1024 characters"
    if re.search(r"[\s'\"#%`]", value) or CONTROL.search(value):
        return "expected a regular expression without spaces, quotes, '#' or '%'"
    try:
        compile_pattern(value)
    except PatternError as exc:
        return str(exc)
    return None


def is_path_regex(value: Any) -> bool:
    """A path regular expression starting with ``/`` (see ``path_regex_problem``)."""
    return isinstance(value, str) and value.startswith("/") and path_regex_problem(value) is None


def parse_request_headers(value: str) -> list[tuple[str, str]]:
    """``"X-A: one; X-B: two"`` → ``[("X-A", "one"), ("X-B", "two")]``; raises ValueError if unsafe."""
    headers = []
    for part in value.split(";"):
        if not part.strip():
            continue
        name, sep, val = part.partition(":")
        name, val = name.strip(), val.strip()
        if not sep or not _HEADER_NAME.match(name):
            raise ValueError(f"bad header name in {part.strip()!r}")
        if _HEADER_VALUE_FORBIDDEN.search(val) or len(val) > 1024:
            raise ValueError(f"unsafe value for header {name}")
        headers.append((name, val))
    return headers


def parse_cidrs(value: str) -> list[str]:
    """``"10.0.0.0/8, 192.168.1.1"`` → normalized networks; raises ValueError on anything else."""
    nets = []
    for part in value.split(","):
        part = part.strip()
        if part:
            nets.append(str(ipaddress.ip_network(part, strict=False)))
    if not nets:
        raise ValueError("empty list")
    return nets


def _check_annotation(key: str, value: Any) -> str | None:
    name = key.removeprefix(ANNOTATION_PREFIX)
    if not isinstance(value, str):
        return f"annotation {key} is not a string"
    if name.startswith("timeout-"):
        return None if _DURATION.match(value) else f"annotation {key} is not a duration"
    if name == "balance":
        return None if value in BALANCE_ALGORITHMS else f"annotation {key} is not a known balance algorithm"
    if name == "backend-protocol":
        return None if value in BACKEND_PROTOCOLS else f"annotation {key} is not one of http, h2c, https, h2"
    if name in ("ssl-redirect", "path-regex", "ssl-passthrough"):
        return None if value in ("true", "false") else f"annotation {key} is not true/false"
    if name == "health-check-path":
        return None if is_ingress_path(value) else f"annotation {key} is not a safe absolute path"
    if name == "health-check-interval":
        # inter 0 is refused by haproxy: the interval must be positive.
        positive = bool(_DURATION.match(value)) and int(value.rstrip("usmhd")) > 0
        return None if positive else f"annotation {key} is not a positive duration"
    if name == "canary-service":
        return None if _DNS_LABEL.match(value) else f"annotation {key} is not a Service name"
    if name == "canary-weight":
        return None if value.isdigit() and int(value) <= 100 else f"annotation {key} is not 0..100"
    if name == "server-slots":
        return None if value.isdigit() and 1 <= int(value) <= 1000 else f"annotation {key} is not 1..1000"
    if name == "allow-list":
        try:
            parse_cidrs(value)
        except ValueError:
            return f"annotation {key} is not a comma-separated list of CIDRs"
        return None
    if name == "request-set-header":
        try:
            parse_request_headers(value)
        except ValueError as exc:
            return f"annotation {key}: {exc}"
        return None
    # Unknown annotations of ours have no effect, but a control character in any of them is a red flag.
    return None if not CONTROL.search(value) else f"annotation {key} contains control characters"


def _ingress_backend_reasons(backend: Any, where: str | Callable[[], str]) -> list[str]:
    """``where``: the field's path, or what makes it (built only for a reason: most backends have none)."""
    if backend is None:
        return []
    service = backend.get("service") if type(backend) is dict or isinstance(backend, Mapping) else None
    if type(service) is not dict and not isinstance(service, Mapping):
        return []
    reasons: list[str] = []
    name = service.get("name")
    port = service.get("port") or {}
    number, port_name = port.get("number"), port.get("name")
    plain_number = number is None or (type(number) is int and 0 < number < 65536)
    if type(name) is str and _DNS_LABEL_MATCH(name) and plain_number and port_name is None:
        return reasons  # the common backend: a Service name and a port number
    at = where if isinstance(where, str) else where()
    if not isinstance(name, str) or not _DNS_LABEL.match(name):
        reasons.append(f"{at}: bad service name {name!r}")
    if number is not None and not (isinstance(number, int) and 0 < number < 65536):
        reasons.append(f"{at}: bad service port {number!r}")
    if port_name is not None and not (isinstance(port_name, str) and _PORT_NAME.match(port_name)):
        reasons.append(f"{at}: bad service port name {port_name!r}")
    return reasons


def _ingress_reasons(obj: Mapping[str, Any], path_ok: Callable[[Any], bool] = is_ingress_path) -> list[str]:
    reasons: list[str] = []
    spec = obj.get("spec") or {}
    annotations = (obj.get("metadata") or {}).get("annotations") or {}
    # haproxy-haptic.org/path-regex: ImplementationSpecific paths are regular expressions.
    regex_paths = path_ok is is_ingress_path and annotations.get(ANNOTATION_PREFIX + "path-regex") == "true"
    reasons += _ingress_backend_reasons(spec.get("defaultBackend"), "defaultBackend")
    for i, rule in enumerate(spec.get("rules") or []):
        host = rule.get("host")
        if host is not None and not is_hostname(host):
            reasons.append(f"rules[{i}].host {host!r} is not a DNS name")
        for j, path in enumerate(((rule.get("http") or {}).get("paths")) or []):
            value = path.get("path", "/")
            kind = path.get("pathType", "ImplementationSpecific")
            if regex_paths and path.get("pathType") == "ImplementationSpecific":
                problem = path_regex_problem(value) or (None if value.startswith("/") else "does not start with /")
                if problem:
                    reasons.append(f"rules[{i}].http.paths[{j}].path {value!r} is not a path regex: {problem}")
            elif not path_ok(value):
                reasons.append(f"rules[{i}].http.paths[{j}].path {value!r} contains unsafe characters")
            if kind not in _PATH_TYPES:
                reasons.append(f"rules[{i}].http.paths[{j}].pathType {kind!r} is unknown")
            backend = path.get("backend")
            if backend is not None:
                reasons += _ingress_backend_reasons(backend, partial(_PATH_BACKEND.format, i, j))
    for i, tls in enumerate(spec.get("tls") or []):
        for host in tls.get("hosts") or []:
            if not is_hostname(host):
                reasons.append(f"tls[{i}].hosts {host!r} is not a DNS name")
        secret = tls.get("secretName")
        if secret is not None and not (isinstance(secret, str) and _DNS_SUBDOMAIN.match(secret)):
            reasons.append(f"tls[{i}].secretName {secret!r} is not a DNS name")
    if annotations:
        for key in sorted(annotations):
            if key.startswith(ANNOTATION_PREFIX):
                problem = _check_annotation(key, annotations[key])
                if problem:
                    reasons.append(problem)
    return reasons


def _pem_reasons(data: Mapping[str, Any]) -> list[str]:
    from cryptography import x509
    from cryptography.hazmat.primitives.serialization import load_pem_private_key

    reasons = []
    try:
        crt = base64.b64decode(str(data.get("tls.crt", "")), validate=True)
        key = base64.b64decode(str(data.get("tls.key", "")), validate=True)
    except binascii.Error:
        return ["tls.crt/tls.key is not valid base64"]
    try:
        crt.decode("ascii")
        key.decode("ascii")
    except UnicodeDecodeError:
        return ["tls.crt/tls.key is not ASCII PEM"]
    try:
        x509.load_pem_x509_certificates(crt)
    except ValueError:
        reasons.append("tls.crt is not a PEM certificate")
    try:
        load_pem_private_key(key, password=None)
    except (ValueError, TypeError):
        reasons.append("tls.key is not an unencrypted PEM private key")
    return reasons


def unsafe_reasons(obj: Any, kind: str = "ingress", path_ok: Callable[[Any], bool] = is_ingress_path) -> list[str]:
    """Everything that makes ``obj`` unsafe to render (empty list: safe). ``kind``: ingress, secret, any.
    ``path_ok``: the check of Ingress paths (an annotation dialect with regex paths allows more)."""
    if type(obj) is not dict and not isinstance(obj, Mapping):
        return ["not an object"]
    meta = obj.get("metadata") or {}
    reasons = []
    for field in ("namespace", "name"):
        value = meta.get(field)
        if value is not None and not (isinstance(value, str) and _DNS_SUBDOMAIN_MATCH(value)):
            reasons.append(f"metadata.{field} {value!r} is not a DNS name")
    if kind == "ingress":
        reasons += _ingress_reasons(obj, path_ok)
    elif kind == "secret":
        reasons += _pem_reasons(obj.get("data") or {})
    return reasons


def object_id(obj: Any) -> str:
    meta = (obj.get("metadata") or {}) if isinstance(obj, Mapping) else {}
    kind = obj.get("kind", "object") if isinstance(obj, Mapping) else "object"
    return f"{kind} {meta.get('namespace', '')!r}/{meta.get('name', '')!r}"


# kind -> {id(obj): (obj, reasons)} for the objects of the last ``reject_unsafe`` call. Store objects
# are read-only and replaced, never mutated, on change, so the same object (checked by identity: the
# entry holds it, so its id cannot be reused) has the same verdict; only objects of the last call are
# kept, so no stale version outlives its store. Keyed by identity, never by resourceVersion: a
# proposed object under admission review carries the stored object's resourceVersion.
_LAST_VERDICTS: dict[str, dict[int, tuple[Any, tuple[str, ...]]]] = {}


def reject_unsafe(
    items: Iterable[Any],
    kind: str,
    warn: Callable[[str], None],
    notice: Callable[[ObjectNotice, str], None] | None = None,
    reasons_of: Callable[[Any], list[str]] | None = None,
) -> list[Any]:
    """``items`` without the unsafe ones; each skipped object is reported through ``warn`` (its text) or,
    when given, ``notice`` (an ``UnsafeInput`` exclusion naming the first offending field, and its text).
    ``kind`` names the verdict cache and the object kind (``ingress-nginx``: an Ingress); ``reasons_of``
    replaces ``unsafe_reasons`` (an annotation dialect's own checks)."""
    previous = _LAST_VERDICTS.get(kind, {})
    verdicts: dict[int, tuple[Any, tuple[str, ...]]] = {}
    safe = []
    for obj in items:
        hit = previous.get(id(obj))
        if hit is not None and hit[0] is obj:
            reasons = hit[1]
        else:
            reasons = tuple(reasons_of(obj) if reasons_of is not None else unsafe_reasons(obj, kind))
        verdicts[id(obj)] = (obj, reasons)
        if reasons:
            text = f"skipping {object_id(obj)}: {'; '.join(reasons)}"
            ref = object_ref(obj, _KINDS.get(kind.split("-", 1)[0], ""))
            if notice is not None and ref is not None:
                notice(ObjectNotice(ref, UNSAFE_INPUT, "; ".join(reasons), field_of_reason(reasons[0]), True), text)
            else:
                warn(text)
        else:
            safe.append(obj)
    _LAST_VERDICTS[kind] = verdicts
    return safe
