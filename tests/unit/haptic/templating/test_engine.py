"""Compilation, error locations, snippets, post-processing, file registry and determinism."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from haptic.templating.context import StorageDirs
from haptic.templating.engine import RenderInputs, TemplateEngine, TemplateFile, TemplateSet
from haptic.templating.errors import TemplateCompileError, TemplateFailure, TemplateRenderError
from haptic.templating.postprocess import RegexReplace, post_processor_from
from tests.unit.haptic.templating.helpers import ListStore, engine_for


def test_syntax_error_names_template_line_and_field() -> None:
    with pytest.raises(TemplateCompileError) as info:
        engine_for("ok", snippets={"backends-x": "line1\n{% if %}\n"})
    err = info.value
    assert (err.template, err.line, err.field) == ("backends-x", 2, "templateSnippets.backends-x.template")
    assert "template 'backends-x' line 2 (spec.templateSnippets.backends-x.template)" in str(err)


def test_unknown_filter_is_a_compile_error() -> None:
    with pytest.raises(TemplateCompileError, match="No filter named 'nope'") as info:
        engine_for("a\nb\n{{ x | nope }}")
    assert info.value.line == 3 and info.value.field == "haproxyConfig.template"


def test_map_template_errors_name_the_map_field() -> None:
    with pytest.raises(TemplateCompileError) as info:
        engine_for("cfg", maps={"host.map": "{% for %}"})
    assert info.value.field == "maps.host.map.template"


def test_bad_aux_filename_is_rejected() -> None:
    with pytest.raises(TemplateCompileError, match="bad filename"):
        engine_for("cfg", maps={"../evil.map": "x"})


def test_runtime_error_is_located_in_the_snippet() -> None:
    engine = engine_for("head\n{% include 'snip' %}", snippets={"snip": "one\ntwo {{ 1 // 0 }}\n"})
    with pytest.raises(TemplateRenderError) as info:
        engine.render(RenderInputs())
    assert info.value.template == "snip" and info.value.line == 2
    assert "ZeroDivisionError" in info.value.message


def test_fail_inside_snippet_is_located() -> None:
    engine = engine_for("{% include 'a' %}", snippets={"a": "\n\n{{ fail('nope: ' ~ extraContext.why) }}"})
    with pytest.raises(TemplateFailure) as info:
        engine.render(RenderInputs(extra_context={"why": "because"}))
    assert (info.value.template, info.value.line, info.value.message) == ("a", 3, "nope: because")


def test_snippets_by_glob_in_name_order_include_and_render_glob() -> None:
    snippets = {"backends-200-b": "B{{ x }}\n", "backends-100-a": "A{{ x }}\n", "other": "O\n"}
    source = (
        "{% for x in [1] %}{% for s in snippets('backends-*') %}{% include s %}{% endfor %}{% endfor %}"
        "{% set x = 2 %}{{ render_glob('backends-*') }}{{ templateSnippets | join(',') }}"
    )
    out = engine_for(source, snippets=snippets).render(RenderInputs()).config
    assert out == "A1\nB1\nA2\nB2\nbackends-100-a,backends-200-b,other"


def test_macros_can_be_imported_from_snippets() -> None:
    snippets = {"macros": "{% macro server(n) %}server s{{ n }}{% endmacro %}"}
    out = engine_for("{% import 'macros' as m %}{{ m.server(3) }}", snippets=snippets).render(RenderInputs()).config
    assert out == "server s3"


def test_post_processing_is_line_by_line_with_go_groups() -> None:
    step = RegexReplace(r"^\s+", "  ")
    assert step.apply("a\n      b\n\tc\n") == "a\n  b\n  c\n"
    assert RegexReplace(r"(\w+)=(\w+)", "$2=${1}").apply("a=b\nc=d") == "b=a\nd=c"
    engine = TemplateEngine(TemplateSet(TemplateFile("x  \n    y", (RegexReplace(r"\s+$", ""),))))
    assert engine.render(RenderInputs()).config == "x\n    y"


def test_post_processor_from_config_objects() -> None:
    step = post_processor_from(
        SimpleNamespace(type="regex_replace", params=SimpleNamespace(pattern="a", replace="b")), "p"
    )
    assert step.apply("aa") == "bb"
    with pytest.raises(ValueError, match="unsupported post-processor"):
        post_processor_from({"type": "sed", "params": {}}, "haproxyConfig.postProcessing[0]")
    with pytest.raises(ValueError, match="invalid regex"):
        post_processor_from({"type": "regex_replace", "params": {"pattern": "(", "replace": ""}}, "x")


def test_template_set_from_spec_reads_every_section() -> None:
    spec = SimpleNamespace(
        haproxy_config=SimpleNamespace(template="cfg {% include 's' %}", post_processing=[]),
        template_snippets={"s": SimpleNamespace(template="snip")},
        maps={"host.map": SimpleNamespace(template="m", post_processing=[])},
        files={"503.http": SimpleNamespace(template="f", post_processing=[])},
        ssl_certificates={"default.pem": SimpleNamespace(template="c", post_processing=[])},
    )
    result = TemplateEngine(TemplateSet.from_spec(spec)).render(RenderInputs())
    assert result.config == "cfg snip"
    assert (dict(result.aux.maps), dict(result.aux.files), dict(result.aux.certificates)) == (
        {"host.map": "m"},
        {"503.http": "f"},
        {"default.pem": "c"},
    )


def test_file_registry_paths_kinds_and_conflicts() -> None:
    source = (
        "{{ fileRegistry.register('crt-list', 'my list.txt', 'a') }} "
        "{{ fileRegistry.register('cert', 'ns/x.pem', 'P') }} "
        "{{ fileRegistry.register('map', 'h.map', 'k v') }} {{ fileRegistry.register('file', 'e.http', 'E') }}"
    )
    result = engine_for(source).render(RenderInputs(dirs=StorageDirs(ssl_certs_dir="/etc/haproxy/ssl")))
    assert result.config == "general/my_list.txt ssl/ns_x.pem maps/h.map general/e.http"
    assert dict(result.aux.crt_lists) == {"my_list.txt": "a"}
    assert dict(result.aux.certificates) == {"ns_x.pem": "P"}
    assert dict(result.aux.maps) == {"h.map": "k v"}
    with pytest.raises(TemplateFailure, match="registered twice"):
        engine_for(
            "{{ fileRegistry.register('map', 'a.map', '1') }}{{ fileRegistry.register('map', 'a.map', '2') }}"
        ).render(RenderInputs())
    with pytest.raises(TemplateFailure, match="unknown kind"):
        engine_for("{{ fileRegistry.register('exe', 'a', '1') }}").render(RenderInputs())


def test_path_resolver_outside_the_base_dir_gives_absolute_paths() -> None:
    dirs = StorageDirs(maps_dir="/etc/haproxy/maps", ssl_certs_dir="/var/lib/certs")
    out = engine_for("{{ pathResolver.get_path('a.pem', 'cert') }} {{ pathResolver.base_dir() }}").render(
        RenderInputs(dirs=dirs)
    )
    assert out.config == "/var/lib/certs/a.pem /etc/haproxy"


def test_context_exposes_stores_pods_capabilities_and_shared_state() -> None:
    objs = [{"metadata": {"namespace": "n", "name": "b"}}, {"metadata": {"namespace": "n", "name": "a"}}]
    source = (
        "{{ resources.things.list() | map(attribute='metadata.name') | join }}|"
        "{{ resources.things.fetch('n') | length }}|{{ resources.things.get_single('n', 'b').metadata.name }}|"
        "{{ controller.haproxy_pods.count() }}|{{ capabilities.supports_quic }}|{{ dataplane.maps_dir }}|"
        "{% do shared.set('k', 1) %}{% do shared.append('l', 2) %}{% do shared.mark('m', 'x') %}"
        "{{ shared.get('k') }}{{ shared.get('l') | join }}{{ shared.marked('m', 'x') }}{{ shared.has('zz') }}|"
        "{{ resources.things.apply is defined }}"
    )
    out = engine_for(source).render(
        RenderInputs(
            stores={"things": ListStore(objs)},
            haproxy_pods=ListStore(objs[:1]),
            capabilities={"supports_quic": False},
        )
    )
    assert out.config == "ab|2|b|1|False|/etc/haproxy/maps|12TrueFalse|False", "store writes are not reachable"


def _render_twice(source: str, inputs: RenderInputs) -> tuple[str, str]:
    engine = engine_for(source)
    return engine.render(inputs).config, engine.render(inputs).config


def test_render_is_deterministic_and_renders_do_not_share_state() -> None:
    source = (
        "{% for k in extraContext.d | keys %}{{ k }}{% endfor %}"
        "{% do shared.append('x', 1) %}{{ shared.get('x') | length }}"
    )
    first, second = _render_twice(source, RenderInputs(extra_context={"d": {"b": 1, "a": 2}}))
    assert first == second == "ab1"


def test_current_config_accepts_text_and_objects() -> None:
    text = "backend be\n    server SRV_1 10.0.0.1:80\n    server SRV_2 127.0.0.1:1 disabled\n"
    source = (
        "{% set b = currentConfig.backends['be'] %}{{ b.servers['SRV_1'].endpoint }} {{ b.servers['SRV_2'].disabled }}"
    )
    holder: Any = SimpleNamespace(spec=SimpleNamespace(content=text))
    for value in (text, holder):
        assert engine_for(source).render(RenderInputs(current_config=value)).config == "10.0.0.1:80 True"
    assert engine_for("{{ currentConfig is none }}").render(RenderInputs()).config == "True"


def test_render_result_repr_never_shows_file_contents() -> None:
    source = "{{ fileRegistry.register('cert', 'a.pem', '-----BEGIN PRIVATE KEY-----secret') }}"
    result = engine_for(source).render(RenderInputs())
    assert "secret" not in repr(result) and "PRIVATE" not in repr(result)
    assert "a.pem" in repr(result)


def test_what_a_render_keeps_goes_to_the_oldest_generation_and_cycles_stay_collectable() -> None:
    import gc
    import weakref

    class Cycle:
        me: Any = None

    made: list[Any] = []

    def cycle() -> str:
        obj = Cycle()
        obj.me = obj  # garbage once the render is over, found only by the cyclic collector
        made.append(weakref.ref(obj))
        return ""

    engine = engine_for("{% for i in range(300) %}{{ shared.append('kept', [i]) }}{% endfor %}{{ cycle() }}")
    engine.env.globals["cycle"] = cycle
    assert gc.isenabled()
    result = engine.render(RenderInputs())
    context = result.context
    # no young collection scans the render's survivors one generation at a time
    assert any(o is context for o in gc.get_objects(generation=2))
    assert gc.isenabled()
    assert made and made[0]() is not None
    gc.collect()
    assert made[0]() is None


def test_a_render_during_a_held_freeze_leaves_it_as_it_was() -> None:
    import gc

    engine = engine_for("{% for i in range(300) %}{{ shared.append('kept', [i]) }}{% endfor %}")
    gc.freeze()  # someone else's (an embedding program's): neither released nor joined
    try:
        held = gc.get_freeze_count()
        result = engine.render(RenderInputs())
        assert 0 < gc.get_freeze_count() <= held  # not released, not joined (a frozen object may have died)
        assert not any(o is result.context for o in gc.get_objects(generation=2))
    finally:
        gc.unfreeze()
    assert gc.get_freeze_count() == 0
