"""Every assertion type (pass and fail) and every target."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import pytest

from haptic.config.models import ValidationAssertion
from haptic.dataplane.aux_files import AuxFiles
from haptic.templating.engine import RenderResult
from haptic.validation.assertions import AssertionInputs, evaluate
from haptic.validation.haproxy_check import HAProxyValidator
from haptic.validation.process import ProcessResult

CONFIG = "global\n    maxconn 10\nfrontend a\nbackend b1\nbackend b2\n"
AUX = AuxFiles(
    maps={"host.map": "a.test be1\n"},
    files={"503.http": "HTTP/1.0 503\n"},
    certificates={"x.pem": "-----BEGIN CERTIFICATE-----\n"},
    crt_lists={"crt-list.txt": "ssl/x.pem a.test\n"},
)


class ScriptedRunner:
    """A process-runner port double answering like haproxy -c would."""

    def __init__(self, returncode: int, stderr: str = "") -> None:
        self.result = ProcessResult(returncode, "", stderr)
        self.calls: list[Sequence[str]] = []

    def run(self, argv: Sequence[str], *, cwd: str, time_limit: float) -> ProcessResult:
        self.calls.append(list(argv))
        return self.result


def inputs(
    result: RenderResult | None = None, error: str | None = None, runner: ScriptedRunner | None = None, **kw: Any
) -> AssertionInputs:
    rendered = result if result is not None or error is not None else RenderResult(CONFIG, AUX)
    return AssertionInputs(
        result=rendered,
        rendering_error=error,
        jsonpath_data=kw.get("data", {"extraContext": {"a": {"b": 3}}, "resources": {"x": [{"n": "first"}]}}),
        rerender=kw.get("rerender", lambda: RenderResult(CONFIG, AUX)),
        validator=HAProxyValidator("haproxy", runner=runner or ScriptedRunner(0)),
    )


def check(data: dict[str, Any], ins: AssertionInputs | None = None) -> tuple[bool, str]:
    outcome = evaluate(ValidationAssertion.model_validate(data), ins or inputs())
    return outcome.passed, outcome.message


@pytest.mark.parametrize(
    ("target", "pattern"),
    [
        ("", "^backend b1$"),
        ("haproxy.cfg", "maxconn 10"),
        ("map:host.map", r"^a\.test be1$"),
        ("file:503.http", "503"),
        ("cert:x.pem", "BEGIN CERTIFICATE"),
        ("crt-list:crt-list.txt", r"ssl/x\.pem"),
    ],
)
def test_contains_on_every_target(target: str, pattern: str) -> None:
    assert check({"type": "contains", "target": target, "pattern": pattern}) == (True, "")
    passed, message = check({"type": "not_contains", "target": target, "pattern": pattern})
    assert not passed and "found" in message


def test_contains_failure_and_missing_target() -> None:
    passed, message = check({"type": "contains", "pattern": "nope"})
    assert not passed and "not found in haproxy.cfg" in message
    passed, message = check({"type": "contains", "target": "map:missing.map", "pattern": "x"})
    assert not passed and "no map named 'missing.map' (rendered: host.map)" in message
    assert check({"type": "not_contains", "pattern": "nope"}) == (True, "")


def test_match_count() -> None:
    assert check({"type": "match_count", "pattern": "^backend ", "expected": 2})[0]
    assert check({"type": "match_count", "pattern": "^backend ", "expected": "3"}) == (False, "2 matches, expected 3")


def test_equals() -> None:
    assert check({"type": "equals", "target": "map:host.map", "expected": "a.test be1\n"})[0]
    passed, message = check({"type": "equals", "target": "map:host.map", "expected": "other"})
    assert not passed and "expected 'other'" in message


def test_match_order() -> None:
    assert check({"type": "match_order", "patterns": ["^global", "^frontend", "^backend b1", "^backend b2"]})[0]
    passed, message = check({"type": "match_order", "patterns": ["^backend b2", "^backend b1"]})
    assert not passed and "'^backend b1' not found after position" in message


def test_jsonpath() -> None:
    assert check({"type": "jsonpath", "jsonpath": "{.extraContext.a.b}", "expected": "3"})[0]
    assert check({"type": "jsonpath", "jsonpath": "resources.x[0].n"})[0]
    passed, message = check({"type": "jsonpath", "jsonpath": "extraContext.a.b", "expected": "4"})
    assert not passed and "is '3', expected '4'" in message
    passed, message = check({"type": "jsonpath", "jsonpath": "extraContext.zzz"})
    assert not passed and "matched nothing" in message


def test_deterministic() -> None:
    assert check({"type": "deterministic"})[0]
    changed = inputs(rerender=lambda: RenderResult(CONFIG.replace("b2", "b3"), AUX))
    passed, message = check({"type": "deterministic"}, changed)
    assert not passed and "-backend b2" in message and "+backend b3" in message
    other_map = AuxFiles(maps={"host.map": "b.test be2\n"})
    passed, message = check({"type": "deterministic"}, inputs(rerender=lambda: RenderResult(CONFIG, other_map)))
    assert not passed and "-a.test be1" in message and "+b.test be2" in message
    fewer = AuxFiles(maps=AUX.maps)
    passed, message = check({"type": "deterministic"}, inputs(rerender=lambda: RenderResult(CONFIG, fewer)))
    assert not passed and "file sets differ" in message


def test_haproxy_valid_uses_the_runner_port() -> None:
    runner = ScriptedRunner(0)
    assert check({"type": "haproxy_valid"}, inputs(runner=runner)) == (True, "")
    assert runner.calls and runner.calls[0][:3] == ["haproxy", "-c", "-f"]
    alert = "[ALERT]    (1) : config : parsing [X:2] : unknown keyword 'maxconn' in 'global' section\n"
    failing = ScriptedRunner(1, alert)
    passed, message = check({"type": "haproxy_valid"}, inputs(runner=failing))
    assert not passed and "unknown keyword 'maxconn'" in message


def test_rendering_error_target_and_failed_render() -> None:
    failed = inputs(error="template 'haproxy.cfg' line 2: boom")
    assert check({"type": "contains", "target": "rendering_error", "pattern": "line 2: boom"}, failed)[0]
    assert check({"type": "equals", "target": "rendering_error", "expected": ""})[0], "no error renders as empty"
    for kind in ({"type": "contains", "pattern": "x"}, {"type": "haproxy_valid"}, {"type": "deterministic"}):
        passed, message = check(kind, failed)
        assert not passed and "rendering failed" in message


def test_invalid_regex_fails_the_assertion_instead_of_raising() -> None:
    # A config that bypassed load validation (model_construct) still gets a failed assertion, not an exception.
    outcome = evaluate(ValidationAssertion.model_construct(type="contains", pattern="("), inputs())
    assert not outcome.passed and outcome.message.startswith("pattern: pattern '(': invalid regex for RE2")
    lookahead = ValidationAssertion.model_construct(type="match_order", patterns=["global", "b(?=1)"])
    outcome = evaluate(lookahead, inputs())
    assert not outcome.passed and outcome.message.startswith("patterns[1]: ") and "lookaround" in outcome.message


@pytest.mark.parametrize(("data", "field", "why"), [
    ({"type": "contains", "pattern": "("}, "pattern", "invalid regex for RE2"),
    ({"type": "not_contains", "pattern": "(a)\\1"}, "pattern", "backreferences"),
    ({"type": "match_order", "patterns": ["ok", "(?<=x)y"]}, "patterns[1]", "lookaround"),
])
def test_patterns_that_re2_cannot_run_are_refused_at_load_naming_the_field(data: dict[str, Any], field: str,
                                                                           why: str) -> None:
    with pytest.raises(ValueError, match=r"(?s)" + re.escape(field) + ": pattern .*" + why):
        ValidationAssertion.model_validate(data)


def test_patterns_run_in_linear_time() -> None:
    # ^(a|a)+$ backtracks exponentially on Python's re (minutes for 32 a's and a "!"): RE2 answers at once.
    text = "a" * 5000 + "!"
    passed, _ = check({"type": "not_contains", "target": "map:host.map", "pattern": "^(a|a)+$"},
                      inputs(RenderResult(CONFIG, AuxFiles(maps={"host.map": text}))))
    assert passed
    assert check({"type": "match_count", "pattern": "^backend b", "expected": 2})[0], "multi-line anchors"
