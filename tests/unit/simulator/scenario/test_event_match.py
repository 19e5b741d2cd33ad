"""Event patterns: literals, ``not`` / ``in`` matchers, ``except`` alternatives, on fields and on ``source``."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from simulator.scenario.backend import TraceRecord
from simulator.scenario.event_match import describe, event_matches
from simulator.scenario.schema import EventMatch, EventsExpectation
from tests.unit.simulator.scenario.conftest import Runner, service


def rec(source: str, type_: str = "leader.became", **data: Any) -> TraceRecord:
    return TraceRecord(1.0, source, type_, data)


def match(**spec: Any) -> EventMatch:
    return EventMatch.model_validate(spec)


def test_source_not_and_in() -> None:
    other = match(type="leader.became", source={"not": "controller-0"})
    assert not event_matches(other, rec("controller-0"))
    assert event_matches(other, rec("controller-1"))
    either = match(type="leader.became", source={"in": ["controller-1", "controller-2"]})
    assert event_matches(either, rec("controller-2"))
    assert not event_matches(either, rec("controller-0"))


def test_field_not_holds_for_an_absent_field_and_in_needs_it_present() -> None:
    assert event_matches(match(type="x", fields={"failed": {"not": 0}}), rec("c", "x"))
    assert not event_matches(match(type="x", fields={"failed": {"not": 0}}), rec("c", "x", failed=0))
    assert event_matches(match(type="x", fields={"failed": {"not": "0"}}), rec("c", "x", failed=2))
    assert not event_matches(match(type="x", fields={"failed": {"in": [1, 2]}}), rec("c", "x"))
    assert event_matches(match(type="x", fields={"result.failed": {"in": [1, 2]}}), rec("c", "x", result={"failed": 2}))


def test_except_excludes_events_matching_all_fields_of_one_alternative() -> None:
    pattern = match(type="deployment.completed", **{"except": [{"source": "controller-0", "failed": 0},
                                                                {"failed": 3}]})
    assert not event_matches(pattern, rec("controller-0", "deployment.completed", failed=0))
    assert event_matches(pattern, rec("controller-0", "deployment.completed", failed=1))
    assert event_matches(pattern, rec("controller-1", "deployment.completed", failed=0))
    assert not event_matches(pattern, rec("controller-1", "deployment.completed", failed=3))
    single = match(type="leader.became", **{"except": {"source": "controller-0"}})
    assert single.except_ == [{"source": "controller-0"}]
    assert describe(single) == "leader.became(except source='controller-0')"


def test_matcher_with_unknown_keys_is_refused() -> None:
    with pytest.raises(ValidationError, match="only 'not' and 'in'"):
        match(type="x", fields={"failed": {"not": 0, "eq": 1}})
    with pytest.raises(ValidationError, match="'in' takes a list"):
        match(type="x", source={"in": "controller-1"})


def test_absent_with_a_negated_source_is_a_check_that_can_fail() -> None:
    expectation = EventsExpectation.model_validate({"absent": [{"type": "leader.became",
                                                                "source": {"not": "controller-0"}}]})
    from simulator.scenario.checks import check_events

    assert check_events(expectation, [rec("controller-0")], "since the start") == []
    [failure] = check_events(expectation, [rec("controller-0"), rec("controller-1")], "since the start")
    assert failure.check == "events.absent"
    assert "leader.became(source!='controller-0')" in failure.message and "controller-1" in failure.message


def test_runner_checks_except_on_the_scripted_backend(run_scenario: Runner) -> None:
    body = f"""\
name: t
description: except on source
setup:
  pods: 1
  config: {{file: cfg.yaml}}
  objects: [{service("web")}]
steps:
  - expect:
      events:
        since: start
        present: [{{type: leader.became, except: {{source: replica-1}}}}]
        absent: [{{type: leader.became, source: {{not: replica-0}}}}]
"""
    assert run_scenario(body).status == "passed"
    failing = body.replace("except: {source: replica-1}", "except: {source: replica-0}")
    result = run_scenario(failing)
    assert result.status == "failed"
    assert "no leader.became(except source='replica-0') since the start" in result.report()
