"""Bad configuration text gives a ConfigParseError naming the line."""

from __future__ import annotations

import pytest

from haptic.dataplane import ConfigParseError, parse_config, plan

GOOD = "backend web\n  server s1 127.0.0.1:80\n"


@pytest.mark.parametrize(
    ("text", "line", "fragment"),
    [
        ("backend web\n  server s1\n", 2, "server 's1' in backend 'web' has no address"),
        ("backend web\n  server s1 check inter 2s\n", 2, "has no address"),
        ("listen app\n  bind :80\n  server s1\n", 3, "has no address"),
        ("backend web\n  server-template srv 1-3\n", 2, "server-template 'srv' in backend 'web' has no address"),
        ("backend web\n  server\n", 2, "server line without a name"),
        ("ring buf\n  server log\n", 2, "has no address"),
        ("resolvers dns\n  nameserver ns1\n", 2, "nameserver 'ns1' in resolvers 'dns' has no address"),
        ("peers p\n  peer one\n", 2, "peer 'one' in peers 'p' has no address"),
        ("mailers m\n  mailer smtp\n", 2, "has no address"),
        ("frontend fe\n  bind\n", 2, "bind line without a name"),
        ("frontend fe\n  acl\n", 2, "acl line without a name"),
        ("backend web\n  server s1 127.0.0.1:80\n  server s1 127.0.0.1:81\n", 3, "duplicate server 's1'"),
        ("backend web\n  mode http\n\nbackend web\n  mode tcp\n", 4, "duplicate backend 'web'"),
        ("frontend fe\n  bind :80\nfrontend fe\n  bind :81\n", 3, "duplicate frontend 'fe'"),
        ("listen app\n  bind :80\nbackend app\n  mode http\n", 3, "duplicate backend 'app'"),
        ("frontend app\n  bind :80\nlisten app\n  bind :81\n", 3, "duplicate listen 'app'"),
        ("defaults d\n  mode http\ndefaults d\n  mode tcp\n", 3, "duplicate defaults 'd'"),
        ("frontend fe\n  bind :80\n  bind :80\n", 3, "duplicate bind ':80'"),
        ("userlist u\n  user a\n  user a\n", 3, "duplicate user 'a'"),
        ("backend\n  mode http\n", 1, "'backend' section without a name"),
        ("backendd web\n  mode http\n", 1, "unknown section keyword 'backendd'"),
        ("backend web\n  mode http\nbakend api\n  mode http\n", 3, "unknown section keyword 'bakend'"),
        ("  mode http\nbackend web\n", 1, "'mode' appears before any section keyword"),
        ('frontend fe\n  http-request set-header X "unterminated\n', 2, 'unmatched " quote'),
        ("frontend fe\n  http-request set-header X 'open\n", 2, "unmatched ' quote"),
        ("frontend fe\n  http-request set-header X a\\", 2, "dangling backslash"),
        ("backend web\n  mode http\n  balance \x00\n", 3, "NUL byte"),
    ],
)
def test_bad_input_names_the_line(text: str, line: int, fragment: str) -> None:
    with pytest.raises(ConfigParseError) as info:
        parse_config(text)
    error = info.value
    assert error.line == line
    assert fragment in error.message
    assert str(error).startswith(f"line {line}: ")


def test_plan_reports_errors_of_either_side() -> None:
    bad = "backend web\n  server s1 127.0.0.1:80\n  server s1 127.0.0.1:81\n"
    with pytest.raises(ConfigParseError) as desired_error:
        plan(GOOD, bad)
    assert desired_error.value.line == 3
    with pytest.raises(ConfigParseError) as current_error:
        plan("backend web\n  server s9\n", GOOD)
    assert current_error.value.line == 2


def test_peers_local_server_needs_no_address() -> None:
    config = parse_config("peers p\n  server local\n  server remote 127.0.0.1:1024\n")
    peers = config.section("peers", "p")
    assert peers is not None and list(peers.named["server"]) == ["local", "remote"]


def test_parse_error_pickles_with_its_line() -> None:
    import pickle

    error = ConfigParseError(4, "broken")
    copy = pickle.loads(pickle.dumps(error))
    assert (copy.line, copy.message, str(copy)) == (4, "broken", "line 4: broken")
