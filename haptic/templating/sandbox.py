"""The Jinja2 sandbox templates from a custom resource run in.

Templates are untrusted: the environment is an ``ImmutableSandboxedEnvironment`` (no private or
dunder attributes, no mutation of lists/dicts handed in), has no file-system loader (templates come
from an in-memory mapping), caps the size of ``*``/``+``/``~``/``%``/``**`` results and of every
growing filter and ``str`` method (``haptic.templating.output_caps``: one limit, ``MAX_OUTPUT_SIZE``),
and enforces a render deadline checked every 64 calls and every 256 loop iterations.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from types import BuiltinMethodType, FunctionType, MethodType
from typing import Any

from jinja2 import ChainableUndefined, FunctionLoader, nodes
from jinja2.exceptions import SecurityError, UndefinedError
from jinja2.runtime import Context
from jinja2.sandbox import ImmutableSandboxedEnvironment
from jinja2.utils import missing
from jinja2.visitor import NodeTransformer

from haptic.templating.errors import RenderTimeout
from haptic.templating.fragments import FragmentExtension
from haptic.templating.output_caps import (
    check_output_size,
    check_printf,
    check_result,
    check_str_method,
    install,
)

_MAX_EXPONENT = 4096
_DICT_ATTRIBUTES = frozenset(dir(dict))
# Read-only str methods templates use in hot loops; ``format`` stays on the sandbox's checked path.
_STR_METHODS = frozenset(
    {
        "strip",
        "rstrip",
        "lstrip",
        "lower",
        "upper",
        "startswith",
        "endswith",
        "split",
        "rsplit",
        "replace",
        "join",
        "removeprefix",
        "removesuffix",
        "partition",
        "rpartition",
        "title",
        "isdigit",
        "count",
        "find",
    }
)
_CHECK_EVERY = 256
_GUARD_FILTER = "_haptic_loop_guard"
_SIZE_FILTER = "_haptic_size_guard"


class StrictNameUndefined(ChainableUndefined):
    """Missing fields chain quietly (``obj.metadata.labels.x`` is empty); a missing variable fails.

    Kubernetes objects omit empty fields, so tolerating missing attributes keeps templates short,
    while a mistyped top-level name must not silently render nothing.
    """

    __slots__ = ()

    def _top_level(self) -> bool:
        return self._undefined_obj is missing and self._undefined_name is not None

    def _check(self) -> None:
        if self._top_level():
            raise UndefinedError(f"{self._undefined_name!r} is undefined")

    def __str__(self) -> str:
        self._check()
        return ""

    def __iter__(self) -> Iterator[Any]:
        self._check()
        return iter(())

    def __bool__(self) -> bool:
        # ``_check`` inlined: ``{% if x.y %}`` on a missing field is the hot case
        if self._undefined_obj is missing and self._undefined_name is not None:
            raise UndefinedError(f"{self._undefined_name!r} is undefined")
        return False

    def __len__(self) -> int:
        self._check()
        return 0


class _Deadline(threading.local):
    at: float | None = None
    clock: Callable[[], float] = time.monotonic


class HapticSandbox(ImmutableSandboxedEnvironment):
    """Sandboxed environment with a render deadline and fast dict attribute access."""

    intercepted_binops = frozenset({"*", "**", "+", "%"})

    def __init__(self, templates: Mapping[str, str], *, clock: Callable[[], float] = time.monotonic) -> None:
        sources = dict(templates)

        def load(name: str) -> tuple[str, str, Callable[[], bool]] | None:
            source = sources.get(name)
            if source is None:
                return None
            return source, name, lambda: True

        super().__init__(
            loader=FunctionLoader(load),
            undefined=StrictNameUndefined,
            autoescape=False,
            trim_blocks=True,
            lstrip_blocks=True,
            keep_trailing_newline=True,
            auto_reload=False,
            cache_size=-1,
            extensions=["jinja2.ext.do", "jinja2.ext.loopcontrols", FragmentExtension],
        )
        self._deadline = _Deadline()
        self._deadline.clock = clock
        self._clock = clock
        self.filters[_GUARD_FILTER] = self._loop_guard
        self.filters[_SIZE_FILTER] = _size_guard
        install(self.filters, self.globals)
        self.trusted_types: frozenset[type] = frozenset()
        self._calls = 0
        self._loops = 0
        self.trusted_functions: frozenset[Callable[..., Any]] = frozenset()

    # -- deadline -------------------------------------------------------------------------------

    def start_deadline(self, seconds: float | None) -> None:
        self._deadline.clock = self._clock
        self._deadline.at = None if seconds is None else self._clock() + seconds

    def clear_deadline(self) -> None:
        self._deadline.at = None

    def check_deadline(self) -> None:
        at = self._deadline.at
        if at is not None and self._deadline.clock() > at:
            self._deadline.at = None
            raise RenderTimeout("render timeout exceeded")

    def _loop_guard(self, iterable: Iterable[Any]) -> Iterable[Any]:
        self._loops += 1
        if self._loops & 15 == 0:  # every 16th loop: a loop per item of a large render is thousands of loops
            self.check_deadline()
        kind = type(iterable)
        if (kind is list or kind is tuple) and len(iterable) < _CHECK_EVERY:  # type: ignore[arg-type]
            # a short list: its loop runs fewer than _CHECK_EVERY items; 16 such loops run fewer than
            # 16 * _CHECK_EVERY, between two checks at loop starts (calls are checked on their own)
            return iterable
        return self._guarded(iterable)

    def _guarded(self, iterable: Iterable[Any]) -> Iterator[Any]:
        for count, item in enumerate(iterable, 1):
            if count % _CHECK_EVERY == 0:
                self.check_deadline()
            yield item

    def _parse(self, source: str, name: str | None, filename: str | None) -> nodes.Template:
        tree = super()._parse(source, name, filename)
        result = _Guards().visit(tree)
        assert isinstance(result, nodes.Template)
        return result

    # -- sandbox hooks ------------------------------------------------------------------------------

    def getattr(self, obj: Any, attribute: str) -> Any:
        # Kubernetes objects are plain dicts: look the key up first instead of paying for an
        # AttributeError on every ``obj.metadata.name``.
        kind = type(obj)
        if kind is dict and attribute not in _DICT_ATTRIBUTES:
            # ``get``, not ``[]``: objects omit empty fields, so a missing key is common, and an exception costly
            value = obj.get(attribute, missing)
            return self.undefined(obj=obj, name=attribute) if value is missing else value
        if kind is str:
            if attribute in _STR_METHODS:
                return getattr(obj, attribute)
            if attribute in ("format", "format_map"):
                # Jinja wraps these in its own formatter, which ``call`` cannot recognise: check here.
                check_str_method(obj, attribute, ())
        # Render-context objects of our own expose only public, read-mostly API: skip the generic checks.
        if kind in self.trusted_types and not attribute.startswith("_"):
            try:
                return getattr(obj, attribute)
            except AttributeError:
                return self.undefined(obj=obj, name=attribute)
        return super().getattr(obj, attribute)

    def getitem(self, obj: Any, argument: Any) -> Any:
        # ``obj["key"]`` on a plain dict cannot reach anything unsafe: skip the attribute fallback checks.
        if type(obj) is dict:
            try:
                return obj[argument]
            except (KeyError, TypeError):
                return self.undefined(obj=obj, name=argument)
        return super().getitem(obj, argument)

    def unsafe_undefined(self, obj: Any, attribute: str) -> Any:
        # Fail loudly: a template probing private or mutating attributes is an escape attempt.
        raise SecurityError(f"access to attribute {attribute!r} of a {type(obj).__name__!r} object is not allowed")

    def call(__self, __context: Context, __obj: Any, *args: Any, **kwargs: Any) -> Any:
        __self._calls += 1
        if __self._calls & 63 == 0:
            __self.check_deadline()
        # Methods of our own render-context objects and our plain helper functions need neither the
        # sandbox's safety checks nor Jinja's argument-passing introspection.
        kind = type(__obj)
        if (
            kind is MethodType
            and type(__obj.__self__) in __self.trusted_types
            and not hasattr(__obj.__func__, "jinja_pass_arg")
        ) or (kind is FunctionType and __obj in __self.trusted_functions):
            if kwargs:
                # Jinja's own bookkeeping arguments, normally stripped by Context.call.
                kwargs.pop("_loop_vars", None)
                kwargs.pop("_block_vars", None)
            return __obj(*args, **kwargs)
        if kind is BuiltinMethodType and type(__obj.__self__) is str:
            name = __obj.__name__
            check_str_method(__obj.__self__, name, args)
            return check_result(super().call(__context, __obj, *args, **kwargs), f"str.{name}")
        return super().call(__context, __obj, *args, **kwargs)

    def call_binop(self, context: Context, operator: str, left: Any, right: Any) -> Any:
        if operator == "+":
            if isinstance(left, str | list | tuple) and isinstance(right, str | list | tuple):
                check_output_size(len(left) + len(right), "+")
            return left + right
        if operator == "%":
            if isinstance(left, str):
                check_printf(left, "%")
            return left % right
        if operator == "**":
            if isinstance(right, int | float) and abs(right) > _MAX_EXPONENT:
                raise SecurityError(f"exponent {right} is too large")
            return left**right
        if isinstance(left, int) and isinstance(right, str | list | tuple):
            left, right = right, left
        if isinstance(left, str | list | tuple) and isinstance(right, int):
            check_output_size(len(left) * right, "*")
        return left * right


def _size_guard(value: Any) -> Any:
    if isinstance(value, str):
        check_output_size(len(value), "~")
    return value


class _Guards(NodeTransformer):
    """Wraps loop iterables in the deadline guard and ``~`` concatenations in the size guard."""

    def visit_For(self, node: nodes.For) -> nodes.Node:
        visited = self.generic_visit(node)
        assert isinstance(visited, nodes.For)
        visited.iter = nodes.Filter(visited.iter, _GUARD_FILTER, [], [], None, None, lineno=visited.lineno)
        return visited

    def visit_Concat(self, node: nodes.Concat) -> nodes.Node:
        visited = self.generic_visit(node)
        assert isinstance(visited, nodes.Expr)
        return nodes.Filter(visited, _SIZE_FILTER, [], [], None, None, lineno=visited.lineno)
