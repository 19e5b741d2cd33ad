"""Size caps on everything a template can use to grow a string or a list.

One limit, ``MAX_OUTPUT_SIZE`` characters (or items), bounds every single value a template builds:
``*``/``+``/``~`` results, Jinja2's ``center``/``indent``/``wordwrap``/``format``/``replace``/``join``/
``tojson``/``batch``/``slice``/``sum`` filters, the ``lipsum`` global and ``str`` methods such as ``ljust``,
``rjust``, ``center``, ``zfill``, ``expandtabs``, ``replace``, ``join`` and ``format``. Where the size
of a result follows from the arguments it is checked *before* anything is allocated, so
``'x' | center(999999999)`` fails at once instead of taking gigabytes; the controller's whole render
output stays far below its memory limit. Imports only Jinja2 and the templating errors' base.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from jinja2 import filters as jinja_filters
from jinja2 import pass_environment, pass_eval_context
from jinja2.exceptions import SecurityError
from jinja2.sandbox import MAX_RANGE

# 10 M characters: a rendered haproxy.cfg for thousands of Ingresses is a few MB.
MAX_OUTPUT_SIZE = 10_000_000
# JSON indentation multiplies with nesting depth and line count: a width over this is never useful.
MAX_JSON_INDENT = 64
_LIPSUM_WORD = 16  # longest lorem-ipsum word plus separator, for the size bound of ``lipsum``
# printf-style width or precision above 4 digits (or taken from an argument with '*').
WIDE_PRINTF = re.compile(r"%(\([^)]*\))?[-#0 +]*(\*|\d{5,})|%(\([^)]*\))?[-#0 +]*\d*\.(\*|\d{5,})")
# str.format width/precision above 4 digits, or a nested ``{}`` that takes the width from an argument.
_WIDE_BRACE = re.compile(r"\{[^{}]*:[^{}]*(\d{5,}|\{)")


_T = TypeVar("_T")


class OutputTooLarge(SecurityError):
    """A filter, operator or method would build a value over ``MAX_OUTPUT_SIZE``."""


def check_output_size(size: int, what: str) -> None:
    """Raises before allocation when ``what`` (a filter/operator name) would exceed the limit."""
    if size > MAX_OUTPUT_SIZE:
        raise OutputTooLarge(
            f"{what}: result too large: {size} characters/items, the limit is {MAX_OUTPUT_SIZE}"
        )


def check_printf(template: str, what: str) -> None:
    if WIDE_PRINTF.search(template):
        raise OutputTooLarge(f"{what}: format width or precision too large (over 4 digits)")


def _width(value: Any, what: str) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        raise OutputTooLarge(f"{what}: width {value!r} is not an integer") from None


def replace_size(s: str, old: str, new: str, count: int | None) -> int:
    found = len(s) + 1 if old == "" else s.count(old)
    if count is not None and count >= 0:
        found = min(found, count)
    return len(s) + found * max(0, len(new) - len(old))


def _str(value: Any) -> str:
    return value if isinstance(value, str) else str(value)


def _after(result: _T, what: str) -> _T:
    # Results whose growth is bounded by a small factor (escaping, upper-casing) are checked after.
    if isinstance(result, str):
        check_output_size(len(result), what)
    return result


def _center(value: Any, width: Any = 80) -> str:
    check_output_size(_width(width, "center"), "center")
    return _after(jinja_filters.do_center(value, width), "center")


def _indent(s: Any, width: Any = 4, first: bool = False, blank: bool = False) -> str:
    text = _str(s)
    step = len(width) if isinstance(width, str) else _width(width, "indent")
    check_output_size(len(text) + (text.count("\n") + 1) * max(0, step), "indent")
    return jinja_filters.do_indent(text, width, first, blank)


@pass_environment
def _wordwrap(
    environment: Any,
    s: Any,
    width: int = 79,
    break_long_words: bool = True,
    wrapstring: str | None = None,
    break_on_hyphens: bool = True,
) -> str:
    text = _str(s)
    wrap = environment.newline_sequence if wrapstring is None else wrapstring
    # Every line holds at least one character, so there are at most len(text) breaks.
    check_output_size(len(text) + (len(text) + 1) * len(_str(wrap)), "wordwrap")
    return _after(
        jinja_filters.do_wordwrap(environment, text, width, break_long_words, wrapstring, break_on_hyphens),
        "wordwrap",
    )


def _format(value: Any, *args: Any, **kwargs: Any) -> str:
    check_printf(_str(value), "format")
    return _after(jinja_filters.do_format(value, *args, **kwargs), "format")


@pass_eval_context
def _replace(eval_ctx: Any, s: Any, old: Any, new: Any, count: int | None = None) -> str:
    check_output_size(replace_size(_str(s), _str(old), _str(new), count), "replace")
    return jinja_filters.do_replace(eval_ctx, s, old, new, count)


@pass_eval_context
def _join(eval_ctx: Any, value: Iterable[Any], d: Any = "", attribute: str | int | None = None) -> str:
    items = list(value)
    if attribute is not None:
        items = list(map(jinja_filters.make_attrgetter(eval_ctx.environment, attribute), items))
    parts = [_str(item) for item in items]
    check_output_size(sum(map(len, parts)) + len(_str(d)) * max(0, len(parts) - 1), "join")
    joined: str = jinja_filters.do_join(eval_ctx, parts, d)
    return joined


def check_json_indent(indent: Any, what: str) -> None:
    width = len(indent) if isinstance(indent, str) else 0 if indent is None else _width(indent, what)
    if width > MAX_JSON_INDENT:
        raise OutputTooLarge(f"{what}: indent {width} too large, the limit is {MAX_JSON_INDENT}")


@pass_eval_context
def _tojson(eval_ctx: Any, value: Any, indent: Any = None) -> Any:
    check_json_indent(indent, "tojson")
    return _after(jinja_filters.do_tojson(eval_ctx, value, indent), "tojson")


def _count(value: Any, what: str) -> None:
    if _width(value, what) > MAX_RANGE:
        raise OutputTooLarge(f"{what}: count {value} too large, the limit is {MAX_RANGE}")


def _batch(value: Iterable[Any], linecount: Any, fill_with: Any = None) -> Any:
    _count(linecount, "batch")
    return jinja_filters.do_batch(value, linecount, fill_with)


@pass_eval_context
def _slice(eval_ctx: Any, value: Any, slices: Any, fill_with: Any = None) -> Any:
    _count(slices, "slice")
    return jinja_filters.do_slice(eval_ctx, value, slices, fill_with)


@pass_environment
def _sum(environment: Any, iterable: Iterable[Any], attribute: str | int | None = None, start: Any = 0) -> Any:
    if not isinstance(start, list | tuple):
        return jinja_filters.do_sum(environment, iterable, attribute, start)
    # Summing lists concatenates them: count the items as they come, before any concatenation.
    if attribute is not None:
        iterable = map(jinja_filters.make_attrgetter(environment, attribute), iterable)
    items = []
    total = len(start)
    for item in iterable:
        total += len(item) if isinstance(item, list | tuple) else 1
        check_output_size(total, "sum")
        items.append(item)
    return jinja_filters.do_sum(environment, items, start=start)


def _bounded(name: str, filter_func: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(filter_func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return _after(filter_func(*args, **kwargs), name)

    return wrapper


CAPPED_FILTERS: dict[str, Callable[..., Any]] = {
    "center": _center,
    "indent": _indent,
    "wordwrap": _wordwrap,
    "format": _format,
    "replace": _replace,
    "join": _join,
    "tojson": _tojson,
    "batch": _batch,
    "slice": _slice,
    "sum": _sum,
}
# Filters that grow their input by a bounded factor: checked on their result.
BOUNDED_FILTERS = ("escape", "e", "forceescape", "urlize", "urlencode", "upper", "title", "capitalize", "xmlattr")


def install(filters: dict[str, Callable[..., Any]], globals_: dict[str, Any]) -> None:
    """Replaces the growing built-ins of a Jinja2 environment by their capped versions."""
    filters.update(CAPPED_FILTERS)
    for name in BOUNDED_FILTERS:
        if name in filters:
            filters[name] = _bounded(name, filters[name])
    lipsum = globals_.get("lipsum")
    if lipsum is not None:
        globals_["lipsum"] = _capped_lipsum(lipsum)


def _capped_lipsum(lipsum: Callable[..., str]) -> Callable[..., str]:
    def capped(n: int = 5, html: bool = True, min: int = 20, max: int = 100) -> str:
        check_output_size(_width(n, "lipsum") * _width(max, "lipsum") * _LIPSUM_WORD, "lipsum")
        return lipsum(n, html, min, max)

    return capped


# -- str methods ---------------------------------------------------------------------------------


def _str_width(name: str) -> Callable[[str, tuple[Any, ...]], int]:
    def size(s: str, args: tuple[Any, ...]) -> int:
        return max(len(s), _width(args[0], name)) if args else len(s)

    return size


def _expandtabs_size(s: str, args: tuple[Any, ...]) -> int:
    return len(s) + s.count("\t") * max(0, _width(args[0], "expandtabs") if args else 8)


def _str_replace_size(s: str, args: tuple[Any, ...]) -> int:
    if len(args) < 2:
        return len(s)
    count = _width(args[2], "replace") if len(args) > 2 else None
    return replace_size(s, _str(args[0]), _str(args[1]), count)


def _str_join_size(s: str, args: tuple[Any, ...]) -> int:
    if not args or not isinstance(args[0], list | tuple):
        return 0  # other iterables: checked on the result
    parts = args[0]
    return sum(len(p) for p in parts if isinstance(p, str)) + len(s) * max(0, len(parts) - 1)


STR_METHOD_SIZES: dict[str, Callable[[str, tuple[Any, ...]], int]] = {
    "center": _str_width("center"),
    "ljust": _str_width("ljust"),
    "rjust": _str_width("rjust"),
    "zfill": _str_width("zfill"),
    "expandtabs": _expandtabs_size,
    "replace": _str_replace_size,
    "join": _str_join_size,
}


def check_str_method(s: str, name: str, args: tuple[Any, ...]) -> None:
    """Checks a call of ``s.<name>(*args)`` before it runs (``format`` widths included)."""
    size = STR_METHOD_SIZES.get(name)
    if size is not None:
        check_output_size(size(s, args), f"str.{name}")
    elif name in ("format", "format_map") and _WIDE_BRACE.search(s):
        raise OutputTooLarge(f"str.{name}: format width or precision too large (over 4 digits)")


def check_result(result: Any, what: str) -> Any:
    return _after(result, what)
