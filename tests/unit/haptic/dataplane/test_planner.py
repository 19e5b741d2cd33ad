"""Comparing configs into ordered Dataplane operations."""

from __future__ import annotations

import pytest

from haptic.dataplane import Operation, SyncPlan, parse_config, plan, plan_parsed
from tests.support.realworld import REALWORLD_CFG

BASE = """\
global
  daemon
  maxconn 1000
defaults
  mode http
  timeout connect 5s
frontend fe
  bind :80 name b0
  acl is_web path_beg /web
  http-request set-header X-Proto http
  use_backend web if is_web
  default_backend web
backend web
  balance roundrobin
  server srv1 10.0.0.1:80 check weight 10
  server srv2 10.0.0.2:80 check weight 10
"""


def descriptions(result: SyncPlan) -> list[str]:
    return [op.description for op in result.operations]


def edit(text: str, old: str, new: str) -> str:
    assert old in text, old
    return text.replace(old, new, 1)


# -- no operations ---------------------------------------------------------------------------


def test_identical_configs_give_an_empty_plan() -> None:
    result = plan(BASE, BASE)
    assert result.operations == ()
    assert result.is_empty
    assert result.reload_required is False
    assert result.runtime_operations == ()


def test_realworld_config_against_itself_is_empty() -> None:
    assert plan(REALWORLD_CFG, REALWORLD_CFG).is_empty


def test_cosmetic_changes_give_no_operations() -> None:
    cosmetic = "# _version=42\n# rendered by haptic\n\n"
    for line in BASE.splitlines():
        if line.startswith(" "):
            cosmetic += "\t  " + "   ".join(line.split()) + "    # note\n\n"
        else:
            cosmetic += line + "   \n# between sections\n"
    assert plan(BASE, cosmetic).is_empty
    assert plan(cosmetic, BASE).is_empty


def test_reordered_server_parameters_give_no_operations() -> None:
    desired = edit(BASE, "server srv1 10.0.0.1:80 check weight 10", "server srv1 10.0.0.1:80 weight 10 check")
    assert plan(BASE, desired).is_empty


def test_equivalent_time_units_give_no_operations() -> None:
    current = edit(BASE, "check weight 10\n  server srv2", "check inter 2s weight 10\n  server srv2")
    desired = edit(BASE, "check weight 10\n  server srv2", "check inter 2000 weight 10\n  server srv2")
    assert plan(current, desired).is_empty


# -- the exact description strings ------------------------------------------------------------


def test_backend_create_update_delete_descriptions() -> None:
    added = BASE + "backend api\n  balance first\n"
    assert descriptions(plan(BASE, added)) == ["Create backend 'api'"]
    assert descriptions(plan(added, BASE)) == ["Delete backend 'api'"]
    changed = edit(BASE, "balance roundrobin", "balance leastconn")
    assert descriptions(plan(BASE, changed)) == ["Update backend 'web'"]


def test_server_descriptions() -> None:
    added = edit(BASE, "  server srv2 10.0.0.2:80 check weight 10\n", "")
    assert descriptions(plan(added, BASE)) == ["Create server 'srv2' in backend 'web'"]
    assert descriptions(plan(BASE, added)) == ["Delete server 'srv2' from backend 'web'"]
    moved = edit(BASE, "10.0.0.1:80", "10.0.0.9:80")
    assert descriptions(plan(BASE, moved)) == ["Update server 'srv1' in backend 'web'"]


def test_bind_acl_and_rule_descriptions() -> None:
    new_lines = "  bind :80 name b0\n  bind :8080 name b1\n  acl is_api path_beg /api\n"
    desired = edit(BASE, "  bind :80 name b0\n", new_lines)
    desired = edit(desired, "  balance roundrobin\n", "  balance roundrobin\n  http-request set-header X-Be web\n")
    assert descriptions(plan(BASE, desired)) == [
        "Create bind 'b1' in frontend 'fe'",
        "Create ACL 'is_api' in frontend 'fe'",
        "Create HTTP request rule (set-header) in backend 'web'",
    ]


def test_global_and_defaults_descriptions() -> None:
    desired = edit(BASE, "maxconn 1000", "maxconn 2000")
    desired = edit(desired, "timeout connect 5s", "timeout connect 6s")
    expected = ["Update global section", "Update defaults section 'unnamed_defaults_1'"]
    assert descriptions(plan(BASE, desired)) == expected


def test_named_defaults_description() -> None:
    current = "defaults base\n  mode http\n"
    assert descriptions(plan(current, current.replace("http", "tcp"))) == ["Update defaults section 'base'"]
    assert descriptions(plan("", current)) == ["Create defaults section 'base'"]
    assert descriptions(plan(current, "")) == ["Delete defaults section 'base'"]


def test_create_frontend_creates_its_children_after_it() -> None:
    desired = BASE + "frontend fe2\n  bind :81 name main\n  acl a1 src 10.0.0.0/8\n  http-request deny if !a1\n"
    assert descriptions(plan(BASE, desired)) == [
        "Create frontend 'fe2'",
        "Create bind 'main' in frontend 'fe2'",
        "Create ACL 'a1' in frontend 'fe2'",
        "Create HTTP request rule (deny) in frontend 'fe2'",
    ]


@pytest.mark.parametrize(
    ("line", "description"),
    [
        ("http-response set-header X-A 1", "Create HTTP response rule (set-header) in backend 'web'"),
        ("http-after-response set-header X-A 1", "Create HTTP after response rule (set-header) in backend 'web'"),
        ("tcp-request content accept", "Create TCP request rule (content) in backend 'web'"),
        ("tcp-request inspect-delay 5s", "Create TCP request rule (inspect-delay) in backend 'web'"),
        ("tcp-response content close", "Create TCP response rule (content) in backend 'web'"),
        ("use-server srv1 if TRUE", "Create server switching rule (srv1) in backend 'web'"),
        ("stick on src", "Create stick rule (on) in backend 'web'"),
        ("filter compression", "Create filter (compression) in backend 'web'"),
        ("log 127.0.0.1:514 local0", "Create log target (127.0.0.1:514) in backend 'web'"),
        ("http-check expect status 200", "Create HTTP check (expect) in backend 'web'"),
        ("tcp-check connect", "Create TCP check (connect) in backend 'web'"),
        ("redirect scheme https", "Create redirect rule (scheme) in backend 'web'"),
        ("server-template sv 1-3 10.0.0.5:80", "Create server template 'sv' in backend 'web'"),
    ],
)
def test_backend_child_descriptions(line: str, description: str) -> None:
    desired = edit(BASE, "  balance roundrobin\n", f"  balance roundrobin\n  {line}\n")
    assert descriptions(plan(BASE, desired)) == [description]


@pytest.mark.parametrize(
    ("line", "description"),
    [
        ("use_backend api if TRUE", "Create backend switching rule (api) in frontend 'fe'"),
        ("capture request header Host len 64", "Create capture (request) in frontend 'fe'"),
        ("declare capture request len 64", "Create capture (request) in frontend 'fe'"),
    ],
)
def test_frontend_child_descriptions(line: str, description: str) -> None:
    desired = edit(BASE, "  default_backend web\n", f"  default_backend web\n  {line}\n")
    assert description in descriptions(plan(BASE, desired))


def test_service_section_descriptions() -> None:
    current = "userlist u\n  user a password x\nresolvers dns\n  nameserver ns1 127.0.0.1:53\n"
    desired = (
        "userlist u\n  user a password y\n  user b password z\n"
        "resolvers dns\n  nameserver ns2 127.0.0.1:54\n"
        "peers p\n  peer one 127.0.0.1:1024\n"
    )
    assert descriptions(plan(current, desired)) == [
        "Delete nameserver 'ns1' from resolvers section 'dns'",
        "Create peer section 'p'",
        "Create user 'b' in userlist 'u'",
        "Create nameserver 'ns2' in resolvers section 'dns'",
        "Create peer entry 'one' in peer section 'p'",
        "Update user 'a' in userlist 'u'",
    ]


def test_operation_descriptions_never_show_passwords() -> None:
    current = "userlist u\n  user a insecure-password hunter2\n"
    result = plan(current, current.replace("hunter2", "hunter3"))
    assert descriptions(result) == ["Update user 'a' in userlist 'u'"]
    assert "hunter" not in repr(result)


# -- fields -----------------------------------------------------------------------------------


def test_server_operation_fields_and_payload() -> None:
    desired = edit(BASE, "server srv1 10.0.0.1:80 check weight 10", "server srv1 10.0.0.9:8080 check weight 10")
    (op,) = plan(BASE, desired).operations
    assert op == Operation(
        action="update",
        section_type="backend",
        section_name="web",
        child_type="server",
        child_name="srv1",
        index=None,
        description="Update server 'srv1' in backend 'web'",
        runtime=True,
        payload={"name": "srv1", "address": "10.0.0.9", "port": 8080, "check": "enabled", "weight": 10},
        config_lines=("server srv1 10.0.0.9:8080 check weight 10",),
    )
    hash(op)  # frozen and hashable although the payload is a dict


def test_server_create_has_payload_delete_has_none() -> None:
    removed = edit(BASE, "  server srv2 10.0.0.2:80 check weight 10\n", "")
    (create,) = plan(removed, BASE).operations
    assert create.payload == {"name": "srv2", "address": "10.0.0.2", "port": 80, "check": "enabled", "weight": 10}
    (delete,) = plan(BASE, removed).operations
    assert delete.payload is None and delete.child_name == "srv2" and delete.config_lines == ()


def test_rule_operations_carry_their_index_and_line() -> None:
    desired = edit(BASE, "  http-request set-header X-Proto http\n", "  http-request set-header X-Proto https\n")
    (op,) = plan(BASE, desired).operations
    assert (op.action, op.child_type, op.index, op.child_name) == ("update", "http-request", 0, None)
    assert op.config_lines == ("http-request set-header X-Proto https",)
    assert op.description == "Update HTTP request rule (set-header) in frontend 'fe'"


def test_section_update_carries_header_and_attributes() -> None:
    desired = edit(BASE, "balance roundrobin", "balance first")
    (op,) = plan(BASE, desired).operations
    assert (op.section_type, op.section_name, op.child_type) == ("backend", "web", None)
    assert op.config_lines == ("backend web", "balance first")
    (glob,) = plan(BASE, edit(BASE, "daemon", "master-worker")).operations
    assert glob.config_lines == ("global", "master-worker", "maxconn 1000")
    (defaults,) = plan(BASE, edit(BASE, "mode http", "mode tcp")).operations
    assert defaults.config_lines == ("defaults", "mode tcp", "timeout connect 5s")


def test_acl_with_several_lines_is_one_object() -> None:
    desired = edit(BASE, "  acl is_web path_beg /web\n", "  acl is_web path_beg /web\n  acl is_web path_beg /www\n")
    (op,) = plan(BASE, desired).operations
    assert op.description == "Update ACL 'is_web' in frontend 'fe'"
    assert op.config_lines == ("acl is_web path_beg /web", "acl is_web path_beg /www")


# -- ordering ---------------------------------------------------------------------------------


def test_deletes_children_first_then_creates_parents_first_then_updates() -> None:
    current = BASE + "backend old\n  server o1 10.0.0.5:80\n"
    desired = edit(BASE, "balance roundrobin", "balance first")
    desired = edit(desired, "  server srv2 10.0.0.2:80 check weight 10\n", "")
    desired += "backend new\n  server n1 10.0.0.6:80\n"
    ops = plan(current, desired).operations
    assert [op.description for op in ops] == [
        "Delete server 'srv2' from backend 'web'",
        "Delete backend 'old'",
        "Create backend 'new'",
        "Create server 'n1' in backend 'new'",
        "Update backend 'web'",
    ]


def test_deleting_a_section_does_not_list_its_children() -> None:
    current = BASE + "backend old\n  server o1 10.0.0.5:80\n  http-request deny\n"
    assert descriptions(plan(current, BASE)) == ["Delete backend 'old'"]


def test_creates_follow_dataplane_priorities() -> None:
    desired = (
        "frontend fe\n  bind :80\n  http-request auth if !{ http_auth(u) }\n"
        "defaults\n  mode http\n"
        "userlist u\n  user a password x\n"
        "resolvers dns\n  nameserver n 127.0.0.1:53\n"
    )
    assert descriptions(plan("", desired)) == [
        "Create userlist 'u'",
        "Create resolver 'dns'",
        "Create user 'a' in userlist 'u'",
        "Create defaults section 'unnamed_defaults_1'",
        "Create frontend 'fe'",
        "Create bind ':80' in frontend 'fe'",
        "Create nameserver 'n' in resolvers section 'dns'",
        "Create HTTP request rule (auth) in frontend 'fe'",
    ]


def test_rule_deletes_go_from_the_highest_index_down() -> None:
    current = edit(
        BASE,
        "  http-request set-header X-Proto http\n",
        "  http-request set-header X-Proto http\n  http-request set-header X-1 1\n  http-request set-header X-2 2\n",
    )
    ops = plan(current, BASE).operations
    assert [(op.action, op.index) for op in ops] == [("delete", 2), ("delete", 1)]


def test_rules_are_compared_by_position() -> None:
    desired = edit(
        BASE,
        "  http-request set-header X-Proto http\n",
        "  http-request del-header X-Forwarded-For\n  http-request set-header X-Proto http\n",
    )
    ops = plan(BASE, desired).operations
    assert [(op.action, op.index, op.description) for op in ops] == [
        ("create", 1, "Create HTTP request rule (set-header) in frontend 'fe'"),
        ("update", 0, "Update HTTP request rule (del-header) in frontend 'fe'"),
    ]


def test_acl_creates_follow_desired_order() -> None:
    new_lines = "  acl z src 1.2.3.4\n  acl is_web path_beg /web\n  acl a src 5.6.7.8\n"
    desired = edit(BASE, "  acl is_web path_beg /web\n", new_lines)
    assert descriptions(plan(BASE, desired)) == ["Create ACL 'z' in frontend 'fe'", "Create ACL 'a' in frontend 'fe'"]


def test_renamed_section_is_delete_then_create() -> None:
    desired = BASE.replace("backend web", "backend www").replace("use_backend web", "use_backend www")
    desired = desired.replace("default_backend web", "default_backend www")
    result = descriptions(plan(BASE, desired))
    assert result[:3] == ["Delete backend 'web'", "Create backend 'www'", "Create server 'srv1' in backend 'www'"]
    assert result[3:] == [
        "Create server 'srv2' in backend 'www'",
        "Update frontend 'fe'",
        "Update backend switching rule (www) in frontend 'fe'",
    ]


# -- runtime vs reload --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("server srv1 10.0.0.1:80 check weight 10", "server srv1 10.0.0.1:80 check weight 20"),
        ("server srv1 10.0.0.1:80 check weight 10", "server srv1 10.9.9.9:80 check weight 10"),
        ("server srv1 10.0.0.1:80 check weight 10", "server srv1 10.0.0.1:81 check weight 10"),
        ("server srv1 10.0.0.1:80 check weight 10", "server srv1 10.0.0.1:80 check weight 10 disabled"),
        ("server srv1 10.0.0.1:80 check weight 10", "server srv1 10.0.0.1:80 check weight 10 port 8081"),
        ("server srv1 10.0.0.1:80 check weight 10", "server srv1 10.0.0.1:80 check weight 10 agent-check"),
    ],
)
def test_runtime_eligible_server_updates_need_no_reload(old: str, new: str) -> None:
    result = plan(BASE, edit(BASE, old, new))
    assert len(result.operations) == 1
    assert result.reload_required is False
    assert result.runtime_operations == result.operations
    assert result.operations[0].runtime is True


def test_many_runtime_updates_still_need_no_reload() -> None:
    desired = edit(BASE, "10.0.0.1:80", "10.0.1.1:80")
    desired = edit(desired, "srv2 10.0.0.2:80 check weight 10", "srv2 10.0.0.2:80 check weight 1 disabled")
    result = plan(BASE, desired)
    assert len(result.operations) == 2 and not result.reload_required


def test_enabling_a_reserved_slot_is_runtime() -> None:
    current = "backend web\n  server SRV_1 127.0.0.1:1 disabled\n"
    desired = "backend web\n  server SRV_1 10.0.0.7:8080\n"
    result = plan(current, desired)
    assert not result.reload_required
    assert result.operations[0].payload == {"name": "SRV_1", "address": "10.0.0.7", "port": 8080}


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("server srv1 10.0.0.1:80 check weight 10", "server srv1 10.0.0.1:80 check inter 3s weight 10"),
        ("server srv1 10.0.0.1:80 check weight 10", "server srv1 10.0.0.1:80 check weight 10 maxconn 50"),
        ("server srv1 10.0.0.1:80 check weight 10", "server srv1 10.0.0.1:80 weight 10"),
        ("server srv1 10.0.0.1:80 check weight 10", "server srv1 10.0.0.1:80 check weight 10 ssl verify none"),
    ],
)
def test_non_runtime_server_updates_need_a_reload(old: str, new: str) -> None:
    result = plan(BASE, edit(BASE, old, new))
    (op,) = result.operations
    assert op.action == "update" and op.child_type == "server"
    assert op.runtime is False
    assert result.reload_required is True
    assert result.runtime_operations == ()


def test_adding_or_removing_a_server_needs_a_reload() -> None:
    added = BASE + "  server srv3 10.0.0.3:80 check weight 10\n"
    assert plan(BASE, added).reload_required
    assert plan(added, BASE).reload_required


def test_one_non_runtime_operation_makes_the_whole_plan_reload() -> None:
    desired = edit(BASE, "10.0.0.1:80", "10.0.1.1:80")
    desired = edit(desired, "balance roundrobin", "balance first")
    result = plan(BASE, desired)
    assert result.reload_required
    assert [op.description for op in result.runtime_operations] == ["Update server 'srv1' in backend 'web'"]


def test_default_server_change_is_a_backend_update() -> None:
    current = "backend web\n  default-server check\n  server s 10.0.0.1:80\n"
    desired = "backend web\n  default-server check inter 1s\n  server s 10.0.0.1:80\n"
    result = plan(current, desired)
    assert descriptions(result) == ["Update backend 'web'"] and result.reload_required


def test_listen_servers_never_go_through_the_runtime_path() -> None:
    current = "listen app\n  bind :80\n  server s 10.0.0.1:80\n"
    result = plan(current, current.replace("10.0.0.1", "10.0.0.2"))
    assert descriptions(result) == ["Update server 's' in listen 'app'"]
    assert result.reload_required


def test_peers_servers_are_plain_children() -> None:
    current = "peers p\n  server local\n  server remote 127.0.0.1:1024\n"
    (op,) = plan(current, current.replace("1024", "1025")).operations
    assert op.description == "Update server 'remote' in peer section 'p'" and op.payload is None and not op.runtime


# -- entry points -------------------------------------------------------------------------------


def test_plan_parsed_matches_plan() -> None:
    desired = edit(REALWORLD_CFG, "127.0.0.1:9002", "127.0.0.1:9003")
    assert plan_parsed(parse_config(REALWORLD_CFG), parse_config(desired)) == plan(REALWORLD_CFG, desired)


def test_plan_is_repeatable_with_cached_parses() -> None:
    desired = edit(REALWORLD_CFG, "server SRV_3 127.0.0.1:1 disabled", "server SRV_3 127.0.0.1:9005")
    first = plan(REALWORLD_CFG, desired)
    assert plan(REALWORLD_CFG, desired) == first
    assert descriptions(plan(desired, REALWORLD_CFG)) == ["Update server 'SRV_3' in backend 'default_echo_80'"]
    assert not first.reload_required


def test_realworld_mixed_change() -> None:
    desired = edit(REALWORLD_CFG, "    acl host_admin hdr(host) -i admin.example.com\n", "")
    desired = edit(desired, "balance leastconn", "balance roundrobin")
    desired = edit(desired, "    user bob insecure-password s3cret\n", "")
    assert descriptions(plan(REALWORLD_CFG, desired)) == [
        "Delete ACL 'host_admin' from frontend 'http'",
        "Delete user 'bob' from userlist 'haptic_auth_default_basic'",
        "Update backend 'default_api_8080'",
    ]


# -- defaults inheritance -----------------------------------------------------------------------


def test_moving_a_proxy_to_another_defaults_section_updates_it() -> None:
    current = "defaults a\n  mode http\ndefaults b\n  mode tcp\nbackend web\n  server s 10.0.0.1:80\n"
    desired = "defaults a\n  mode http\nbackend web\n  server s 10.0.0.1:80\ndefaults b\n  mode tcp\n"
    result = plan(current, desired)
    assert descriptions(result) == ["Update backend 'web'"] and result.reload_required
    assert parse_config(desired).backends["web"].implicit_defaults == "a"
    assert parse_config(current).backends["web"].implicit_defaults == "b"


def test_explicit_from_replaces_implicit_defaults() -> None:
    config = parse_config("defaults a\n  mode http\ndefaults b\n  mode tcp\nfrontend fe from a\n  bind :80\n")
    assert config.frontends["fe"].implicit_defaults is None
    assert config.frontends["fe"].header_args == ("from", "a")


def test_reordering_sections_without_changing_defaults_is_empty() -> None:
    current = "defaults\n  mode http\nbackend a\n  balance first\nbackend b\n  balance first\n"
    desired = "defaults\n  mode http\nbackend b\n  balance first\nbackend a\n  balance first\n"
    assert plan(current, desired).is_empty


def test_global_section_create_and_delete() -> None:
    assert descriptions(plan("", "global\n  daemon\n")) == ["Create global section"]
    assert descriptions(plan("global\n  daemon\n", "")) == ["Delete global section"]


def test_flat_sections_update_as_a_whole() -> None:
    current = "cache c\n  total-max-size 4\nhttp-errors e\n  errorfile 503 /e/503.http\n"
    desired = "cache c\n  total-max-size 8\nhttp-errors e\n  errorfile 503 /e/503b.http\n"
    assert descriptions(plan(current, desired)) == ["Update cache 'c'", "Update http-errors section 'e'"]


def test_log_forward_children() -> None:
    current = "log-forward lf\n  dgram-bind 127.0.0.1:1514\n  log global\n"
    desired = "log-forward lf\n  dgram-bind 127.0.0.1:1515\n  log 127.0.0.1:514 local0\n"
    assert descriptions(plan(current, desired)) == [
        "Delete dgram-bind '127.0.0.1:1514' from log-forward 'lf'",
        "Create dgram-bind '127.0.0.1:1515' in log-forward 'lf'",
        "Update log target (127.0.0.1:514) in log-forward 'lf'",
    ]


def test_section_header_change_is_an_update() -> None:
    current = "defaults a\n  mode http\ndefaults b\n  mode tcp\nfrontend fe from a\n  bind :80\n"
    assert descriptions(plan(current, current.replace("fe from a", "fe from b"))) == ["Update frontend 'fe'"]


# -- the original's wording (its sync test tables) ----------------------------------------------------

_ORIGINAL = "global\n  daemon\ndefaults\n  mode http\nbackend web\n  server srv1 10.0.0.1:80\n"


@pytest.mark.parametrize(
    ("added", "expected"),
    [
        ("resolvers dns\n  nameserver dns1 10.0.0.1:53\n  nameserver dns2 10.0.0.2:53\n",
         ["Create resolver 'dns'", "Create nameserver 'dns1' in resolvers section 'dns'",
          "Create nameserver 'dns2' in resolvers section 'dns'"]),
        ("mailers alerts\n  mailer smtp1 10.0.0.1:25\n  mailer smtp2 10.0.0.2:25\n",
         ["Create mailers 'alerts'", "Create mailer entry 'smtp1' in mailers section 'alerts'",
          "Create mailer entry 'smtp2' in mailers section 'alerts'"]),
        ("peers mycluster\n  peer node1 10.0.0.1:1024\n",
         ["Create peer section 'mycluster'", "Create peer entry 'node1' in peer section 'mycluster'"]),
        ("cache webcache\n  total-max-size 4\n", ["Create cache 'webcache'"]),
        ("ring myring\n  format rfc3164\n  size 32764\n  server mysyslogsrv 127.0.0.1:6514\n",
         ["Create ring 'myring'"]),
        ("traces\n  trace h1 sink stderr level developer\n", ["Update traces section"]),
        ("acme le\n  directory https://acme.example/directory\n", ["Create acme-provider 'le'"]),
    ],
)
def test_section_operations_use_the_original_wording(added: str, expected: list[str]) -> None:
    assert descriptions(plan(_ORIGINAL, _ORIGINAL + added)) == expected
    deleted = descriptions(plan(_ORIGINAL + added, _ORIGINAL))
    assert len(deleted) == 1 and deleted[0].startswith("Delete ")


def test_a_rings_servers_are_part_of_the_ring() -> None:
    ring = "ring myring\n  size 32764\n  server s1 127.0.0.1:6514\n"
    assert descriptions(plan(_ORIGINAL + ring, _ORIGINAL + ring.replace("6514", "6515"))) == ["Update ring 'myring'"]
