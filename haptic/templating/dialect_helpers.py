"""Template helpers of the annotation-dialect libraries (``nginx``, ``haproxytech``): the Ingress views with
their parsed settings, the canary switches, the users of a basic-auth Secret.

``with_dialect`` reports every annotation it does not render as it should (refused snippets, invalid values,
ignored or unknown annotations) as a warning notice naming the Ingress and the annotation (a Kubernetes Event
on the Ingress); the rest of the Ingress is rendered.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterable, Mapping
from typing import Any

from haptic.templating.context import current_render
from haptic.templating.dialects import Dialect, Finding, hostile_annotations, read_annotations
from haptic.templating.dialects.registry import dialect
from haptic.templating.dialects.values import regex
from haptic.templating.ingress_helpers import age_key, as_regex, ingress_paths
from haptic.templating.notices import ObjectNotice, object_ref
from haptic.templating.safety import is_hostname, is_ingress_path, unsafe_reasons

REASONS = {"refused": "AnnotationRefused", "ignored": "AnnotationIgnored"}

_USER = re.compile(r"^[A-Za-z0-9._@\-]{1,64}\Z")
# crypt(3) hashes haproxy checks through libcrypt: MD5-crypt, bcrypt, SHA-256/512-crypt.
_HASH = re.compile(r"^\$(1|2[aby]|5|6)\$[A-Za-z0-9./$=,]{1,200}\Z")


def dialect_reasons(name: str) -> Any:
    """The ``unsafe_reasons`` of Ingresses read with dialect ``name``: regex paths where the dialect makes them
    regexes, and no control characters in its one-line annotations."""
    found = dialect(name)

    def reasons(obj: Any) -> list[str]:
        raw = ((obj.get("metadata") or {}).get("annotations") or {}) if isinstance(obj, Mapping) else {}
        path_ok = _regex_path if found.regex_paths(raw) else is_ingress_path
        return unsafe_reasons(obj, "ingress", path_ok) + hostile_annotations(obj, found)

    return reasons


def _regex_path(value: Any) -> bool:
    if not isinstance(value, str) or not value.startswith("/"):
        return False
    try:
        regex(value)
    except ValueError:
        return False
    return True


def _notice(ingress: Any, finding: Finding) -> None:
    if finding.support not in REASONS:
        return
    ref = object_ref(ingress, "Ingress")
    if ref is None:
        return
    reason = "AnnotationInvalid" if finding.invalid else REASONS[finding.support]
    if not finding.known:
        reason = "AnnotationUnknown"
    current_render().notice(ObjectNotice(ref, reason, finding.message, f"metadata.annotations[{finding.annotation}]"))


def _routes(view: Mapping[str, Any], settings: Mapping[str, Any]) -> list[dict[str, Any]]:
    routes = ingress_paths(view)
    if not settings.get("regex"):
        return routes
    for route in routes:
        if route["type"] not in ("Exact", "Default"):
            as_regex(route)
    return routes


# dialect -> {id(ingress): (ingress, view, findings)} of the last ``with_dialect`` call. Store objects are
# replaced, never mutated, on change (the entry holds the object, so its id cannot be reused): the same object
# gives the same view, and only the findings are reported again, into this render's notices.
_LAST_VIEWS: dict[str, dict[int, tuple[Any, dict[str, Any], tuple[Finding, ...]]]] = {}


def _view(ingress: Any, found: Dialect) -> tuple[dict[str, Any], tuple[Finding, ...]]:
    reading = read_annotations(ingress, found)
    view = dict(ingress)
    settings = reading.settings
    aliases = [h for h in settings.get("aliases") or [] if is_hostname(h)]
    if aliases:
        spec = dict(view.get("spec") or {})
        rules = list(spec.get("rules") or [])
        spec["rules"] = rules + [{**rule, "host": alias} for alias in aliases for rule in rules if rule.get("host")]
        view["spec"] = spec
    # A passthrough Ingress is routed by TLS server name only (passthrough_routes), never as HTTP.
    settings["routes"] = [] if settings.get("ssl_passthrough") else _routes(view, settings)
    if settings.get("default_backend"):
        meta = view.get("metadata") or {}
        settings["fallback"] = f"ing_{meta.get('namespace')}_{meta.get('name')}_default_{settings['default_backend']}"
    view["dialect"] = settings
    return view, tuple(reading.findings)


def with_dialect(ingresses: Iterable[Any], name: str) -> list[dict[str, Any]]:
    """Each Ingress as a view whose ``dialect`` key holds the settings of its ``name`` annotations (and
    ``routes``: its paths, regex ones typed ``Regex``), with ``server-alias`` hosts added as rules."""
    found = dialect(name)
    previous = _LAST_VIEWS.get(name, {})
    current: dict[int, tuple[Any, dict[str, Any], tuple[Finding, ...]]] = {}
    views = []
    for ingress in ingresses:
        hit = previous.get(id(ingress))
        if hit is not None and hit[0] is ingress:
            view, findings = hit[1], hit[2]
        else:
            view, findings = _view(ingress, found)
        current[id(ingress)] = (ingress, view, findings)
        for finding in findings:
            _notice(ingress, finding)
        views.append(view)
    _LAST_VIEWS[name] = current
    return views


def canary_rules(ingresses: Iterable[Any]) -> list[dict[str, Any]]:
    """One switch per (main backend, canary backend): a canary Ingress's path with the same host and path as a
    main Ingress's (the oldest) sends matching requests of the main backend to the canary's backend."""
    main: dict[tuple[str, str], str] = {}
    canaries = []
    for ing in sorted(ingresses, key=age_key):
        settings = ing.get("dialect") or {}
        for route in settings.get("routes") or []:
            if route["type"] == "Default":
                continue
            if settings.get("canary"):
                canaries.append((route, settings["canary"]))
            else:
                main.setdefault((route["host"], route["path"]), route["backend"])
    rules: dict[tuple[str, str], dict[str, Any]] = {}
    for route, canary in canaries:
        target = main.get((route["host"], route["path"]))
        if target is not None and target != route["backend"]:
            rules.setdefault((target, route["backend"]), {"main": target, "canary": route["backend"], **canary})
    return list(rules.values())


def _decoded(data: Mapping[str, Any], key: str) -> str:
    try:
        return base64.b64decode(str(data.get(key, "")), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return ""


def htpasswd_users(secret: Any, secret_type: str = "auth-file") -> list[tuple[str, str]]:
    """The (user, crypt hash) pairs of a basic-auth Secret that haproxy can check; other lines are dropped
    (``auth_problems`` says which)."""
    return _users(secret, secret_type)[0]


def auth_problems(secret: Any, secret_type: str = "auth-file") -> list[str]:
    """Why entries of a basic-auth Secret are unusable (never quoting a hash)."""
    return _users(secret, secret_type)[1]


def _users(secret: Any, secret_type: str) -> tuple[list[tuple[str, str]], list[str]]:
    data = secret.get("data") if isinstance(secret, Mapping) else None
    if not isinstance(data, Mapping):
        return [], ["the Secret has no data"]
    if secret_type == "auth-map":
        entries = [(str(user), _decoded(data, user).strip()) for user in sorted(data)]
    else:
        lines = _decoded(data, "auth").splitlines()
        entries = [tuple(line.strip().split(":", 1)) for line in lines if line.strip()]  # type: ignore[misc]
        if not lines:
            return [], ["the Secret has no 'auth' key with htpasswd lines"]
    users, problems = [], []
    for entry in entries:
        if len(entry) != 2:
            problems.append("a line is not user:hash")
            continue
        user, hashed = entry
        if not _USER.match(user):
            problems.append("a user name has characters other than letters, digits and . _ @ -")
        elif not _HASH.match(hashed):
            problems.append(f"user {user}: the hash is not a crypt(3) hash haproxy can check (use bcrypt or "
                            "SHA-512-crypt; htpasswd's apr1 and {SHA} are not supported)")
        else:
            users.append((user, hashed))
    return users, problems
