"""Parsing haproxy.cfg into sections and their children."""

from __future__ import annotations

import pytest

from haptic.dataplane import ConfigParseError, parse_config
from haptic.dataplane.parser import _Parser, parse_config_reusing
from tests.support.realworld import REALWORLD_CFG

EVERY_SECTION = """\
global
  daemon
defaults
  mode http
defaults named_defs
  timeout connect 5s
frontend fe from named_defs
  bind :80
listen stats
  bind :9000
  stats enable
  server local 127.0.0.1:9001
backend web
  server s1 127.0.0.1:81
peers mypeers
  peer haproxy1 127.0.0.1:10000
  server local
resolvers dns
  nameserver ns1 127.0.0.1:53
mailers alerts
  timeout mail 20s
  mailer smtp1 127.0.0.1:25
userlist users
  user admin password $5$abc
  group ops users admin
cache pagecache
  total-max-size 4
  max-age 60
http-errors site
  errorfile 503 /etc/haproxy/errors/503.http
ring buf
  format rfc3164
  size 32764
  server syslog 127.0.0.1:514
program api
  command /usr/bin/true
log-forward sylog
  dgram-bind 127.0.0.1:1514
  bind 127.0.0.1:1514
  log global
fcgi-app php
  docroot /var/www
crt-store web
  load crt site.pem
"""


def test_every_section_kind_parses_in_file_order() -> None:
    config = parse_config(EVERY_SECTION)
    kinds = [(s.kind, s.name) for s in config.sections]
    assert kinds == [
        ("global", None),
        ("defaults", "unnamed_defaults_1"),
        ("defaults", "named_defs"),
        ("frontend", "fe"),
        ("listen", "stats"),
        ("backend", "web"),
        ("peers", "mypeers"),
        ("resolvers", "dns"),
        ("mailers", "alerts"),
        ("userlist", "users"),
        ("cache", "pagecache"),
        ("http-errors", "site"),
        ("ring", "buf"),
        ("program", "api"),
        ("log-forward", "sylog"),
        ("fcgi-app", "php"),
        ("crt-store", "web"),
    ]


def test_typed_accessors() -> None:
    config = parse_config(EVERY_SECTION)
    assert config.global_section is not None
    assert config.global_section.attributes[0].text == "daemon"
    assert [d.name for d in config.defaults] == ["unnamed_defaults_1", "named_defs"]
    assert list(config.frontends) == ["fe"]
    assert list(config.backends) == ["web"]
    assert list(config.listens) == ["stats"]
    assert config.section("resolvers", "dns") is config.sections[7]
    assert config.section("backend", "nope") is None
    assert [s.name for s in config.of_kind("defaults")] == ["unnamed_defaults_1", "named_defs"]


def test_header_arguments_are_kept() -> None:
    config = parse_config(EVERY_SECTION)
    assert config.frontends["fe"].header_args == ("from", "named_defs")


def test_unnamed_defaults_with_from_still_get_generated_names() -> None:
    config = parse_config("defaults base\n  mode http\ndefaults from base\n  mode tcp\n")
    named = [(d.name, d.header_args) for d in config.defaults]
    assert named == [("base", ()), ("unnamed_defaults_1", ("from", "base"))]


def test_named_children_of_service_sections() -> None:
    config = parse_config(EVERY_SECTION)
    peers = config.section("peers", "mypeers")
    assert peers is not None
    assert list(peers.named["peer"]) == ["haproxy1"]
    assert list(peers.named["server"]) == ["local"]  # the local peer needs no address
    resolvers = config.section("resolvers", "dns")
    assert resolvers is not None and list(resolvers.named["nameserver"]) == ["ns1"]
    mailers = config.section("mailers", "alerts")
    assert mailers is not None
    assert list(mailers.named["mailer"]) == ["smtp1"]
    assert [d.text for d in mailers.attributes] == ["timeout mail 20s"]
    userlist = config.section("userlist", "users")
    assert userlist is not None
    assert list(userlist.named["user"]) == ["admin"] and list(userlist.named["group"]) == ["ops"]
    ring = config.section("ring", "buf")
    assert ring is not None and list(ring.named["server"]) == ["syslog"]
    forward = config.section("log-forward", "sylog")
    assert forward is not None
    assert list(forward.named["dgram-bind"]) == ["127.0.0.1:1514"]
    assert [d.text for d in forward.rule_list("log")] == ["log global"]


def test_flat_sections_keep_everything_as_attributes() -> None:
    config = parse_config(EVERY_SECTION)
    cache = config.section("cache", "pagecache")
    assert cache is not None
    assert [d.text for d in cache.attributes] == ["total-max-size 4", "max-age 60"]
    assert cache.named == {} and cache.rules == {} and cache.acls == {}
    program = config.section("program", "api")
    assert program is not None and [d.text for d in program.attributes] == ["command /usr/bin/true"]


PROXY = """\
frontend fe
  mode http
  bind :80 name http
  bind 127.0.0.1:443 ssl crt /etc/site.pem
  acl is_api path_beg /api
  acl is_api path_beg /v2
  acl is_img path_end .png
  http-request set-header X-A a
  http-request deny if is_img
  http-response del-header Server
  http-after-response set-header X-After 1
  tcp-request inspect-delay 5s
  tcp-request content accept if { req_ssl_hello_type 1 }
  use_backend api if is_api
  default_backend web
  filter compression
  log global
  capture request header Host len 64
  declare capture request len 32
  redirect scheme https if !{ ssl_fc }
backend web
  balance roundrobin
  option httpchk
  http-check send meth GET uri /health
  http-check expect status 200
  tcp-check connect
  stick on src
  use-server s1 if { path /one }
  tcp-response content accept
  server s1 127.0.0.1:81 check
  server-template srv 1-5 127.0.0.1:82 check
"""


def test_proxy_children_are_sorted_by_kind() -> None:
    config = parse_config(PROXY)
    fe = config.frontends["fe"]
    assert list(fe.binds) == ["http", "127.0.0.1:443"]
    assert [d.text for d in fe.acls["is_api"]] == ["acl is_api path_beg /api", "acl is_api path_beg /v2"]
    assert list(fe.acls) == ["is_api", "is_img"]
    assert [d.args[0] for d in fe.rule_list("http-request")] == ["set-header", "deny"]
    assert len(fe.rule_list("http-response")) == 1
    assert len(fe.rule_list("http-after-response")) == 1
    assert [d.args[0] for d in fe.rule_list("tcp-request")] == ["inspect-delay", "content"]
    assert [d.text for d in fe.rule_list("use_backend")] == ["use_backend api if is_api"]
    assert [d.text for d in fe.rule_list("filter")] == ["filter compression"]
    assert [d.text for d in fe.rule_list("log")] == ["log global"]
    assert [d.keyword for d in fe.rule_list("capture")] == ["capture", "declare"]
    assert len(fe.rule_list("redirect")) == 1
    assert [d.text for d in fe.attributes] == ["mode http", "default_backend web"]
    be = config.backends["web"]
    assert list(be.servers) == ["s1"]
    assert list(be.server_templates) == ["srv"]
    assert [d.args[0] for d in be.rule_list("http-check")] == ["send", "expect"]
    assert len(be.rule_list("tcp-check")) == 1
    assert len(be.rule_list("stick")) == 1
    assert len(be.rule_list("use-server")) == 1
    assert len(be.rule_list("tcp-response")) == 1
    assert [d.text for d in be.attributes] == ["balance roundrobin", "option httpchk"]


def test_directives_keep_their_order_and_line_numbers() -> None:
    config = parse_config(PROXY)
    be = config.backends["web"]
    assert be.line == 21
    assert [d.line for d in be.directives] == list(range(22, 32))
    assert be.directives[-1].keyword == "server-template"


def test_equal_lines_share_their_words_and_keep_their_own_line_numbers() -> None:
    """The backends of a large config repeat the same lines: each distinct line's words are held once."""
    text = "".join(f"backend b{i}\n    mode http\n    server SRV_2 127.0.0.1:1 disabled\n"
                   f"    server SRV_1 10.0.0.{i}:80\n" for i in range(5))
    config = parse_config(text)
    backends = [config.backends[f"b{i}"] for i in range(5)]
    assert len({id(b.directives[0].words) for b in backends}) == 1
    assert len({id(b.servers["SRV_2"].words) for b in backends}) == 1
    assert len({b.servers["SRV_1"].words for b in backends}) == 5
    assert [b.servers["SRV_2"].line for b in backends] == [3, 7, 11, 15, 19]


def test_whitespace_and_comments_are_normalised_away() -> None:
    config = parse_config("backend web   # trailing\n\t balance\t  roundrobin   # why\n\n   # only a comment\n")
    be = config.backends["web"]
    assert [d.words for d in be.directives] == [("balance", "roundrobin")]


def test_quoted_words_stay_whole() -> None:
    config = parse_config('frontend fe\n  http-request set-header X-A "a b # c" if TRUE\n')
    (rule,) = config.frontends["fe"].rule_list("http-request")
    assert rule.words == ("http-request", "set-header", "X-A", '"a b # c"', "if", "TRUE")


def test_escaped_hash_is_not_a_comment() -> None:
    config = parse_config("frontend fe\n  http-request set-header X-A a\\#b # comment\n")
    (rule,) = config.frontends["fe"].rule_list("http-request")
    assert rule.words[-1] == "a\\#b"


def test_repeated_global_sections_merge() -> None:
    config = parse_config("global\n  daemon\nbackend b\n  mode http\nglobal\n  maxconn 10\n")
    assert [s.kind for s in config.sections] == ["global", "backend"]
    assert config.global_section is not None
    assert [d.text for d in config.global_section.attributes] == ["daemon", "maxconn 10"]


def test_frontend_and_backend_may_share_a_name() -> None:
    config = parse_config("frontend app\n  bind :80\nbackend app\n  server s 127.0.0.1:1\n")
    assert list(config.frontends) == ["app"] and list(config.backends) == ["app"]


def test_bind_named_by_name_parameter_else_address() -> None:
    config = parse_config("frontend fe\n  bind :80\n  bind :443 ssl crt x.pem name tls\n")
    assert list(config.frontends["fe"].binds) == [":80", "tls"]


def test_version_comment_and_crlf_line_endings() -> None:
    config = parse_config("# _version=12\r\nbackend web\r\n  balance first\r\n")
    assert [d.words for d in config.backends["web"].directives] == [("balance", "first")]


def test_config_without_trailing_newline() -> None:
    config = parse_config("backend web\n  server s1 127.0.0.1:80")
    assert list(config.backends["web"].servers) == ["s1"]
    assert parse_config("global").global_section is not None


def test_empty_and_comment_only_configs_have_no_sections() -> None:
    assert parse_config("").sections == []
    assert parse_config("# nothing\n\n   \n").sections == []


def test_indented_section_header_is_a_header() -> None:
    config = parse_config("  backend web\n    balance first\n")
    assert list(config.backends) == ["web"]


def test_realworld_template_output_parses() -> None:
    config = parse_config(REALWORLD_CFG)
    assert [(s.kind, s.name) for s in config.sections] == [
        ("global", None),
        ("defaults", "unnamed_defaults_1"),
        ("userlist", "haptic_auth_default_basic"),
        ("resolvers", "kubernetes"),
        ("frontend", "http"),
        ("backend", "default_echo_80"),
        ("backend", "default_api_8080"),
        ("backend", "default_fallback"),
    ]
    fe = config.frontends["http"]
    assert list(fe.binds) == ["http", "https-alt"]
    assert list(fe.acls) == ["is_api", "host_echo", "host_admin"]
    assert len(fe.rule_list("http-request")) == 4
    assert [d.args[0] for d in fe.rule_list("use_backend")] == ["default_echo_80", "default_api_8080"]
    echo = config.backends["default_echo_80"]
    assert list(echo.servers) == ["SRV_1", "SRV_2", "SRV_3", "SRV_4"]
    assert list(config.backends["default_api_8080"].server_templates) == ["api"]
    userlist = config.section("userlist", "haptic_auth_default_basic")
    assert userlist is not None and list(userlist.named["user"]) == ["alice", "bob"]
    resolvers = config.section("resolvers", "kubernetes")
    assert resolvers is not None and list(resolvers.named["nameserver"]) == ["dns1"]


def test_reprs_never_show_userlist_passwords() -> None:
    config = parse_config(REALWORLD_CFG)
    userlist = config.section("userlist", "haptic_auth_default_basic")
    assert userlist is not None
    shown = repr(userlist) + repr(userlist.named) + repr(config.sections)
    assert "s3cret" not in shown
    assert "$5$uLHx" not in shown
    assert "<redacted>" in repr(userlist.named["user"]["bob"])


def test_reusing_parse_shares_unchanged_sections_only() -> None:
    base = parse_config(REALWORLD_CFG)
    changed_text = REALWORLD_CFG.replace("127.0.0.1:9002", "127.0.0.1:9003")
    changed = parse_config_reusing(changed_text, base)
    assert changed.backends["default_api_8080"] is base.backends["default_api_8080"]
    assert changed.backends["default_echo_80"] is not base.backends["default_echo_80"]
    assert changed.backends["default_echo_80"].servers["SRV_2"].words[2] == "127.0.0.1:9003"
    fresh = parse_config(changed_text)
    assert [s.signature for s in fresh.sections] == [s.signature for s in changed.sections]


def test_reusing_parse_still_checks_changed_sections() -> None:
    base = parse_config(REALWORLD_CFG)
    broken = REALWORLD_CFG.replace("server SRV_2 127.0.0.1:9002 weight 10", "server SRV_1 127.0.0.1:9002")
    with pytest.raises(ConfigParseError) as info:
        parse_config_reusing(broken, base)
    lines = [line.strip() for line in broken.splitlines()]
    assert info.value.line == lines.index("server SRV_1 127.0.0.1:9002") + 1


def test_a_parse_leaves_its_sections_to_the_oldest_generation() -> None:
    # A parse of 10,000 backends left a dozen 10,000-element lists and dicts young: every young collection after
    # it visited each of their elements (2 ms per endpoint change at 10,000 Ingresses, on the deployer's parse)
    import gc

    text = "global\n  daemon\n" + "".join(f"backend b{i}\n  server s1 10.0.0.{i % 250}:80\n" for i in range(300))
    assert gc.isenabled()
    whole = parse_config(text)
    assert any(o is whole.sections for o in gc.get_objects(generation=2))
    changed = text.replace("10.0.0.7:80", "10.0.0.8:80", 1)
    again = _Parser().parse_against(changed, whole)  # stretch by stretch, against the last config
    assert again is not None
    assert any(o is again.sections for o in gc.get_objects(generation=2))
    assert gc.isenabled() and gc.get_freeze_count() == 0
