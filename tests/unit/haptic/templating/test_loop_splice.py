"""A fragment loop's item texts are joined into ``haproxy.cfg``'s text by the engine (one join, not the loop's text
joined and copied again) only where its output goes untouched into the output: ``splice_safe`` decides from the
templates, and a spliced render is what a render without fragments gives."""

from __future__ import annotations

from typing import Any

import pytest

from haptic.templating.engine import RenderInputs, TemplateEngine
from tests.unit.haptic.templating.helpers import engine_for

LOOP = "{% fragment for x in extraContext.rows %}{{ x.name }} {{ x.port }}\n{% endfragment %}"


def items(count: int, changed: int | None = None) -> list[dict[str, Any]]:
    return [{"name": f"b{i}", "port": 81 if i == changed else 80} for i in range(count)]


@pytest.mark.parametrize(("source", "snippets"), [
    (f"head\n{LOOP}tail\n", {}),
    (f"{{% if true %}}{{% for y in [1] %}}{{% with z = 1 %}}{LOOP}{{% endwith %}}{{% endfor %}}{{% endif %}}", {}),
    ("head\n{% include 'loop' %}{% for s in ['other'] %}{% include s %}{% endfor %}", {"loop": LOOP, "other": "o\n"}),
    ("{% fragment %}{% include 'plain' %}{% endfragment %}{% include 'loop' %}", {"loop": LOOP, "plain": "p\n"}),
])
def test_loops_whose_output_goes_into_the_output_are_spliced(source: str, snippets: dict[str, str]) -> None:
    assert engine_for(source, snippets=snippets).splice_loops


@pytest.mark.parametrize(("source", "snippets"), [
    ("{% macro m() %}" + LOOP + "{% endmacro %}{{ m() }}", {}),  # a macro's output is its return value
    ("{% set x %}" + LOOP + "{% endset %}{{ x }}{{ x | length }}", {}),
    ("{% filter upper %}" + LOOP + "{% endfilter %}", {}),
    ("{% fragment %}" + LOOP + "{% endfragment %}", {}),  # an enclosing fragment keeps the text
    ("{% for y in [1] recursive %}" + LOOP + "{% endfor %}", {}),
    ("{% set x %}{% include 'loop' %}{% endset %}{{ x | length }}", {"loop": LOOP}),
    ("{% set x %}{% for s in ['loop'] %}{% include s %}{% endfor %}{% endset %}{{ x }}", {"loop": LOOP}),
    ("{% import 'loop' as m %}x", {"loop": LOOP}),
    ("{% extends 'base' %}", {"base": LOOP}),
    ("no loop at all", {}),
])
def test_loops_whose_output_may_be_kept_or_changed_are_not(source: str, snippets: dict[str, str]) -> None:
    assert not engine_for(source, snippets=snippets).splice_loops


def rendered(engine: TemplateEngine, extra: dict[str, Any]) -> str:
    return engine.render(RenderInputs(extra_context=extra)).config


def test_a_spliced_render_is_a_render_without_fragments_through_changes() -> None:
    source = "global\n{% for pass in [1, 2] %}" + LOOP + "{% endfor %}{% include 'again' %}end\n"
    engine = engine_for(source, snippets={"again": LOOP})
    plain = engine_for(source, snippets={"again": LOOP}, fragments=False)
    assert engine.splice_loops
    for count, changed in [(50, None), (50, 7), (50, None), (51, 3), (20, 19)]:
        extra = {"rows": items(count, changed)}
        assert rendered(engine, extra) == rendered(plain, extra)
        # spliced: no loop joined its item texts into a text of its own
        assert all(record._joined is None for record in engine.fragment_cache._loops_current.values())
    assert engine.splice_loops  # every marker was found in the output


def test_a_marker_found_elsewhere_than_in_the_output_is_replaced_and_splicing_stops() -> None:
    """``splice_safe`` rules this template out; forced on, the render still gives the right text (the marker, inside a
    larger text, replaced by the loop's), and the engine splices no more."""
    source = "{% set x %}[" + LOOP + "]{% endset %}{{ x }}"
    engine = engine_for(source)
    assert not engine.splice_loops
    engine.splice_loops = True
    extra = {"rows": items(5)}
    assert rendered(engine, extra) == rendered(engine_for(source, fragments=False), extra)
    assert not engine.splice_loops


def test_one_loop_over_other_items_twice_in_a_render_keeps_the_texts_it_handed_out_first() -> None:
    """The same loop (one key) run twice in one render over other items changes its item texts in place: what the
    first run handed out is joined before the second run."""
    source = ("{% for group in extraContext.groups %}{% fragment for x in group %}{{ x.name }} {{ x.port }}\n"
              "{% endfragment %}--\n{% endfor %}")
    engine, plain = engine_for(source), engine_for(source, fragments=False)
    assert engine.splice_loops
    for first, second in [(items(6), items(6, 2)), (items(6, 1), items(4)), (items(3), items(6, 5))]:
        extra = {"groups": [first, second]}
        assert rendered(engine, extra) == rendered(plain, extra)


def test_one_loop_whose_second_run_renders_other_texts_keeps_each_run_s_output() -> None:
    """Run twice in one render over the same items, a loop's second run sees the first run's ``first_seen`` claims
    and renders other texts: each run's output is its own (the first run's texts are not those of the second)."""
    source = ("{% for pass in [1, 2] %}{% fragment for x in extraContext.rows %}"
              "{% if first_seen('k', x.name) %}first {{ x.name }}{% else %}again {{ x.name }}{% endif %}\n"
              "{% endfragment %}{% endfor %}")
    engine, plain = engine_for(source), engine_for(source, fragments=False)
    assert engine.splice_loops
    for changed in (None, 2, None, 4):
        extra = {"rows": items(6, changed)}
        assert rendered(engine, extra) == rendered(plain, extra)
        assert "first b0" in rendered(plain, extra) and "again b0" in rendered(plain, extra)


def test_one_loop_rerendering_its_items_in_place_in_a_second_run_keeps_the_first_run_s_output() -> None:
    """Items that cannot be cached (``shared.setdefault``) are rendered again at every run of their loop, in place in
    the loop's record; run twice in one render with ``shared`` changed in between, the second run writes other
    texts into the very list the first run handed out for splicing: the first run's output stays its own."""
    source = ("{% for r in [1, 2] %}{% do shared.set('round', r) %}{% fragment for x in extraContext.rows %}"
              "{% do shared.setdefault('z', 0) %}{{ x.name }} in {{ shared.get('round') }}\n"
              "{% endfragment %}{% endfor %}")
    engine, plain = engine_for(source), engine_for(source, fragments=False)
    assert engine.splice_loops
    for changed in (None, 2, None):
        extra = {"rows": items(4, changed)}
        text = rendered(engine, extra)
        assert text == rendered(plain, extra)
        assert "b0 in 1" in text and "b0 in 2" in text
