"""``parse_by_pieces``: the chunks of the pieces two texts' ``backend`` cuts share are the other parse's, only those
of the differing pieces are parsed, in place. The result must be what a whole parse gives (sections, line numbers,
errors), and the planner's comparison of the parsed places alone what comparing every place gives."""

from __future__ import annotations

import random

import pytest

from haptic.dataplane import ConfigParseError, parse_config
from haptic.dataplane.parser import HAProxyConfig, _Parser, parse_config_reusing
from haptic.dataplane.planner import _differing, plan_parsed
from tests.unit.haptic.dataplane.test_parser_stretches import outcome, shape

HEAD = (
    "# preamble comment\n"
    "global\n    maxconn 100\n"
    "defaults\n    mode http\n    timeout connect 5s\n"
    "frontend fe\n    bind :80\n    use_backend %[var(txn.backend)]\n"
)


def backend(i: int, servers: int = 3, port: int = 80) -> str:
    lines = "".join(f"    server s{j} 10.{i // 250}.{i % 250}.{j + 1}:{port} check\n" for j in range(servers))
    return f"backend be_{i}\n    balance roundrobin\n{lines}"


def config(count: int, tail: str = "") -> str:
    return HEAD + "".join(backend(i) for i in range(count)) + tail


#: what an edit puts in a backend piece: most keep its chunks (a piece-wise parse), some do not (a walk then)
PIECE_EDITS = [
    lambda text: text.replace(":80 check", ":81 check", 1),  # a server moves
    lambda text: text.replace("    balance roundrobin\n", "    balance leastconn\n", 1),
    lambda text: text + "    option httpchk\n",  # a line added at the piece's end
    lambda text: text.replace("    server s0", "    server s9", 1),  # a server renamed
    lambda text: text + "    # a comment\n",
    lambda text: text + "defaults\n    mode tcp\n",  # a chunk more, and the defaults of the backends after it
    lambda text: text + "backend be_0\n    server x 127.0.0.1:1\n",  # a name the first piece's backend has
    lambda text: text + "listen be_1\n    bind :9\n",  # a name clash across kinds
    lambda text: text.replace("backend be_", "backend\tbe_", 1),  # no longer cut there
    lambda text: text + "    bogus-directive 1\n",
    lambda text: text.replace("    balance roundrobin\n", "    balance roundrobin\n  server bad\n", 1),  # an error
    lambda text: text.replace("10.0.", "10.0.\x00", 1),
]


def edited(text: str, rng: random.Random, edits: int) -> str:
    """``text`` with ``edits`` of its backend pieces changed (never the first piece)."""
    pieces = text.split("\nbackend ")
    for _ in range(edits):
        k = rng.randrange(1, len(pieces))
        last = k == len(pieces) - 1
        body = "backend " + pieces[k] + ("" if last else "\n")
        body = rng.choice(PIECE_EDITS)(body)
        assert body.startswith("backend") or "\x00" in body or "\t" in body
        pieces[k] = body[len("backend "):] if body.startswith("backend ") else body[len("backend"):]
        if not last:
            pieces[k] = pieces[k][:-1] if pieces[k].endswith("\n") else pieces[k]
    return "\nbackend ".join(pieces)


def numbering(config: HAProxyConfig) -> list[tuple[int, list[int]]]:
    return [(s.line, [d.line for d in s.directives]) for s in config.sections]


@pytest.mark.parametrize("seed", range(300))
def test_a_piece_wise_parse_equals_a_whole_parse(seed: int) -> None:
    rng = random.Random(seed)
    base_text = config(rng.randint(2, 40), tail=rng.choice(["", "backend tail\n    server t 127.0.0.1:9\n",
                                                            "peers mypeers\n    peer a 127.0.0.1:1024\n"]))
    base = parse_config(base_text)
    text = edited(base_text, rng, rng.randint(1, 4))
    try:
        pieces = _Parser().parse_by_pieces(text, base)
    except ConfigParseError:
        pieces = None  # an error in a changed piece: the whole parse reports it (compared below)
    if pieces is not None:
        whole = parse_config(text)
        assert shape(pieces) == shape(whole)
        assert pieces.by_key.keys() == whole.by_key.keys()
        old = {id(s) for s in base.sections}
        fresh = [(mine, theirs) for mine, theirs in zip(pieces.sections, whole.sections, strict=True)
                 if id(mine) not in old]
        # the sections parsed anew are numbered as in the new text (shared ones keep the other text's numbers)
        assert [numbering_of(m) for m, _ in fresh] == [numbering_of(t) for _, t in fresh]
        assert pieces.final_state == whole.final_state
        assert (pieces.lengths, pieces.newlines) == (whole.lengths, whole.newlines)
    assert outcome(lambda: parse_config_reusing(text, base)) == outcome(lambda: parse_config(text))


def numbering_of(section: object) -> tuple[int, list[int]]:
    return (section.line, [d.line for d in section.directives])  # type: ignore[attr-defined]


def test_only_the_changed_pieces_are_parsed_and_the_rest_is_the_other_parse_s() -> None:
    base_text = config(2000)
    base = parse_config(base_text)
    text = base_text.replace("10.0.7.1:80", "10.0.7.1:81").replace("10.0.77.2:80", "10.0.77.2:81")
    parser = _Parser()
    parsed = parser.parse_by_pieces(text, base)
    assert parsed is not None
    assert [s.name for s in parser.sections] == ["be_7", "be_77"]  # the only sections this parse made
    changed = [i for i, (a, b) in enumerate(zip(parsed.sections, base.sections, strict=True)) if a is not b]
    assert [parsed.sections[i].name for i in changed] == ["be_7", "be_77"]
    assert shape(parsed) == shape(parse_config(text))
    # a second change parses piece-wise from the first (the marks of the pieces are handed on, not worked out again)
    again = _Parser().parse_by_pieces(text.replace("10.0.9.3:80", "10.0.9.3:82"), parsed)
    assert again is not None and again.piece_marks is parsed.piece_marks


def test_a_change_before_the_first_backend_or_of_the_pieces_count_is_walked() -> None:
    base_text = config(30)
    base = parse_config(base_text)
    assert _Parser().parse_by_pieces(base_text.replace("maxconn 100", "maxconn 200"), base) is None
    assert _Parser().parse_by_pieces(base_text + backend(30), base) is None
    # ... and parse_config_reusing still gives what a whole parse gives
    for text in (base_text.replace("maxconn 100", "maxconn 200"), base_text + backend(30)):
        assert shape(parse_config_reusing(text, base)) == shape(parse_config(text))


def test_defaults_a_changed_piece_brings_in_fall_back_to_the_walk() -> None:
    """A ``defaults`` section added in a piece changes what the backends after it inherit: not piece-wise."""
    base_text = config(10)
    base = parse_config(base_text)
    text = base_text.replace("backend be_5\n", "defaults\n    mode tcp\nbackend be_5\n")
    assert _Parser().parse_by_pieces(text, base) is None
    result = parse_config_reusing(text, base)
    assert [s.implicit_defaults for s in result.sections] == [s.implicit_defaults for s in parse_config(text).sections]


@pytest.mark.parametrize("seed", range(150))
def test_the_planner_compares_the_parsed_places_alone_as_it_would_compare_every_place(seed: int) -> None:
    rng = random.Random(seed)
    base_text = config(rng.randint(2, 40))
    current = parse_config(base_text)
    text = edited(base_text, rng, rng.randint(1, 4))
    try:
        desired = _Parser().parse_by_pieces(text, current)
    except ConfigParseError:
        return  # (what the whole parse says of it: the test above)
    if desired is None:
        return
    assert desired.derived is not None and desired.derived[0]() is current
    added, left = _differing(desired, current)
    everywhere = HAProxyConfig(list(desired.sections), desired.text)  # the same sections, no derivation
    all_added, all_left = _differing(everywhere, current)
    assert [id(s) for s in added] == [id(s) for s in all_added]
    assert [id(s) for s in left] == [id(s) for s in all_left]
    assert plan_parsed(current, desired) == plan_parsed(parse_config(base_text), parse_config(text))


def test_a_derivation_names_its_config_weakly() -> None:
    base_text = config(5)
    current = parse_config(base_text)
    desired = _Parser().parse_by_pieces(base_text.replace("10.0.3.1:80", "10.0.3.1:81"), current)
    assert desired is not None
    desired.origin = None
    desired.by_source_from = None
    del current
    assert desired.derived is not None and desired.derived[0]() is None


@pytest.mark.parametrize("header", ["defaults side", "defaults"])
def test_a_piece_whose_chunk_turns_into_defaults_falls_back_to_the_walk(header: str) -> None:
    """As many chunks as before, but the defaults in force after the piece differ: every backend after it
    inherits another one, so the pieces the cuts share are not the other parse's."""
    base_text = config(10).replace("backend be_6\n", "frontend side\n    bind :5\nbackend be_6\n")
    base = parse_config(base_text)
    text = base_text.replace("frontend side\n    bind :5\n", f"{header}\n    mode tcp\n")
    assert _Parser().parse_by_pieces(text, base) is None
    whole = parse_config(text)
    assert shape(parse_config_reusing(text, base)) == shape(whole)
    assert whole.by_key[("backend", "be_7")].implicit_defaults != base.by_key[("backend", "be_7")].implicit_defaults


@pytest.mark.parametrize("seed", range(8))
def test_sections_by_key_through_a_long_series_of_parses_are_a_whole_parse_s(seed: int) -> None:
    """Each config's sections by key are the last one's shared dict and the keys changed since (flattened into a
    dict of its own past a sixteenth, or 64): through backends changed, added, taken out and added again, ``find``,
    ``by_key`` and ``key_count`` say what a whole parse's dict says."""
    rng = random.Random(seed)
    alive = list(range(300))
    ports = dict.fromkeys(alive, 80)
    text = HEAD + "".join(backend(i, port=ports[i]) for i in alive)
    config = parse_config(text)
    flattened = 0
    for _ in range(120):
        for _ in range(rng.randint(1, 3)):
            choice = rng.random()
            if choice < 0.6:
                ports[rng.choice(alive)] = rng.randint(81, 99)
            elif choice < 0.8 and len(alive) > 10:
                alive.remove(rng.choice(alive))
            else:
                new = rng.randrange(400)
                if new not in alive:
                    alive.append(new)
                    ports[new] = 80
        text = HEAD + "".join(backend(i, port=ports.get(i, 80)) for i in sorted(alive))
        shared = config._keys
        config = parse_config_reusing(text, config)
        flattened += config._keys is not shared and not config._changed_keys
        whole = parse_config(text)
        assert config.key_count == len(whole.by_key)
        assert {k: shape_of(s) for k, s in config.by_key.items()} == {k: shape_of(s) for k, s in whole.by_key.items()}
        for key in [*whole.by_key, ("backend", "be_999"), ("backend", f"be_{rng.randrange(400)}")]:
            found, expected = config.find(key), whole.by_key.get(key)
            assert (found is None) == (expected is None) and (found is None or shape_of(found) == shape_of(expected))
    assert flattened  # the overlay was given a dict of its own along the way


def shape_of(section: object) -> tuple[object, ...]:
    return (section.key, tuple(section.signature))  # type: ignore[attr-defined]


def chain_texts(rng: random.Random, steps: int) -> list[str]:
    ports: dict[int, int] = {}
    texts = []
    for _ in range(steps):
        for _ in range(rng.randint(1, 3)):
            ports[rng.randrange(1, 400)] = rng.randint(81, 99)
        texts.append(HEAD + "".join(backend(i, port=ports.get(i, 80)) for i in range(400)))
    return texts


@pytest.mark.parametrize("seed", range(5))
def test_a_config_let_go_lends_its_lists_to_the_next_parse_and_one_still_held_does_not(seed: int) -> None:
    from haptic.dataplane import parser

    texts = chain_texts(random.Random(seed), 30)
    # as the deployer holds them: the last config only
    before = parser.recycled
    config = parse_config(texts[0])
    for text in texts[1:]:
        config = parse_config_reusing(text, config)
        assert shape(config) == shape(parse_config(text))
        assert (config.lengths, config.newlines) == (parse_config(text).lengths, parse_config(text).newlines)
    assert parser.recycled - before >= len(texts) - 3  # from the third parse on, the one before last is let go
    # every config held (a pod's cache, a caller): none is emptied, each is still its text's parse
    before = parser.recycled
    held = [parse_config(texts[0])]
    for text in texts[1:]:
        held.append(parse_config_reusing(text, held[-1]))
    assert parser.recycled == before
    for text, kept in zip(texts, held, strict=True):
        assert shape(kept) == shape(parse_config(text))


def test_a_list_of_the_config_let_go_held_elsewhere_keeps_it_from_being_taken_over() -> None:
    from haptic.dataplane import parser

    texts = chain_texts(random.Random(3), 4)
    first = parse_config(texts[0])
    kept_sections = first.sections  # someone reads the first config's sections
    second = parse_config_reusing(texts[1], first)
    del first
    before = parser.recycled
    third = parse_config_reusing(texts[2], second)
    assert parser.recycled == before and third.sections is not kept_sections
    assert [s.key for s in kept_sections] == [s.key for s in parse_config(texts[0]).sections]


def test_without_exact_reference_counts_nothing_is_taken_over(monkeypatch: pytest.MonkeyPatch) -> None:
    from haptic.dataplane import parser

    monkeypatch.setattr(parser, "_EXACT_COUNTS", False)
    texts = chain_texts(random.Random(9), 6)
    before = parser.recycled
    config = parse_config(texts[0])
    for text in texts[1:]:
        config = parse_config_reusing(text, config)
        assert shape(config) == shape(parse_config(text))
    assert parser.recycled == before
