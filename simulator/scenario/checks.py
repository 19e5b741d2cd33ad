"""Expectation checks: pure functions from what a backend shows to a list of ``CheckFailure``.

Nothing here mutates a backend; the runner decides when to check and what counts as "since".
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from prometheus_client.parser import text_string_to_metric_families

from .backend import TraceRecord
from .event_match import describe, event_matches, lookup, same
from .schema import Count, EventsExpectation, MetricExpectation, StatusExpectation, TextMatch


@dataclass(frozen=True)
class CheckFailure:
    """One failed check: what was checked, a message, and expected/actual texts for the diff."""

    check: str
    message: str
    expected: str = ""
    actual: str = ""

    def diff(self) -> str:
        if not self.expected and not self.actual:
            return ""
        expected = self.expected.splitlines(keepends=True)
        actual = self.actual.splitlines(keepends=True)
        # short texts are shown whole: the context is what tells why a line is missing
        context = max(len(expected), len(actual)) if max(len(expected), len(actual)) <= 120 else 3
        lines = difflib.unified_diff(expected, actual, fromfile="expected", tofile="actual", n=context)
        return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def check_count(check: str, count: Count, value: float) -> list[CheckFailure]:
    problems = []
    if count.eq is not None and value != count.eq:
        problems.append(f"== {_num(count.eq)}")
    if count.min is not None and value < count.min:
        problems.append(f">= {_num(count.min)}")
    if count.max is not None and value > count.max:
        problems.append(f"<= {_num(count.max)}")
    if not problems:
        return []
    wanted = " and ".join(problems)
    return [CheckFailure(check, f"expected {wanted}, got {_num(value)}", expected=wanted + "\n",
                         actual=_num(value) + "\n")]


def _num(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(value)


def check_text(check: str, match: TextMatch, text: str | None, golden: Mapping[str, str]) -> list[CheckFailure]:
    """``contains`` / ``not_contains`` / ``regex`` / ``equals_file`` on a config or file text."""
    if text is None:
        return [CheckFailure(check, "nothing there (no config deployed / no such file)")]
    failures: list[CheckFailure] = []
    for needle in match.contains:
        if needle not in text:
            failures.append(CheckFailure(f"{check}.contains", f"missing {needle!r}", expected=_with(text, needle),
                                         actual=text))
    for needle in match.not_contains:
        if needle in text:
            line = next(ln for ln in text.splitlines() if needle in ln) if "\n" not in needle else needle
            failures.append(CheckFailure(f"{check}.not_contains", f"unexpectedly present {needle!r} in line {line!r}",
                                         expected=_without(text, needle), actual=text))
    for pattern in match.regex:
        if re.search(pattern, text, flags=re.MULTILINE) is None:
            failures.append(CheckFailure(f"{check}.regex", f"no match for /{pattern}/", expected=f"/{pattern}/\n",
                                         actual=text))
    if match.equals_file is not None:
        expected = golden[match.equals_file]
        if _normalise(expected) != _normalise(text):
            failures.append(CheckFailure(f"{check}.equals_file", f"differs from {match.equals_file}",
                                         expected=expected, actual=text))
    return failures


def _with(text: str, needle: str) -> str:
    return text + ("" if text.endswith("\n") or not text else "\n") + needle + "\n"


def _without(text: str, needle: str) -> str:
    return "".join(line for line in text.splitlines(keepends=True) if needle not in line)


def _normalise(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.strip("\n").splitlines())


# -- events ---------------------------------------------------------------------------------------


def _listing(records: Sequence[TraceRecord]) -> str:
    return "".join(f"{r.t:10.3f} {r.source:<14} {r.type}\n" for r in records)


def check_events(expect: EventsExpectation, records: Sequence[TraceRecord], span: str) -> list[CheckFailure]:
    failures: list[CheckFailure] = []
    domain = [r for r in records if r.source != "runner"]
    for match in expect.present:
        if not any(event_matches(match, r) for r in domain):
            failures.append(CheckFailure("events.present", f"no {describe(match)} {span}",
                                         expected=describe(match) + "\n", actual=_listing(domain)))
    for match in expect.absent:
        hits = [r for r in domain if event_matches(match, r)]
        if hits:
            failures.append(CheckFailure("events.absent", f"{len(hits)} x {describe(match)} {span}, first at "
                                         f"t={hits[0].t:.3f}s from {hits[0].source}"))
    if expect.in_order:
        position = 0
        for record in domain:
            if position < len(expect.in_order) and event_matches(expect.in_order[position], record):
                position += 1
        if position < len(expect.in_order):
            wanted = "".join(describe(m) + "\n" for m in expect.in_order)
            missing = describe(expect.in_order[position])
            message = f"only the first {position} of {len(expect.in_order)} events appeared in order {span}; " \
                f"missing {missing}"
            failures.append(CheckFailure("events.in_order", message, expected=wanted, actual=_listing(domain)))
    for type_name, count in expect.count.items():
        n = sum(1 for r in domain if r.type == type_name)
        failures.extend(check_count(f"events.count[{type_name}]", count, n))
    return failures


# -- metrics and objects --------------------------------------------------------------------------


def check_metric(expect: MetricExpectation, exposition: str) -> list[CheckFailure]:
    total: float | None = None
    names: list[str] = []
    for family in text_string_to_metric_families(exposition):
        for sample in family.samples:
            names.append(sample.name)
            if sample.name != expect.name:
                continue
            if all(sample.labels.get(k) == v for k, v in expect.labels.items()):
                total = (total or 0.0) + float(sample.value)
    check = f"metric[{expect.name}{_labels(expect.labels)}]"
    if total is None:
        near = difflib.get_close_matches(expect.name, sorted(set(names)), n=3)
        hint = f" (similar: {', '.join(near)})" if near else ""
        return [CheckFailure(check, f"no such sample{hint}")]
    return check_count(check, expect, total)


def _labels(labels: Mapping[str, str]) -> str:
    return "{" + ",".join(f'{k}="{v}"' for k, v in labels.items()) + "}" if labels else ""


def check_object(check: str, expect: StatusExpectation, objects: Sequence[Mapping[str, Any]],
                 render: Callable[[Any], str]) -> list[CheckFailure]:
    """Fields of the one object ``expect`` names (by name/namespace, or the only one there is)."""
    chosen = [o for o in objects if _named(o, expect)]
    if not expect.exists:
        if chosen:
            return [CheckFailure(check, f"expected no object, found {_ident(chosen[0])}")]
        return []
    if len(chosen) != 1:
        names = ", ".join(_ident(o) for o in objects) or "none"
        return [CheckFailure(check, f"expected exactly one object, found {len(chosen)} (present: {names})")]
    obj = chosen[0]
    failures = []
    for path, expected in expect.fields.items():
        found, actual = lookup(obj, path)
        if not found:
            failures.append(CheckFailure(f"{check}.{path}", "field absent", expected=render(expected),
                                         actual=render(obj)))
        elif not same(expected, actual):
            failures.append(CheckFailure(f"{check}.{path}", f"expected {expected!r}, got {actual!r}",
                                         expected=render(expected), actual=render(actual)))
    for path, needle in expect.contains.items():
        found, actual = lookup(obj, path)
        text = actual if isinstance(actual, str) else render(actual)
        if not found or needle not in text:
            failures.append(CheckFailure(f"{check}.{path}", f"missing {needle!r}", expected=_with(text, needle),
                                         actual=text))
    return failures


def _named(obj: Mapping[str, Any], expect: StatusExpectation) -> bool:
    meta = obj.get("metadata") or {}
    if expect.name is not None and meta.get("name") != expect.name:
        return False
    return not (expect.namespace is not None and meta.get("namespace") != expect.namespace)


def _ident(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    ns = meta.get("namespace")
    return f"{ns}/{meta.get('name')}" if ns else str(meta.get("name"))
