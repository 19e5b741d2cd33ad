"""``fieldValidation=Strict|Warn|Ignore``: what the API server does with fields it drops from a body.

Built-in kinds drop what their Go types do not declare, custom resources what their schema prunes. The
directive (``Warn`` when unset) decides: ``Ignore`` drops silently, ``Warn`` adds a ``Warning`` header per
field (``unknown field "spec.foo"``), ``Strict`` refuses the request, worded per verb as the server words it:

- create/update: 400 ``Widget in version "v1" cannot be handled as a Widget: strict decoding error: ...``;
- JSON/merge/strategic patch: 422 `` "" is invalid: patch: Invalid value: "<patched JSON>": strict ...``;
- server-side apply (always, whatever the directive): 500 ``failed to create typed patch object
  (ns/name; group/version, Kind=Kind): .spec.foo: field not declared in schema``.

Warnings are collected per request in a context variable (``collecting``); the HTTP front-end turns them
into ``Warning: 299 - "..."`` headers, the in-process client drops them.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar
from typing import Any

from haptic.k8s.api import ApiError

from .field_errors import invalid, invalid_value, not_supported
from .gofmt import go_json, go_quote
from .resources import ResourceType
from .validation import undecodable

IGNORE, WARN, STRICT = "Ignore", "Warn", "Strict"
_OPTIONS = {"create": "CreateOptions", "update": "UpdateOptions", "patch": "PatchOptions", "apply": "PatchOptions"}
_warnings: ContextVar[list[str] | None] = ContextVar("kube_warnings", default=None)


@contextlib.contextmanager
def collecting() -> Iterator[list[str]]:
    """Collects the warnings of the writes made inside the block."""
    found: list[str] = []
    token = _warnings.set(found)
    try:
        yield found
    finally:
        _warnings.reset(token)


def warn(message: str) -> None:
    found = _warnings.get()
    if found is not None and message not in found:
        found.append(message)


def warning_header(message: str) -> str:
    """The ``Warning`` header value of one warning (RFC 7234 code 299, unknown agent)."""
    return "299 - " + go_quote(message)


def directive(value: str | None, operation: str) -> str:
    """The request's directive (``Warn`` when unset); an unknown one is the server's 422."""
    if value in (None, ""):
        return WARN
    if value in (IGNORE, WARN, STRICT):
        return value
    raise invalid(_OPTIONS.get(operation, "CreateOptions"), "meta.k8s.io", "",
                  [not_supported("fieldValidation", value, ["", IGNORE, STRICT, WARN])])


def _strict_message(unknown: list[str]) -> str:
    return "strict decoding error: " + ", ".join(f"unknown field {go_quote(p)}" for p in unknown)


def report_unknown(rt: ResourceType, unknown: list[str], how: str, operation: str, obj: Any) -> None:
    """Acts on the fields dropped from a create, update or patch body."""
    if not unknown or how == IGNORE:
        return
    unknown = sorted(dict.fromkeys(unknown))
    if how == WARN:
        for path in unknown:
            warn(f"unknown field {go_quote(path)}")
        return
    if operation == "patch":
        shown = "<redacted>" if rt.storage_key == ("", "secrets") else go_json(obj)
        raise invalid("", "", "", [invalid_value("patch", shown, _strict_message(unknown))])
    raise undecodable(rt, _strict_message(unknown))


def refuse_apply(rt: ResourceType, namespace: str | None, name: str, paths: list[str]) -> None:
    """Server-side apply refuses undeclared fields (the typed conversion of the patch fails)."""
    if not paths:
        return
    paths = sorted(dict.fromkeys(paths))
    messages = [f"{p}: field not declared in schema" for p in paths]
    detail = messages[0] if len(messages) == 1 else "errors:\n  " + "\n  ".join(messages)
    gvk = f"{rt.group}/{rt.version}, Kind={rt.kind}"
    raise ApiError(500, "", f"failed to create typed patch object ({namespace or ''}/{name}; {gvk}): {detail}")

