"""Pure parts of the fake Dataplane API and the aux-file helpers."""

from __future__ import annotations

import pytest

from haptic.dataplane.aux_files import AuxFiles, parse_map_entries, sanitize_storage_name
from simulator.dataplane.config_document import ConfigDocument
from simulator.dataplane.faults import Faults
from simulator.dataplane.haproxy_driver import admin_socket_config, parse_show_proc
from simulator.dataplane.storage import sanitize_name

SHOW_PROC_26 = """#<PID>          <type>          <reloads>       <uptime>        <version>
11582           master          1 [failed: 0]   0d00h00m01s     2.6.12-1+deb12u4
# workers
11615           worker          0               0d00h00m01s     2.6.12-1+deb12u4
# old workers
11590           worker          1               0d00h00m09s     2.6.12-1+deb12u4
# programs
"""


def test_show_proc_lists_master_and_current_workers_only() -> None:
    procs = parse_show_proc(SHOW_PROC_26)
    assert [(p.pid, p.kind, p.reloads) for p in procs] == [(11582, "master", 1), (11615, "worker", 0)]


def test_admin_socket_fragment() -> None:
    assert (
        admin_socket_config("/tmp/x/admin.sock") == "global\n    stats socket /tmp/x/admin.sock mode 600 level admin\n"
    )


@pytest.mark.parametrize(
    ("kind", "name", "stored"),
    [
        ("ssl_certificates", "example.com.pem", "example_com.pem"),
        ("general", "503 page!.http", "503_page_.http"),
        ("maps", "host", "host.map"),
        ("maps", "host.map", "host.map"),
        ("general", "dir/evil/../x.txt", "x.txt"),
    ],
)
def test_storage_names_are_sanitized_the_same_on_both_sides(kind: str, name: str, stored: str) -> None:
    assert sanitize_name(kind, name) == stored
    assert sanitize_storage_name(kind, name) == stored


def test_config_document_edits_one_server_line() -> None:
    doc = ConfigDocument.from_text("# _version=4\nglobal\n\nbackend web\n  server s1 1.1.1.1:80 check\n")
    assert doc.lines[0] == "global"
    assert doc.server_line("web", "s1") == "  server s1 1.1.1.1:80 check"
    doc.replace_server_line("web", "s1", "server s1 2.2.2.2:81 check")
    assert doc.render(5) == "# _version=5\nglobal\n\nbackend web\n  server s1 2.2.2.2:81 check\n"
    assert doc.server_line("web", "nope") is None and doc.has_section("backend", "web")
    with pytest.raises(KeyError):
        doc.replace_server_line("api", "s1", "server s1 1.1.1.1:80")


def test_references_ignore_comment_lines_and_need_the_full_path() -> None:
    doc = ConfigDocument.from_text("global\n# uses /m/host.map\nfrontend fe\n  bind :80\n")
    assert doc.referencing_line("/m/host.map") is None
    used = ConfigDocument.from_text("frontend fe\n  use_backend %[map(/m/host.map)]\n")
    assert used.referencing_line("/m/host.map") == (2, "use_backend %[map(/m/host.map)]")
    relative = ConfigDocument.from_text("frontend fe\n  use_backend %[map(maps/host.map)]\n")
    assert relative.referencing_line("/etc/haproxy/maps/host.map") is None  # as the real API: full paths only


def test_faults_update_validates_names_and_types() -> None:
    faults = Faults()
    faults.update({"error_count": "3", "delay": 1})
    assert faults.error_count == 3 and faults.delay == 1.0
    with pytest.raises(ValueError, match="unknown fault"):
        faults.update({"explode": True})


def test_aux_files_are_frozen_sorted_and_secret_free_in_repr() -> None:
    aux = AuxFiles(maps={"b.map": "x y\n", "a.map": ""}, certificates={"c.pem": "-----BEGIN PRIVATE KEY-----"})
    assert list(aux.maps) == ["a.map", "b.map"]
    assert "PRIVATE" not in repr(aux) and "c.pem" in repr(aux)
    assert aux.checksum() == AuxFiles(maps={"a.map": "", "b.map": "x y\n"}, certificates=aux.certificates).checksum()
    assert aux.checksum() != AuxFiles(maps=aux.maps).checksum()
    with pytest.raises(TypeError):
        aux.maps["c.map"] = ""  # type: ignore[index]
    merged = AuxFiles(files={"z": "1"}, crt_lists={"a.crtlist": "c.pem"}).general_files()
    assert list(merged) == ["a.crtlist", "z"]


def test_map_entries_parse() -> None:
    assert parse_map_entries("# c\n\na.com web\nb.com  api backup\nsolo\n") == [
        ("a.com", "web"),
        ("b.com", "api backup"),
        ("solo", ""),
    ]
