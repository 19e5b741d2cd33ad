"""Templates are untrusted: escapes, mutation, runaway loops and huge values fail the render clearly."""

from __future__ import annotations

import itertools

import pytest

from haptic.templating.engine import RenderInputs
from haptic.templating.errors import RenderTimeout, SandboxViolation, TemplateRenderError
from tests.unit.haptic.templating.helpers import engine_for, render


@pytest.mark.parametrize(
    "source",
    [
        "{{ ''.__class__.__mro__ }}",
        "{{ cycler.__init__.__globals__ }}",
        "{{ lipsum.__globals__['os'] }}",
        "{{ extraContext.__class__ }}",
        "{{ pathResolver._dirs }}",
        "{{ (1).__add__(2) }}",
        "{{ resources.__class__ }}",
        "{{ controller.haproxy_pods._store }}",
        "{% for c in ().__class__.__base__.__subclasses__() %}{% endfor %}",
    ],
)
def test_attribute_escapes_fail_with_a_sandbox_error(source: str) -> None:
    with pytest.raises(SandboxViolation, match="sandbox violation"):
        render(source)


@pytest.mark.parametrize(
    "source",
    [
        "{{ extraContext.obj.update({'x': 1}) }}",
        "{{ extraContext.lst.append(1) }}",
        "{{ extraContext.lst.pop() }}",
        "{{ extraContext.obj.clear() }}",
    ],
)
def test_objects_handed_in_cannot_be_mutated(source: str) -> None:
    obj: dict[str, int] = {"a": 1}
    lst = [1, 2]
    with pytest.raises(SandboxViolation):
        render(source, obj=obj, lst=lst)
    assert obj == {"a": 1} and lst == [1, 2]


def test_no_file_or_module_access() -> None:
    with pytest.raises(TemplateRenderError, match="template not found"):
        render("{% include '/etc/passwd' %}")
    with pytest.raises(TemplateRenderError):
        render("{{ open('/etc/passwd') }}")
    with pytest.raises(TemplateRenderError):
        render("{{ __import__('os') }}")


def test_huge_repetition_and_exponent_are_refused() -> None:
    with pytest.raises(SandboxViolation, match="too large"):
        render("{{ 'x' * 100000000 }}")
    with pytest.raises(SandboxViolation, match="too large"):
        render("{{ 100000000 * [1] }}")
    with pytest.raises(SandboxViolation, match="exponent"):
        render("{{ 2 ** 100000 }}")
    assert render("{{ 'ab' * 3 }} {{ 2 ** 10 }} {{ 3 * 4 }}") == "ababab 1024 12"


def test_render_timeout_stops_a_runaway_loop_without_calls() -> None:
    ticks = itertools.count()
    # A fake clock advancing one second per reading: the deadline trips after a few loop checks.
    engine = engine_for(
        "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
        render_timeout=5.0,
        clock=lambda: float(next(ticks)),
    )
    with pytest.raises(RenderTimeout, match="render timeout") as info:
        engine.render(RenderInputs())
    assert info.value.template == "haproxy.cfg"


def test_render_timeout_is_not_hit_by_a_normal_render() -> None:
    engine = engine_for("{% for i in range(1000) %}{{ i }}{% endfor %}", render_timeout=30.0)
    assert engine.render(RenderInputs()).config.startswith("0123")
    assert engine.render(RenderInputs()).config.endswith("999")


def test_missing_fields_chain_quietly_but_unknown_variables_fail() -> None:
    assert render("[{{ extraContext.a.b.c }}]{% if extraContext.x.y %}yes{% endif %}") == "[]"
    assert render("{{ extraContext.a.b | default('d') }}") == "d"
    with pytest.raises(TemplateRenderError, match="'typo' is undefined"):
        render("{{ typo }}")
    with pytest.raises(TemplateRenderError, match="'typo' is undefined"):
        render("{% for x in typo %}{% endfor %}")
    assert render("{{ typo is defined }}") == "False"


@pytest.mark.parametrize(
    "source",
    [
        "{% set ns = namespace(s='x' * 1000000) %}{% for i in range(30) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}",
        "{% set ns = namespace(s='x' * 1000000) %}{% for i in range(30) %}{% set ns.s = ns.s + ns.s %}{% endfor %}",
        "{% set ns = namespace(s=[0] * 1000000) %}{% for i in range(30) %}{% set ns.s = ns.s + ns.s %}{% endfor %}",
        "{{ '%0999999999d' % 1 }}",
        "{{ '%.*f' % (999999, 1.0) }}",
    ],
)
def test_doubling_and_wide_formats_are_stopped(source: str) -> None:
    with pytest.raises(SandboxViolation, match="too large"):
        render(source)


def test_ordinary_concatenation_and_formatting_still_work() -> None:
    assert render("{{ 'a' ~ 1 ~ 'b' }} {{ 'a' + 'b' }} {{ [1] + [2] }} {{ 1 + 2 }} {{ '%05d|%s' % (7, 'x') }}") == (
        "a1b ab [1, 2] 3 00007|x"
    )
