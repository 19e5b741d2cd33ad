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
