"""Steps mean what they say on the scripted backend: a settle that does not converge fails saying what
was pending, a traffic check without an answer shows the connection error, and the divergence report
names the first check whose outcome differs between two backends."""

from __future__ import annotations

from simulator.scenario.divergence import compare, divergence_table, first_difference
from simulator.scenario.runner import CellResult, Outcome
from tests.unit.simulator.scenario.conftest import Runner, service

HEAD = f"""\
name: t
description: settle and divergence test
setup:
  pods: 2
  config: {{file: cfg.yaml}}
  objects:
    - {service("web")}
steps:
"""


def test_a_settle_that_does_not_converge_says_what_was_pending(run_scenario: Runner) -> None:
    result = run_scenario(HEAD + f"""\
  - apply: {service("api")}
  - settle: 1s
""")
    assert result.status == "failed"
    [failure] = result.failures
    assert failure.check == "settle"
    assert "not converged 1s after t=2.422s: a reconciliation is due at t=4.801s" in failure.message


def test_a_traffic_check_without_an_answer_shows_the_connection_error(run_scenario: Runner) -> None:
    result = run_scenario(HEAD + "  - expect: {traffic: {host: web.example, status: 200}}\n",
                          bugs=frozenset({"refused"}))
    assert result.status == "failed"
    assert "expected 200, got no answer (ConnectError: [Errno 111] Connection refused)" in result.failures[0].message


def test_outcomes_follow_the_run_in_order(run_scenario: Runner) -> None:
    result = run_scenario(HEAD + """\
  - expect: {config: {contains: backend default_web}, traffic: {host: web.example}}
  - settle:
""")
    assert result.status == "passed", result.report()
    assert [(o.step_index, o.check, o.status) for o in result.outcomes] == [
        (None, "settle", "pass"), (None, "invariants", "pass"),
        (0, "config", "pass"), (0, "traffic", "n/a"), (0, "invariants", "pass"),
        (1, "settle", "pass"), (1, "invariants", "pass")]


def test_the_first_differing_check_of_two_backends(run_scenario: Runner) -> None:
    body = HEAD.replace("pods: 2", "pods: 2\n  settle: false") + """\
  - advance: 5s
  - expect: {config: {pod: 0, contains: backend default_web}}
  - expect: {converged: {within: 10s}}
"""
    good = run_scenario(body)
    bad = run_scenario(body, bugs=frozenset({"never_converge"}))
    bad.backend = "other"
    assert good.status == "passed" and bad.status == "failed"
    difference = first_difference(good, bad)
    assert difference.startswith("step 3 (expect) converged: scripted pass; other fail (converged: not converged")
    assert first_difference(good, good) == ""
    [row] = compare([good, bad], ["scripted", "other"])
    assert row.verdicts == {"scripted": "PASS", "other": "FAIL"} and row.diverges
    table = divergence_table([row], ["scripted", "other"])
    assert "1 of 1 scenario cell(s) diverge between scripted and other" in table


def test_a_backend_that_cannot_run_a_cell_is_named_with_its_reason() -> None:
    ran = CellResult("c", "sim", "c.yaml", 1, outcomes=[Outcome(0, "expect", "config", "pass")])
    skipped = CellResult("c", "local", "c.yaml", 1, status="unavailable", message="no haproxy here")
    assert first_difference(ran, skipped) == "local cannot run it: no haproxy here"
