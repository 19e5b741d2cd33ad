"""``parse_config_reusing`` takes the runs of unchanged chunks from the other parse and parses only the chunks
between them: the result must be what a whole parse gives, errors included."""

from __future__ import annotations

import random

import pytest

from haptic.dataplane import ConfigParseError, parse_config
from haptic.dataplane.parser import HAProxyConfig, _Parser, by_source, parse_config_reusing
from tests.support.realworld import REALWORLD_CFG

EXTRA_LINES = [
    "backend extra\n    server x 127.0.0.1:1\n",
    "defaults\n    mode tcp\n",
    "defaults named\n    mode http\n",
    "global\n    maxconn 10\n",
    "frontend fe_extra\n    bind :1234\n",
    "listen default_api_8080\n    bind :9\n",
    "backend default_echo_80\n    server a 127.0.0.1:2\n",
    "    server SRV_9 127.0.0.1:9009\n",
    "    server SRV_1 127.0.0.1:9001\n",
    "    bogus-directive 1\n",
    "bogus-section x\n",
    "# a comment\n",
    "\n",
]


def shape(config: HAProxyConfig) -> list[tuple[object, ...]]:
    return [(s.key, s.header_args, tuple(s.signature), s.implicit_defaults, tuple(s.named), tuple(s.acls),
             tuple(s.rules), [d.words for d in s.attributes]) for s in config.sections]


def outcome(parse: object) -> tuple[str, object]:
    try:
        result = parse()  # type: ignore[operator]
    except ConfigParseError as exc:
        return ("error", (exc.line, str(exc)))
    return ("ok", shape(result))


def edits(text: str, rng: random.Random) -> str:
    lines = text.splitlines(keepends=True)
    for _ in range(rng.randint(1, 6)):
        at = rng.randrange(len(lines) + 1)
        choice = rng.random()
        if choice < 0.4:
            lines.insert(at, rng.choice(EXTRA_LINES))
        elif choice < 0.7 and at < len(lines):
            del lines[at]
        elif at < len(lines):
            lines[at] = lines[at].replace("1", "2", 1)
    return "".join(lines)


@pytest.mark.parametrize("seed", range(500))
def test_a_stretch_wise_parse_equals_a_whole_parse(seed: int) -> None:
    rng = random.Random(seed)
    base_text = edits(REALWORLD_CFG, rng) if seed % 3 else REALWORLD_CFG
    try:
        base = parse_config(base_text)
    except ConfigParseError:
        base = parse_config(REALWORLD_CFG)
        base_text = REALWORLD_CFG
    text = edits(base_text, rng)
    try:
        stretched = _Parser().parse_against(text, base)
    except ConfigParseError:
        stretched = None  # the error itself comes from a whole parse (compared below)
    if stretched is not None:
        assert shape(stretched) == shape(parse_config(text))
    assert outcome(lambda: parse_config_reusing(text, base)) == outcome(lambda: parse_config(text))
    if outcome(lambda: parse_config(text))[0] == "ok":
        again = parse_config_reusing(text, base)
        chained = text.replace("timeout", "timeout ", 1) if "timeout" in text else text + "\n"
        assert outcome(lambda: parse_config_reusing(chained, again)) == outcome(lambda: parse_config(chained))


def test_sections_around_the_change_are_the_other_parse_s_and_later_parses_chain() -> None:
    base = parse_config(REALWORLD_CFG)
    text = REALWORLD_CFG.replace("127.0.0.1:9002", "127.0.0.1:9003")
    changed = parse_config_reusing(text, base)
    shared = [a is b for a, b in zip(changed.sections, base.sections, strict=True)]
    assert shared.count(False) == 1, "only the section holding the changed line is parsed again"
    assert shared[0] and shared[-1]
    back = parse_config_reusing(REALWORLD_CFG, changed)
    assert [a is b for a, b in zip(back.sections, base.sections, strict=True)] == shared
    assert shape(back) == shape(base)


def test_an_error_in_the_changed_stretch_names_its_line_in_the_new_text() -> None:
    base = parse_config(REALWORLD_CFG)
    lines = REALWORLD_CFG.splitlines(keepends=True)
    middle = len(lines) // 2
    broken = "".join([*lines[:middle], "bogus-section x\n", *lines[middle:]])
    with pytest.raises(ConfigParseError) as info:
        parse_config_reusing(broken, base)
    assert info.value.line == middle + 1


def test_the_stretch_is_all_that_is_parsed_in_a_large_config() -> None:
    backends = "".join(f"backend b{i}\n    mode http\n    server SRV_1 10.0.0.{i}:80\n" for i in range(250))
    text = "global\n    daemon\ndefaults\n    mode http\n" + backends
    base = parse_config(text)
    changed = text.replace("10.0.0.150:80", "10.0.0.151:80")
    stretched = _Parser().parse_against(changed, base)
    assert stretched is not None, "an edit inside one backend is parsed stretch-wise"
    assert shape(stretched) == shape(parse_config(changed))
    assert sum(a is not b for a, b in zip(stretched.sections, base.sections, strict=True)) == 1
    grown = text + "backend extra\n    server x 127.0.0.1:1\n"
    assert _Parser().parse_against(grown, base) is not None
    assert shape(parse_config_reusing(grown, base)) == shape(parse_config(grown))


def test_changes_spread_over_a_large_config_parse_only_the_changed_sections() -> None:
    backends = "".join(f"backend b{i}\n    mode http\n    server SRV_1 10.0.0.{i}:80\n" for i in range(250))
    text = "global\n    daemon\ndefaults\n    mode http\n" + backends
    base = parse_config(text)
    changed = text
    for i in (3, 77, 150, 249):
        changed = changed.replace(f"10.0.0.{i}:80\n", f"10.0.0.{i}:81\n")
    changed = changed.replace("backend b100\n", "backend b99x\n    mode tcp\nbackend b100\n")  # one inserted
    changed = changed.replace("backend b200\n    mode http\n    server SRV_1 10.0.0.200:80\n", "")  # one removed
    stretched = _Parser().parse_against(changed, base)
    assert stretched is not None
    assert shape(stretched) == shape(parse_config(changed))
    old = {id(s) for s in base.sections}
    fresh = [s.name for s in stretched.sections if id(s) not in old]
    assert sorted(fresh) == ["b150", "b249", "b3", "b77", "b99x"]
    again = _Parser().parse_against(text, stretched)
    assert again is not None and shape(again) == shape(base), "a walk's result serves the next walk"


def test_a_walk_finds_moved_sections_by_their_header_without_indexing_every_source() -> None:
    """A chunk out of step (a backend moved) is taken from the other parse by its header's name and whole-text
    comparison: the index of every section's source (10,000 at 10,000 backends) is not built per change."""
    backends = [f"backend b{i}\n    mode http\n    server SRV_1 10.0.0.{i}:80\n" for i in range(250)]
    text = "global\n    daemon\ndefaults\n    mode http\n" + "".join(backends)
    base = parse_config(text)
    moved = [*backends[:10], backends[200], *backends[10:200], *backends[201:]]
    moved[40] = moved[40].replace(":80", ":81")
    changed = "global\n    daemon\ndefaults\n    mode http\n" + "".join(moved)
    stretched = _Parser().parse_against(changed, base)
    assert stretched is not None
    assert shape(stretched) == shape(parse_config(changed))
    assert base.by_source_cache is None, "the walk built the other parse's index of sources"
    taken = {s.name for s in stretched.sections if any(s is b for b in base.sections)}
    assert "b200" in taken and "b39" not in taken  # moved: the other's; changed: parsed anew
    quoted = changed.replace("backend b7\n", 'backend "b7"\n')
    assert shape(parse_config_reusing(quoted, base)) == shape(parse_config(quoted))


@pytest.mark.parametrize("seed", range(200))
def test_what_a_stretch_wise_parse_works_out_from_the_other_parse_is_what_a_whole_parse_has(seed: int) -> None:
    """``by_key`` and ``by_source`` of a parse against another (copies of the other's, less what went, plus what
    was parsed), over chains of parses; and a plan over shared sections is the plan over whole parses."""
    from haptic.dataplane.parser import by_source
    from haptic.dataplane.planner import plan_parsed

    rng = random.Random(seed)
    text = REALWORLD_CFG
    config = parse_config(text)
    for _ in range(3):
        edited = edits(text, rng)
        try:
            whole = parse_config(edited)
        except ConfigParseError:
            continue
        reused = parse_config_reusing(edited, config)
        assert {k: shape_of(v) for k, v in reused.by_key.items()} == {k: shape_of(v) for k, v in whole.by_key.items()}
        assert list(reused.backends) == list(whole.backends) and list(reused.frontends) == list(whole.frontends)
        sources = by_source(reused)
        assert all(v.source == k and any(v is s for s in reused.sections) for k, v in sources.items())
        assert all(s.source in sources for s in reused.sections if s.kind not in ("global", "defaults"))
        assert plan_parsed(config, reused).operations == plan_parsed(parse_config(text), whole).operations
        text, config = edited, reused


def shape_of(section: object) -> tuple[object, ...]:
    s = section
    return (s.key, s.header_args, tuple(s.signature), s.implicit_defaults)  # type: ignore[attr-defined]


def test_a_series_of_parses_keeps_no_chain_of_earlier_configs_alive() -> None:
    import gc
    import weakref

    backends = "".join(f"backend b{i}\n    server s1 10.0.0.{i % 250}:80\n" for i in range(50))
    text = "global\n    maxconn 100\n\n" + backends
    first = parse_config(text)
    earlier = weakref.ref(first)
    current = first
    del first
    for _ in range(10):  # the same text again, as each deployment of an unchanged config parses it
        current = parse_config_reusing(text, current)
    gc.collect()
    assert earlier() is None, "the first config is still reachable from the last parse"
    whole = parse_config(current.text)
    assert set(by_source(current)) == {s.source for s in whole.sections if s.kind != "global"}


@pytest.mark.parametrize("seed", range(200))
def test_the_sections_a_stretch_wise_parse_parses_are_numbered_as_in_the_new_text(seed: int) -> None:
    """Lines after a run taken wholesale are numbered from the run's chunks' newline counts (the run's text is not
    counted again): a section parsed anew has the lines a whole parse gives it."""
    rng = random.Random(seed)
    base = parse_config(REALWORLD_CFG)
    text = edits(REALWORLD_CFG, rng)
    try:
        whole = parse_config(text)
    except ConfigParseError:
        return
    stretched = _Parser().parse_against(text, base)
    if stretched is None:
        return
    old = {id(s) for s in base.sections}
    for mine, theirs in zip(stretched.sections, whole.sections, strict=True):
        if id(mine) not in old:
            assert (mine.line, [d.line for d in mine.directives]) == (theirs.line, [d.line for d in theirs.directives])
