"""Structural validation: which renders may skip ``haproxy -c`` and which must still run it."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from haptic.dataplane.aux_files import AuxFiles
from haptic.validation.haproxy_check import METHOD_HAPROXY, METHOD_STRUCTURAL, HAProxyValidator
from haptic.validation.process import ProcessResult
from haptic.validation.structural import structural_check

BASE = """global
    daemon

defaults
    mode http
    timeout connect 5s

frontend web
    bind :80
    http-request set-var(txn.b) req.hdr(host),lower,map(/etc/haproxy/maps/host.map)
    use_backend %[var(txn.b)]

backend app
    balance roundrobin
    server SRV_1 10.0.0.1:8080 check
    server SRV_2 127.0.0.1:1 disabled

backend other
    server SRV_1 10.0.1.1:80
"""
MAPS = {"host.map": "a.example app\n"}


def _with(old: str, new: str, text: str = BASE) -> str:
    assert old in text
    return text.replace(old, new, 1)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("server SRV_2 127.0.0.1:1 disabled", "server SRV_2 10.0.0.2:8080"),  # a slot filled
        ("server SRV_1 10.0.0.1:8080 check", "server SRV_1 10.0.0.1:8080 check disabled"),  # slot emptied
        ("server SRV_1 10.0.0.1:8080 check", "server SRV_1 10.0.0.9:9090 check weight 7"),
        ("server SRV_1 10.0.0.1:8080 check", "server SRV_1 [fd00::1]:443 check"),
    ],
)
def test_runtime_only_server_changes_are_proven(old: str, new: str) -> None:
    verdict = structural_check(BASE, AuxFiles(maps=MAPS), _with(old, new), AuxFiles(maps=MAPS))
    assert verdict.proven, verdict.reason
    assert verdict.changed_servers == 1


@pytest.mark.parametrize(
    ("old", "new", "why"),
    [
        ("server SRV_2 127.0.0.1:1 disabled", "server SRV_2 db.internal:5432", "not an IP literal"),
        ("server SRV_2 127.0.0.1:1 disabled", "server SRV_2 10.0.0.2:70000", "not in 1-65535"),
        ("server SRV_2 127.0.0.1:1 disabled", "server SRV_2 [fe80::1%eth9]:80", "interface scope"),
        ("server SRV_2 127.0.0.1:1 disabled", "server SRV_2 10.0.0.2:80 weight 999", "not in 0-256"),
        ("server SRV_1 10.0.0.1:8080 check", "server SRV_1 10.0.0.1:8080", "'check'"),
        ("server SRV_1 10.0.0.1:8080 check", "server SRV_1 10.0.0.1:8080 check agent-port 1", "agent"),
        ("server SRV_2 127.0.0.1:1 disabled", "server SRV_3 127.0.0.1:1 disabled", "name changed"),
        ("balance roundrobin", "balance leastconn", "not a server line"),
        ("backend other\n", "backend other\n    server SRV_2 10.0.1.2:80\n", "line count"),
        ("backend other\n", "backend new\n", "not a server line"),
    ],
)
def test_other_changes_need_haproxy(old: str, new: str, why: str) -> None:
    verdict = structural_check(BASE, AuxFiles(maps=MAPS), _with(old, new), AuxFiles(maps=MAPS))
    assert not verdict.proven
    assert why in verdict.reason


def test_a_new_backend_needs_haproxy() -> None:
    added = BASE + "\nbackend fresh\n    server SRV_1 10.0.2.1:80\n"
    verdict = structural_check(BASE, AuxFiles(), added, AuxFiles())
    assert not verdict.proven
    assert "line count" in verdict.reason


def test_string_map_contents_may_change_when_well_formed() -> None:
    new_maps = AuxFiles(maps={"host.map": "a.example app\nb.example other\n"})
    assert structural_check(BASE, AuxFiles(maps=MAPS), BASE, new_maps).proven
    bad = AuxFiles(maps={"host.map": "a.example app\x0bevil\n"})
    verdict = structural_check(BASE, AuxFiles(maps=MAPS), BASE, bad)
    assert not verdict.proven and "control character" in verdict.reason


def test_maps_read_as_regex_or_added_need_haproxy() -> None:
    regex = BASE.replace("map(/etc/haproxy/maps/host.map)", "map_reg(/etc/haproxy/maps/host.map)")
    verdict = structural_check(regex, AuxFiles(maps=MAPS), regex, AuxFiles(maps={"host.map": "(unclosed app\n"}))
    assert not verdict.proven and "map_reg" in verdict.reason
    verdict = structural_check(BASE, AuxFiles(maps=MAPS), BASE, AuxFiles(maps={**MAPS, "more.map": "x y\n"}))
    assert not verdict.proven and "set of map files" in verdict.reason


def test_other_auxiliary_files_must_be_identical() -> None:
    before = AuxFiles(maps=MAPS, files={"errors/503.http": "HTTP/1.0 503\n"})
    after = AuxFiles(maps=MAPS, files={"errors/503.http": "HTTP/1.0 503 changed\n"})
    verdict = structural_check(BASE, before, BASE, after)
    assert not verdict.proven and "files changed" in verdict.reason


class _CountingRunner:
    """Stands in for haproxy -c: accepts everything and counts the runs."""

    def __init__(self) -> None:
        self.runs = 0

    def run(self, argv: Sequence[str], *, cwd: str, time_limit: float) -> ProcessResult:
        self.runs += 1
        return ProcessResult(0, "", "")


def test_validator_skips_haproxy_only_for_proven_changes_and_says_so() -> None:
    runner = _CountingRunner()
    validator = HAProxyValidator("haproxy", runner=runner, structural=True)
    aux = AuxFiles(maps=MAPS)
    first = validator.validate(BASE, aux)
    assert first.valid and first.method == METHOD_HAPROXY and runner.runs == 1

    moved = _with("server SRV_2 127.0.0.1:1 disabled", "server SRV_2 10.0.0.2:8080")
    proven = validator.validate(moved, aux)
    assert proven.valid and proven.method == METHOD_STRUCTURAL and runner.runs == 1
    assert "1 server line" in proven.structural_reason

    hostname = _with("server SRV_2 127.0.0.1:1 disabled", "server SRV_2 db.internal:8080")
    checked = validator.validate(hostname, aux)
    assert checked.method == METHOD_HAPROXY and runner.runs == 2
    assert "not an IP literal" in checked.structural_reason


def test_validator_without_structural_always_runs_haproxy() -> None:
    runner = _CountingRunner()
    validator = HAProxyValidator("haproxy", runner=runner)
    validator.validate(BASE, AuxFiles())
    moved = _with("server SRV_2 127.0.0.1:1 disabled", "server SRV_2 10.0.0.2:8080")
    assert validator.validate(moved, AuxFiles()).method == METHOD_HAPROXY
    assert runner.runs == 2


def test_proofs_start_from_a_real_pass_not_from_a_failure() -> None:
    class Failing(_CountingRunner):
        def run(self, argv: Sequence[str], *, cwd: str, time_limit: float) -> ProcessResult:
            self.runs += 1
            return ProcessResult(1, "", "[ALERT] (1) : config : broken")

    runner = Failing()
    validator = HAProxyValidator("haproxy", runner=runner, structural=True)
    assert not validator.validate(BASE, AuxFiles()).valid
    moved = _with("server SRV_2 127.0.0.1:1 disabled", "server SRV_2 10.0.0.2:8080")
    result = validator.validate(moved, AuxFiles())
    assert not result.valid and result.method == METHOD_HAPROXY and runner.runs == 2


def test_map_uses_are_counted_as_a_word_bounded_pattern_counts_them() -> None:
    import posixpath
    import random
    import re

    from haptic.validation.structural import _map_uses

    bounded = re.compile(r"\b(map(?:_\w+)?)\(([^,)]*)")

    def expected(config: str) -> dict[str, dict[str, int]]:
        uses: dict[str, dict[str, int]] = {}
        for match in bounded.finditer(config):
            per = uses.setdefault(posixpath.basename(match.group(2).strip().strip("\"'")), {})
            per[match.group(1)] = per.get(match.group(1), 0) + 1
        return uses

    rng = random.Random(7)
    atoms = ["map(", "map_beg(", "xmap(", "_map(", "a.map", ",", ")", " ", "é", "m", "ap(", "maps/x.map", "\n",
             "map_str(", "xmap(map("]
    for _ in range(3000):
        config = "".join(rng.choice(atoms) for _ in range(rng.randint(0, 12)))
        assert _map_uses(config) == expected(config), config


_LINE_EDITS = [
    ("10.0.{i}.1:80", "10.0.{i}.9:80"),  # runtime: address
    ("10.0.{i}.1:80", "10.0.{i}.1:81"),  # runtime: port
    ("SRV_2 127.0.0.1:1 disabled", "SRV_2 10.0.{i}.7:80"),  # a slot filled
    ("SRV_1 10.0.{i}.1:80", "SRV_9 10.0.{i}.1:80"),  # the name changed
    ("balance roundrobin", "balance leastconn"),  # not a server line
    ("SRV_1 10.0.{i}.1:80", "SRV_1 host{i}.example:80"),  # a hostname
    ("SRV_1 10.0.{i}.1:80", "SRV_1 10.0.{i}.1:80 check"),  # another field
    ("mode http\n    balance", "mode http\n    option forwardfor\n    balance"),  # a line more
]


@pytest.mark.parametrize("seed", range(60))
def test_comparing_piece_by_piece_gives_the_verdict_of_comparing_line_by_line(seed: int) -> None:
    import random

    from haptic.validation import structural

    rng = random.Random(seed)
    backends = "".join(f"backend be_{i}\n    mode http\n    balance roundrobin\n    server SRV_1 10.0.{i}.1:80\n"
                       f"    server SRV_2 127.0.0.1:1 disabled\n" for i in range(40))
    text = "global\n    maxconn 10\n\ndefaults\n    mode http\n\nfrontend fe\n    bind :80\n\n" + backends
    edited = text
    for _ in range(rng.randint(1, 3)):
        i = rng.randrange(40)
        old, new = rng.choice(_LINE_EDITS[:3] if rng.random() < 0.6 else _LINE_EDITS)
        old, new = old.format(i=i), new.format(i=i)
        at = edited.find(old, edited.find(f"backend be_{i}\n"))
        if at >= 0:
            edited = edited[:at] + new + edited[at + len(old):]
    if rng.random() < 0.2:
        edited = edited.replace("frontend fe\n    bind :80\n", "frontend fe\n    bind :81\n")
    aux = AuxFiles()
    pieces = structural_check(text, aux, edited, aux)
    structural._PIECES = False
    try:
        lines = structural_check(text, aux, edited, aux)
    finally:
        structural._PIECES = True
    assert pieces == lines


def test_a_checksum_the_caller_worked_out_is_not_worked_out_again(monkeypatch: pytest.MonkeyPatch) -> None:
    from haptic.validation import haproxy_check
    from haptic.validation.checksum import content_checksum

    aux = AuxFiles(maps=MAPS)
    known = content_checksum(BASE, aux)
    validator = HAProxyValidator("haproxy", runner=_CountingRunner(), structural=True)

    def again(config: str, aux: AuxFiles | None = None) -> str:
        raise AssertionError("the checksum was worked out again")

    monkeypatch.setattr(haproxy_check, "content_checksum", again)
    result = validator.validate(BASE, aux, checksum=known)
    assert result.valid and result.checksum == known
    with pytest.raises(AssertionError, match="worked out again"):
        validator.validate(_with("server SRV_1 10.0.1.1:80", "server SRV_1 10.0.1.2:80"), aux)


def test_a_renders_checksum_hands_the_event_logs_the_configs_digest() -> None:
    from blake3 import blake3

    from haptic.core import event
    from haptic.validation.checksum import content_checksum

    config = "global\n    maxconn 7\n" + "# é\n" * 3
    content_checksum(config, AuxFiles(maps=MAPS))
    seen: list[str] = []
    # probed before any digest() call, which would fill the memo itself
    known = event._DIGESTS.answer(config, None, lambda: seen.append("again") or {})  # type: ignore[func-returns-value]
    assert seen == []  # known: not worked out again
    assert known == event.digest(config) == {"blake3": blake3(config.encode()).hexdigest(),
                                             "bytes": len(config.encode())}


@pytest.mark.parametrize("seed", range(8))
def test_the_content_checksum_is_the_blake3_of_the_whole_texts_however_they_are_fed(seed: int) -> None:
    import random

    from blake3 import blake3

    from haptic.core.utf8 import SLICE
    from haptic.validation import checksum

    rng = random.Random(seed)
    alphabet = "abc \n\té日\U0001f600"
    config = "".join(rng.choice(alphabet) for _ in range(rng.choice((10, SLICE - 1, 3 * SLICE + 7))))
    maps = {f"m{i}.map": "".join(rng.choice(alphabet) for _ in range(rng.randrange(SLICE * 2)))
            for i in (1, 2)}
    whole = blake3(config.encode())
    for name in sorted(maps):
        for part in ("map", name, maps[name]):
            whole.update(b"\0")
            whole.update(part.encode())
    assert checksum.content_checksum(config, AuxFiles(maps=maps)) == whole.hexdigest()[:16]
    assert checksum.content_checksum(config) == blake3(config.encode()).hexdigest()[:16]


@pytest.mark.parametrize("blank", ["", " ", "\n\t \r\n", "\x1c\u3000"])
def test_a_blank_current_config_is_no_reason_to_reload_whatever_the_whitespace(blank: str) -> None:
    from haptic.validation.render_check import reloads_anyway

    assert blank.strip() == ""
    assert reloads_anyway(blank, "global\n") is False


def test_checks_against_one_passed_config_compare_the_places_found_before_and_those_cut_anew(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Every proof starts from the config haproxy -c passed last: a check finds the pieces that differ from it
    among those cut anew since (``changed_pieces``: the passed config's cut, once out of the memo, is cut again from
    the latest cut), and finds what comparing every piece finds."""
    from itertools import compress

    from haptic.core import text_cuts
    from haptic.core.text_cuts import BACKENDS, changed_pieces, cut

    def render(ports: dict[int, int]) -> str:
        return "global\n    maxconn 10\n" + "".join(
            f"backend b{i}\n    server s1 10.0.{i // 250}.{i % 250}:{ports.get(i, 80)} check\n" for i in range(3000))

    passed = render({})
    whole: list[int] = []  # per check: how many times every piece of a config's cut was compared

    def counting(indices: range, answers: object) -> object:
        whole[-1] += len(indices) > 100  # (not a changed section's own two pieces, parsed by the plan)
        return compress(indices, answers)  # type: ignore[call-overload]

    monkeypatch.setattr(text_cuts, "compress", counting)
    ports: dict[int, int] = {}
    # more checks than a lineage is followed back (16 cuts) and than the memo keeps cuts (8)
    changes = [(7, 81), (2900, 82), (7, 80), (1500, 83), (2900, 80)] + [(100 * k, 90 + k % 5) for k in range(1, 21)]
    for step, (i, port) in enumerate(changes):
        ports[i] = port
        config = render(ports)
        whole.append(0)
        verdict = structural_check(passed, AuxFiles(), config, AuxFiles())
        assert verdict.proven, verdict.reason
        old_pieces, new_pieces = cut(passed, BACKENDS), cut(config, BACKENDS)
        expected = [k for k, (a, b) in enumerate(zip(old_pieces, new_pieces, strict=True)) if a != b]
        assert changed_pieces(old_pieces, new_pieces) == expected, step
        assert verdict.changed_servers == len(expected)
    assert whole and all(n == 0 for n in whole[1:]), whole  # after the first check: no piece-by-piece comparison
