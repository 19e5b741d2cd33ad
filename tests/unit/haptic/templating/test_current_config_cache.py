"""The incremental reader of the deployed config gives what a full parse gives, parsing only changes."""

from __future__ import annotations

from haptic.templating.current_config import parse_current_config
from haptic.templating.current_config_cache import CurrentConfigCache


def _config(servers: dict[str, list[str]]) -> str:
    parts = ["global\n    maxconn 10\n\ndefaults\n    mode http\n\nfrontend http\n    bind :80\n"]
    for name, addresses in servers.items():
        lines = [f"    server SRV_{i} {a}" for i, a in enumerate(addresses, 1)]
        parts.append(f"backend {name}\n    balance roundrobin\n" + "\n".join(lines) + "\n")
    parts.append("frontend stats\n    bind :8404\n")
    return "\n".join(parts)


def _shape(config: object) -> dict[str, dict[str, tuple[str, int | None, bool]]]:
    backends = getattr(config, "backends", {})
    return {b: {s.name: (s.address, s.port, s.disabled) for s in backend.servers.values()}
            for b, backend in backends.items()}


def test_incremental_read_equals_full_parse_and_reparses_only_changed_backends() -> None:
    cache = CurrentConfigCache()
    first = _config({f"be_{i}": [f"10.0.0.{i}:80", "127.0.0.1:1 disabled"] for i in range(50)})
    read = cache.read(first)
    assert read is not None and _shape(read) == _shape(parse_current_config(first))
    assert cache.read(first) is read, "the same text gives the same object (the engine caches by identity)"
    parsed = cache.parsed_pieces
    changed = first.replace("server SRV_2 127.0.0.1:1 disabled\n\nbackend be_7\n",
                            "server SRV_2 10.9.9.9:80\n\nbackend be_7\n")
    assert changed != first
    again = cache.read(changed)
    assert again is not None and _shape(again) == _shape(parse_current_config(changed))
    assert again.backends["be_6"].servers["SRV_2"].address == "10.9.9.9"
    assert cache.parsed_pieces - parsed == 1, "only the changed backend was parsed again"
    assert again.text == changed
    assert cache.read(None) is None and cache.read("  \n") is None


def test_the_deployed_config_is_read_with_the_dataplane_parser_lines_split_at_newlines_only() -> None:
    from haptic.dataplane.parser import parse_config
    from haptic.templating.current_config import parse_current_config

    text = ("global\n    maxconn 10\n\ndefaults\n    mode http\n\nbackend web\n"
            "    http-request set-header X-A \"a\u2028    server evil 6.6.6.6:80\"\n"
            "    server SRV_1 10.0.0.1:80\n")
    current = parse_current_config(text)
    assert list(current.backends["web"].servers) == ["SRV_1"]  # no phantom "server evil"
    assert list(parse_config(text).section("backend", "web").servers) == ["SRV_1"]


def test_every_kind_of_edit_reads_as_a_full_parse_and_names_what_changed() -> None:
    servers = {f"be_{i}": [f"10.0.0.{i}:80", "127.0.0.1:1 disabled"] for i in range(8)}
    cache = CurrentConfigCache()
    last = cache.read(_config(servers))
    edits = [
        lambda s: s.update(be_3=["10.9.9.9:80"]),  # a server changes: read in place
        lambda s: s.pop("be_5"),  # a backend goes
        lambda s: s.update(be_new=["10.1.1.1:80"]),  # one comes
        lambda s: s.update({"be_0": s.pop("be_0")}),  # one moves to the end
        lambda s: (s.pop("be_1"), s.update(be_renamed=["10.0.0.1:80", "127.0.0.1:1 disabled"])),
    ]
    for edit in edits:
        before = dict(servers)
        edit(servers)
        text = _config(servers)
        read = cache.read(text)
        assert read is not None and last is not None
        assert _shape(read) == _shape(parse_current_config(text)) and list(read.backends) == list(servers)
        changed = read.changed_since(last)
        assert changed is not None
        differs = {b for b in set(before) | set(servers) if before.get(b) != servers.get(b)}
        assert differs <= changed, "every backend whose servers differ is named"
        assert all(read.backends[b] is last.backends[b] for b in servers if b not in changed)
        assert last.changed_since(None) is None
        last = read
    assert cache.read(_config(servers)) is last, "an equal text is the same config"


def test_a_backend_renamed_in_place_is_parsed_once_and_reads_as_a_full_parse() -> None:
    cache = CurrentConfigCache()
    first = _config({f"be_{i}": [f"10.0.0.{i}:80"] for i in range(20)})
    cache.read(first)
    parsed = cache.parsed_pieces
    renamed = first.replace("backend be_7\n", "backend be_new\n")
    read = cache.read(renamed)
    assert read is not None and _shape(read) == _shape(parse_current_config(renamed))
    assert "be_7" not in read.backends and "be_new" in read.backends
    assert cache.parsed_pieces - parsed == 1, "the renamed backend's piece was parsed more than once"


def test_a_missing_or_blank_deployed_config_reads_as_none() -> None:
    cache = CurrentConfigCache()
    for text in (None, "", " ", "\n\t \r\n", "\x1c\u3000"):
        assert cache.read(text) is None, repr(text)
    assert cache.read(_config({"be": ["10.0.0.1:80"]})) is not None


def test_equal_servers_of_many_backends_are_one_object() -> None:
    """A large config's backends repeat the same disabled slots: each distinct server is held once (memory at
    10,000 backends), and sharing never mixes up two servers that differ in any field."""
    text = _config({f"be_{i}": [f"10.0.0.{i}:80", "127.0.0.1:1 disabled", "127.0.0.1:1"] for i in range(20)})
    read = parse_current_config(text)
    placeholders = {id(read.backends[f"be_{i}"].servers["SRV_2"]) for i in range(20)}
    assert len(placeholders) == 1
    assert len({id(read.backends[f"be_{i}"].servers["SRV_1"]) for i in range(20)}) == 20
    enabled = read.backends["be_3"].servers["SRV_3"]
    assert (enabled.address, enabled.port, enabled.disabled) == ("127.0.0.1", 1, False)
    assert read.backends["be_3"].servers["SRV_2"].disabled
