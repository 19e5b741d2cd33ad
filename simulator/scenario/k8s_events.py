"""Kubernetes Events and status conditions as scenario results.

Events are read in both API groups a cluster serves them in: ``v1`` (``involvedObject``, ``message``,
``source.component``, ``count``) and ``events.k8s.io/v1`` (``regarding``, ``note``,
``reportingController``, ``series.count``); the same Event seen through both (same uid) counts once.
Conditions are the ``status.conditions`` list of any object, as ``kubectl get -o yaml`` shows them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .checks import CheckFailure
from .event_match import lookup
from .schema import ConditionMatch, KubeEventMatch, KubeEventsExpectation, ObjectExpectation

#: where Events are served; the runner lists both
EVENT_API_VERSIONS = ("v1", "events.k8s.io/v1")


@dataclass(frozen=True)
class KubeEvent:
    """One Event, whichever API group it was read from."""

    uid: str
    kind: str
    namespace: str
    name: str
    reason: str
    type: str
    message: str
    source: str
    count: int

    @property
    def object(self) -> str:
        return f"{self.kind}/{self.namespace}/{self.name}" if self.namespace else f"{self.kind}/{self.name}"

    def line(self) -> str:
        return f"{self.type or '-'} {self.reason or '-'} {self.object} x{self.count} ({self.source}): {self.message}"


def normalize(obj: Mapping[str, Any]) -> KubeEvent:
    meta = obj.get("metadata") or {}
    about = obj.get("regarding") or obj.get("involvedObject") or {}
    source = obj.get("reportingController") or (obj.get("source") or {}).get("component") or \
        obj.get("reportingComponent") or ""
    series = obj.get("series") or {}
    count = series.get("count") or obj.get("count") or 1
    return KubeEvent(
        uid=str(meta.get("uid") or f"{meta.get('namespace')}/{meta.get('name')}"),
        kind=str(about.get("kind") or ""), namespace=str(about.get("namespace") or ""),
        name=str(about.get("name") or ""), reason=str(obj.get("reason") or ""), type=str(obj.get("type") or ""),
        message=str(obj.get("note") or obj.get("message") or ""), source=str(source), count=int(count))


def collect(listings: Sequence[Sequence[Mapping[str, Any]]]) -> list[KubeEvent]:
    """The Events of several listings (one per API group), each uid once, in a stable order."""
    seen: dict[str, KubeEvent] = {}
    for listing in listings:
        for obj in listing:
            event = normalize(obj)
            known = seen.get(event.uid)
            if known is None or event.count > known.count:
                seen[event.uid] = event
    return sorted(seen.values(), key=lambda e: (e.object, e.reason, e.uid))


def fresh(events: Sequence[KubeEvent], before: Mapping[str, int]) -> list[KubeEvent]:
    """Events new since ``before`` (uid -> count then), or repeated since (a higher count)."""
    return [e for e in events if e.count > before.get(e.uid, 0)]


def matches(match: KubeEventMatch, event: KubeEvent) -> bool:
    if match.object is not None and not _same_object(match.object, event):
        return False
    if match.reason is not None and match.reason != event.reason:
        return False
    if match.type is not None and match.type != event.type:
        return False
    if match.source is not None and match.source != event.source:
        return False
    if match.message is not None and match.message not in event.message:
        return False
    return match.regex is None or re.search(match.regex, event.message) is not None


def _same_object(ref: str, event: KubeEvent) -> bool:
    parts = ref.split("/")
    kind, name = parts[0], parts[-1]
    namespace = parts[1] if len(parts) == 3 else ""
    return event.kind == kind and event.name == name and event.namespace == namespace


def describe(match: KubeEventMatch) -> str:
    parts = [f"{key}={value!r}" for key, value in match.model_dump(exclude_none=True).items()]
    return "Event(" + ", ".join(parts) + ")"


def check_k8s_events(expect: KubeEventsExpectation, events: Sequence[KubeEvent], span: str) -> list[CheckFailure]:
    failures: list[CheckFailure] = []
    listing = "".join(e.line() + "\n" for e in events)
    for match in expect.present:
        if not any(matches(match, e) for e in events):
            failures.append(CheckFailure("k8s_events.present", f"no {describe(match)} {span}",
                                         expected=describe(match) + "\n", actual=listing or "(no Events)\n"))
    for match in expect.absent:
        hits = [e for e in events if matches(match, e)]
        if hits:
            failures.append(CheckFailure("k8s_events.absent", f"{len(hits)} x {describe(match)} {span}, first: "
                                         f"{hits[0].line()}"))
    return failures


# -- conditions -------------------------------------------------------------------------------------


def _condition_holds(match: ConditionMatch, condition: Mapping[str, Any]) -> bool:
    if condition.get("type") != match.type:
        return False
    if match.status is not None and condition.get("status") != match.status:
        return False
    if match.reason is not None and condition.get("reason") != match.reason:
        return False
    return match.message is None or match.message in str(condition.get("message") or "")


def check_object_status(label: str, expect: ObjectExpectation, obj: Mapping[str, Any],
                     render: Any) -> list[CheckFailure]:
    conditions = [c for c in ((obj.get("status") or {}).get("conditions") or []) if isinstance(c, Mapping)]
    shown = render(conditions) if conditions else "(no status.conditions)\n"
    failures = []
    for match in expect.conditions:
        if not any(_condition_holds(match, c) for c in conditions):
            wanted = match.model_dump(exclude_none=True)
            failures.append(CheckFailure(f"{label}.conditions", f"no condition {wanted}", expected=render([wanted]),
                                         actual=shown))
    for kind in expect.absent_conditions:
        if any(c.get("type") == kind for c in conditions):
            failures.append(CheckFailure(f"{label}.absent_conditions", f"condition {kind} is set",
                                         actual=shown))
    for path in expect.absent_fields:
        found, value = lookup(obj, path)
        if found:
            failures.append(CheckFailure(f"{label}.{path}", f"expected absent, is {value!r}"))
    return failures
