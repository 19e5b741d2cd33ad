"""Filters, tests and global functions available to templates.

Names follow the original HAPTIC template library where it had a useful function (``sort_by``,
``dig``, ``b64decode``, ``fallback``, ``first_seen``, ``fail`` …); Jinja2's own built-ins (``indent``,
``join``, ``replace``, ``selectattr``, ``namespace`` …) stay available. Everything here is pure:
per-render state (``first_seen``, warnings) lives in the render state handed in through the context.
"""

from __future__ import annotations

import base64
import binascii
import fnmatch
import hashlib
import json
import math
import posixpath
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import yaml
from jinja2 import Undefined

from haptic.templating.context import current_render
from haptic.templating.dialect_helpers import dialect_reasons
from haptic.templating.errors import TemplateFailure, TemplateRenderError
from haptic.templating.linear_regex import PatternError, compile_pattern, go_replacement, sub_capped
from haptic.templating.list_memo import same_call
from haptic.templating.notices import ObjectNotice, check_reason, object_ref
from haptic.templating.output_caps import check_json_indent, check_output_size, replace_size
from haptic.templating.safety import (
    is_haproxy_token,
    is_hostname,
    is_ingress_path,
    reject_unsafe,
    unsafe_reasons,
)

# -- helpers -------------------------------------------------------------------------------------


def _is_nil(value: Any) -> bool:
    return value is None or isinstance(value, Undefined)


def _regex(pattern: Any, what: str) -> Any:
    try:
        return compile_pattern(str(pattern))
    except PatternError as exc:
        raise TemplateRenderError(f"{what}: {exc}") from None


def _path_get(item: Any, path: Sequence[str]) -> Any:
    current = item
    for key in path:
        if isinstance(current, Mapping):
            current = current.get(key)
        elif isinstance(current, Sequence) and not isinstance(current, str) and key.lstrip("-").isdigit():
            index = int(key)
            current = current[index] if -len(current) <= index < len(current) else None
        else:
            current = getattr(current, key, None) if not key.startswith("_") else None
        if current is None:
            return None
    return current


# -- collections ---------------------------------------------------------------------------------


def sort_by(items: Iterable[Any], criteria: str | Sequence[str]) -> list[Any]:
    """Stable multi-key sort by JSONPath-like keys: ``$.a.b``, ``$.a:desc``, ``$.a:exists``, ``$.a | length``.

    Missing values sort last (first with ``:desc``); the input is never modified.
    """
    keys = [criteria] if isinstance(criteria, str) else list(criteria)
    result = list(items)
    for criterion in reversed(keys):
        expr, _, modifier = criterion.partition(":")
        expr = expr.strip()
        modifier = modifier.strip()
        use_length = False
        if "|" in expr:
            expr, _, func = expr.partition("|")
            expr = expr.strip()
            use_length = func.strip() == "length"
        path = [p for p in expr.removeprefix("$").split(".") if p]
        descending = modifier == "desc"
        exists = modifier == "exists"

        def key(item: Any, path: list[str] = path, use_length: bool = use_length, exists: bool = exists) -> Any:
            value = _path_get(item, path)
            if exists:
                return (0, 0 if value is not None else 1)
            if value is None:
                return (1, 0)
            if use_length:
                return (0, len(value))
            if isinstance(value, bool):
                return (0, int(value))
            if isinstance(value, int | float):
                return (0, value)
            return (0, str(value)) if not isinstance(value, str) else (0, value)

        if descending:
            present = [i for i in result if _path_get(i, path) is not None]
            absent = [i for i in result if _path_get(i, path) is None]
            present.sort(key=key, reverse=True)
            result = present + absent
        else:
            result.sort(key=key)
    return result


def glob_match(items: Iterable[Any], pattern: str) -> list[Any]:
    """Items (strings, or mappings matched by their ``name``) whose name matches a shell glob."""
    out = []
    for item in items:
        name = item.get("name") if isinstance(item, Mapping) else item
        if isinstance(name, str) and fnmatch.fnmatchcase(name, pattern):
            out.append(item)
    return out


def dig(obj: Any, *keys: Any) -> Any:
    """Nested lookup through mappings and lists; ``None`` as soon as a step is missing."""
    current = obj
    for key in keys:
        if type(current) is dict or isinstance(current, Mapping):  # the exact type first: store objects are dicts
            current = current.get(key)
        elif isinstance(current, Sequence) and not isinstance(current, str) and isinstance(key, int):
            current = current[key] if -len(current) <= key < len(current) else None
        else:
            return None
        if current is None:
            return None
    return current


def with_field(items: Iterable[Any], path: str) -> list[Any]:
    """The items whose dotted ``path`` (through mappings) holds a true value: ``ingresses | with_field("spec.tls")``
    is ``{% for ing in ingresses if ing.spec.tls %}`` without a sandboxed lookup per item and step."""
    keys = path.split(".")
    # the Ingress library asks it of every Ingress, twice a render: answered again for the same Ingresses
    return same_call(f"with_field:{path}", items, None, lambda group: [item for item in group if dig(item, *keys)])


def fallback(value: Any, default: Any) -> Any:
    """``value`` unless it is nil/undefined/empty string, then ``default``."""
    if _is_nil(value) or value == "":
        return default
    return value


def coalesce(*values: Any) -> Any:
    """The first value that is not nil/undefined/empty string."""
    for value in values:
        if not _is_nil(value) and value != "":
            return value
    return None


def merge(a: Mapping[str, Any] | None, b: Mapping[str, Any] | None) -> dict[str, Any]:
    """A new mapping with ``b``'s keys over ``a``'s."""
    result = dict(a or {})
    result.update(b or {})
    return result


def keys(mapping: Mapping[str, Any] | None) -> list[Any]:
    return sorted(mapping or {})


def sort_strings(items: Iterable[Any]) -> list[str]:
    return sorted(str(i) for i in items)


def append(items: Iterable[Any] | None, item: Any) -> list[Any]:
    return [*(items or []), item]


def seq(n: int) -> list[int]:
    return list(range(max(0, min(int(n), 100_000))))


def shard_slice(items: Sequence[Any], index: int, count: int) -> list[Any]:
    """The ``index``-th of ``count`` near-equal contiguous slices of ``items``."""
    count = max(1, int(count))
    size = math.ceil(len(items) / count) if items else 0
    return list(items[index * size : (index + 1) * size])


def group_by(items: Iterable[Any], path: str) -> dict[str, list[Any]]:
    """Groups items by the string value at a dotted path, groups in first-seen order."""
    parts = [p for p in path.removeprefix("$").split(".") if p]
    groups: dict[str, list[Any]] = {}
    for item in items:
        groups.setdefault(str(_path_get(item, parts)), []).append(item)
    return groups


def unique_by(items: Iterable[Any], path: str) -> list[Any]:
    parts = [p for p in path.removeprefix("$").split(".") if p]
    seen: dict[str, None] = {}
    out = []
    for item in items:
        key = json.dumps(_path_get(item, parts), sort_keys=True, default=str)
        if key not in seen:
            seen[key] = None
            out.append(item)
    return out


def to_string_slice(value: Any) -> list[str]:
    if _is_nil(value):
        return []
    if isinstance(value, str):
        return [value]
    return [str(v) for v in value]


def to_slice(value: Any) -> list[Any]:
    if _is_nil(value):
        return []
    if isinstance(value, list | tuple):
        return list(value)
    return [value]


# -- strings -------------------------------------------------------------------------------------


def b64decode(value: Any) -> str:
    """Decodes base64 (Secret ``data``) to text; invalid input raises a render error."""
    try:
        return base64.b64decode(str(value), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError) as exc:
        raise TemplateFailure(f"b64decode: invalid base64 input ({exc.__class__.__name__})") from None


def b64encode(value: Any) -> str:
    return base64.b64encode(str(value).encode()).decode()


def strip(value: Any, chars: str | None = None) -> str:
    return str(value).strip(chars)


def strings_split(value: Any, sep: str) -> list[str]:
    return str(value).split(sep)


def strings_splitn(value: Any, sep: str, n: int) -> list[str]:
    return str(value).split(sep, max(0, int(n) - 1)) if n > 0 else str(value).split(sep)


def strings_contains(value: Any, sub: str) -> bool:
    return sub in str(value)


def strings_replace(value: Any, old: str, new: str) -> str:
    text, old, new = str(value), str(old), str(new)
    check_output_size(replace_size(text, old, new, None), "strings_replace")
    return text.replace(old, new)


def basename(value: Any) -> str:
    return posixpath.basename(str(value))


def join_key(sep: str, *values: Any) -> str:
    return sep.join(str(v) for v in values)


def tostring(value: Any) -> str:
    if _is_nil(value):
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def toint(value: Any, default: int = 0) -> int:
    try:
        return int(str(value).strip()) if not isinstance(value, float) else int(value)
    except (TypeError, ValueError):
        return default


def tofloat(value: Any, default: float = 0.0) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return default


def ceil(value: Any) -> int:
    return math.ceil(float(value))


def isdigit(value: Any) -> bool:
    return isinstance(value, str) and value.isdigit() and value.isascii()


def has_prefix(value: Any, prefix: str) -> bool:
    return str(value).startswith(prefix)


def has_suffix(value: Any, suffix: str) -> bool:
    return str(value).endswith(suffix)


# -- regex ---------------------------------------------------------------------------------------
# Patterns are RE2 (linear time, as in the Go original): no backreferences, no lookaround.


def regex_search(value: Any, pattern: str) -> bool:
    return _regex(pattern, "regex_search").search(str(value)) is not None


def regex_match(value: Any, pattern: str) -> bool:
    return _regex(pattern, "regex_match").fullmatch(str(value)) is not None


def regex_findall(value: Any, pattern: str) -> list[Any]:
    found: list[Any] = _regex(pattern, "regex_findall").findall(str(value))
    return found


def regex_replace(value: Any, pattern: str, replacement: str) -> str:
    """Replaces every match; the replacement uses Go/RE2 syntax (``$1``, ``${name}``, ``$$``)."""
    compiled = _regex(pattern, "regex_replace")
    return sub_capped(compiled, go_replacement(str(replacement)), str(value), "regex_replace")


def regex_escape(value: Any) -> str:
    """Escapes regex metacharacters (``sanitize_regex`` in the original)."""
    return re.escape(str(value))


# -- hashing / encoding --------------------------------------------------------------------------


def sha256(value: Any) -> str:
    return hashlib.sha256(str(value).encode()).hexdigest()


def md5(value: Any) -> str:
    return hashlib.md5(str(value).encode(), usedforsecurity=False).hexdigest()


def to_json(value: Any, indent: int | None = None) -> str:
    check_json_indent(indent, "to_json")
    return json.dumps(value, sort_keys=True, indent=indent, default=str)


def from_json(value: Any) -> Any:
    return json.loads(str(value))


def to_yaml(value: Any) -> str:
    return yaml.safe_dump(value, sort_keys=True, default_flow_style=False)


def from_yaml(value: Any) -> Any:
    return yaml.safe_load(str(value))


def debug(value: Any, label: str = "debug") -> str:
    """The value as JSON in HAProxy ``#`` comment lines, for inspecting data in a rendered config."""
    body = json.dumps(value, sort_keys=True, indent=2, default=str)
    return "\n".join(f"# {label}: {line}" for line in body.splitlines())


# -- render-state functions ----------------------------------------------------------------------


def fail(message: Any = "template called fail()") -> None:
    """Aborts the render with ``message`` (surfaced as the ``rendering_error``)."""
    raise TemplateFailure(str(message))


# Per-render state comes from a context variable rather than ``pass_context``: Jinja then calls
# these like any other function, which is much cheaper in the hot loops of large renders.


def first_seen(prefix: str, *keys: Any) -> bool:
    """True the first time a (prefix, keys…) combination is seen during this render."""
    return current_render().first_seen((prefix, *(str(k) for k in keys)))


def _notice(obj: Any, reason: Any, message: Any, field: Any, excluded: bool) -> ObjectNotice:
    ref = object_ref(obj)
    if ref is None:
        raise TemplateFailure(f"{'exclude' if excluded else 'warn'}: the object must be a Kubernetes object")
    try:
        check_reason(str(reason))
    except ValueError as exc:
        raise TemplateFailure(str(exc)) from None
    return ObjectNotice(ref, str(reason), str(message), "" if _is_nil(field) else str(field), excluded)


def warn(message: Any, obj: Any = None, reason: Any = "TemplateWarning", field: Any = "") -> str:
    """Records a render warning (reported beside the result) and renders nothing.

    With ``obj`` (a Kubernetes object) the warning is about that object: it becomes a Kubernetes Event
    on it (``reason``, CamelCase) and an admission warning when the object is proposed.
    """
    if obj is None or _is_nil(obj):
        current_render().warn(str(message))
    else:
        current_render().notice(_notice(obj, reason, message, field, False))
    return ""


def exclude(obj: Any, reason: Any, message: Any, field: Any = "") -> str:
    """Records that the templates leave ``obj`` out of the config (``reason`` CamelCase, the field at fault):
    the controller reports it on the object (Event, status) and the webhook refuses or warns."""
    current_render().notice(_notice(obj, reason, message, field, True))
    return ""


def skipped(obj: Any) -> bool:
    """True when the controller asked this render to leave ``obj`` out (per-object isolation after
    ``haproxy -c`` rejected the lines it produced); false for the previous version rendered in its place."""
    ref = object_ref(obj)
    if ref is None:
        return False
    return current_render().is_skipped(ref.key, obj)


def reject_unsafe_filter(items: Iterable[Any], kind: str = "ingress") -> list[Any]:
    """Drops objects whose strings could inject HAProxy directives, with a warning naming each."""
    state = current_render()
    reasons = dialect_reasons(kind.removeprefix("ingress-")) if kind.startswith("ingress-") else None

    def verdicts(group: Sequence[Any]) -> tuple[list[Any], list[tuple[ObjectNotice | None, str]]]:
        reports: list[tuple[ObjectNotice | None, str]] = []
        safe = reject_unsafe(group, kind, lambda text: reports.append((None, text)),
                             lambda notice, text: reports.append((notice, text)), reasons)
        return safe, reports

    # the same objects as in the last render: the same verdicts, reported again in the same order
    safe, reports = same_call(f"reject_unsafe:{kind}", items, None, verdicts)
    for notice, text in reports:
        if notice is None:
            state.warn(text)
        else:
            state.notice(notice, text)
    return safe


def ingress_class(items: Iterable[Any], name: str, include_unclassed: bool = False) -> list[Any]:
    """Ingresses of IngressClass ``name``: ``spec.ingressClassName``, else the legacy annotation,
    else (when ``include_unclassed``) Ingresses naming no class at all."""
    return same_call("ingress_class", items, (name, include_unclassed),
                     lambda group: _of_class(group, name, include_unclassed))


def _of_class(items: Iterable[Any], name: str, include_unclassed: bool) -> list[Any]:
    out = []
    for item in items:
        spec = item.get("spec") or {}
        wanted = spec.get("ingressClassName")
        if wanted is None:
            wanted = ((item.get("metadata") or {}).get("annotations") or {}).get("kubernetes.io/ingress.class")
        if wanted == name or (wanted is None and include_unclassed):
            out.append(item)
    return out


def is_nil(value: Any) -> bool:
    return _is_nil(value)


FILTERS: dict[str, Callable[..., Any]] = {
    "sort_by": sort_by,
    "glob_match": glob_match,
    "dig": dig,
    "with_field": with_field,
    "fallback": fallback,
    "default_if_nil": fallback,
    "merge": merge,
    "keys": keys,
    "sort_strings": sort_strings,
    "append": append,
    "shard_slice": shard_slice,
    "group_by": group_by,
    "unique_by": unique_by,
    "toStringSlice": to_string_slice,
    "to_string_slice": to_string_slice,
    "toSlice": to_slice,
    "b64decode": b64decode,
    "b64encode": b64encode,
    "strip": strip,
    "strings_split": strings_split,
    "strings_splitn": strings_splitn,
    "strings_contains": strings_contains,
    "strings_replace": strings_replace,
    "strings_lower": lambda v: str(v).lower(),
    "strings_trim": strip,
    "basename": basename,
    "tostring": tostring,
    "toint": toint,
    "tofloat": tofloat,
    "ceil": ceil,
    "regex_search": regex_search,
    "regex_match": regex_match,
    "regex_findall": regex_findall,
    "regex_replace": regex_replace,
    "regex_escape": regex_escape,
    "sanitize_regex": regex_escape,
    "sha256": sha256,
    "md5": md5,
    "to_json": to_json,
    "from_json": from_json,
    "to_yaml": to_yaml,
    "from_yaml": from_yaml,
    "debug": debug,
    "reject_unsafe": reject_unsafe_filter,
    "ingress_class": ingress_class,
    "unsafe_reasons": unsafe_reasons,
}

TESTS: dict[str, Callable[..., bool]] = {
    "skipped": skipped,
    "nil": is_nil,
    "digit": isdigit,
    "haproxy_token": is_haproxy_token,
    "hostname": is_hostname,
    "ingress_path": is_ingress_path,
    "regex_match": regex_match,
    "has_prefix": has_prefix,
    "has_suffix": has_suffix,
}

GLOBALS: dict[str, Any] = {
    "fail": fail,
    "first_seen": first_seen,
    "warn": warn,
    "exclude": exclude,
    "skipped": skipped,
    "dig": dig,
    "coalesce": coalesce,
    "fallback": fallback,
    "merge": merge,
    "seq": seq,
    "join_key": join_key,
    "isNil": is_nil,
    "is_nil": is_nil,
    "isdigit": isdigit,
    "unsafe_reasons": unsafe_reasons,
    "is_haproxy_token": is_haproxy_token,
    "regex_search": regex_search,
    "regex_replace": regex_replace,
    "shard_slice": shard_slice,
}
