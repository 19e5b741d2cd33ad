"""``direct_body``: a fragment loop calls its body's macro function directly only when the macro adds nothing."""

from __future__ import annotations

from typing import Any

from jinja2 import Environment
from jinja2.runtime import Macro

from haptic.templating.fragments import direct_body


def _macro(source: str) -> Macro:
    module: Any = Environment().from_string(source).module
    macro: Macro = module.m
    return macro


def test_a_one_argument_macro_is_its_function_and_anything_else_stays_itself() -> None:
    plain = _macro("{% macro m(x) %}<{{ x }}>{% endmacro %}")
    body = direct_body(plain)
    assert body is not plain and body("a") == plain("a") == "<a>"
    for other in ("{% macro m(x) %}{{ caller() }}{% endmacro %}", "{% macro m(x) %}{{ kwargs }}{% endmacro %}",
                  "{% macro m(x) %}{{ varargs }}{% endmacro %}", "{% macro m(x, y) %}{% endmacro %}"):
        macro = _macro(other)
        assert direct_body(macro) is macro, other
    escaping: Any = Environment(autoescape=True).from_string("{% macro m(x) %}{{ x }}{% endmacro %}").module
    assert direct_body(escaping.m) is escaping.m
    function = str.upper
    assert direct_body(function) is function
