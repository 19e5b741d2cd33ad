"""Comparing a current and a desired haproxy.cfg into an ordered list of Dataplane operations.

Identity follows the Dataplane API: sections, servers, binds and other named children by name,
ACLs by ACL name, rule lists by position. Operations come out as deletes (children before parents),
then creates (parents before children), then updates. A plan needs no reload exactly when every
operation is a server update touching only runtime-applicable fields.

Sections whose words are identical are skipped with one list comparison, so a one-line change in a
large config costs a linear scan, not a deep comparison of every section.
"""

from __future__ import annotations

import operator
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable
from itertools import compress
from typing import Any

from haptic.dataplane.operations import Action, Operation, SyncPlan, count_operation, operation_summary
from haptic.dataplane.parser import Directive, HAProxyConfig, Section, parse_config, parse_config_reusing
from haptic.dataplane.section_kinds import CHILD_PRIORITY, RULE_PRIORITY, SECTION_PRIORITY
from haptic.dataplane.server_model import runtime_only_change, server_words_to_model

__all__ = ["clear_parse_cache", "plan", "plan_parsed", "replacement_summary"]

# Wording follows the original controller's operation descriptions (its sync test tables).
_CHILD_LABELS: dict[str, str] = {
    "server": "server",
    "server-template": "server template",
    "bind": "bind",
    "dgram-bind": "dgram-bind",
    "acl": "ACL",
    "peer": "peer entry",
    "nameserver": "nameserver",
    "mailer": "mailer entry",
    "user": "user",
    "group": "group",
}

_RULE_LABELS: dict[str, str] = {
    "http-request": "HTTP request rule",
    "http-response": "HTTP response rule",
    "http-after-response": "HTTP after response rule",
    "tcp-request": "TCP request rule",
    "tcp-response": "TCP response rule",
    "http-check": "HTTP check",
    "tcp-check": "TCP check",
    "filter": "filter",
    "log": "log target",
    "capture": "capture",
    "use_backend": "backend switching rule",
    "use-server": "server switching rule",
    "stick": "stick rule",
    "redirect": "redirect rule",
    "quic-initial": "QUIC initial rule",
}

_SERVER_MODEL_KINDS = frozenset({"backend", "listen"})
# Sections whose named children are attributes of the section for the Dataplane API (a ring's
# servers are fields of the ring model): changing one updates the section.
_CHILDREN_ARE_ATTRIBUTES = frozenset({"ring"})

# How a section is named when it is the object of an operation ...
_SECTION_LABELS: dict[str, str] = {
    "resolvers": "resolver",
    "peers": "peer section",
    "acme": "acme-provider",
    "http-errors": "http-errors section",
}
# ... and when it is the parent of one (container children).
_PARENT_LABELS: dict[str, str] = {
    "resolvers": "resolvers section",
    "mailers": "mailers section",
    "peers": "peer section",
}

_PHASE = {"delete": 0, "create": 1, "update": 2}


def parsed(text: str) -> HAProxyConfig:
    """``text`` parsed, from the cache ``plan`` keeps (a desired config is planned against every pod)."""
    config = _PARSED.get(text)
    return config if config is not None else _PARSED.put(text, parse_config(text))


def plan(current: str, desired: str) -> SyncPlan:
    """Compare two haproxy.cfg texts. Raises ``ConfigParseError`` if either cannot be parsed.

    The desired config is parsed in full (and cached: it is planned against every HAProxy
    instance); the current one reuses every section whose text is unchanged.
    """
    desired_config = parsed(desired)
    current_config = _PARSED.get(current)
    if current_config is None:
        current_config = _PARSED.put(current, parse_config_reusing(current, desired_config))
    return plan_parsed(current_config, desired_config)


def clear_parse_cache() -> None:
    """Forget every parsed config ``plan()`` keeps (benchmarks measure cold runs with it)."""
    _PARSED.clear()


class _ParseCache:
    """The few most recently planned texts and their parse results (HAPTIC keeps four too)."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._entries: OrderedDict[str, HAProxyConfig] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, text: str) -> HAProxyConfig | None:
        with self._lock:
            config = self._entries.get(text)
            if config is not None:
                self._entries.move_to_end(text)
            return config

    def put(self, text: str, config: HAProxyConfig) -> HAProxyConfig:
        with self._lock:
            self._entries[text] = config
            self._entries.move_to_end(text)
            while len(self._entries) > self._size:
                self._entries.popitem(last=False)
        return config

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


_PARSED = _ParseCache(4)


def plan_parsed(current: HAProxyConfig, desired: HAProxyConfig) -> SyncPlan:
    """Compare two parsed configs (not modified)."""
    planner = _Planner()
    _walk(planner, current, desired, planner.create_section)
    return planner.result()


def replacement_summary(current: HAProxyConfig, desired: HAProxyConfig) -> dict[str, int] | None:
    """``operation_summary`` of ``plan_parsed(current, desired)`` without building the operations of the
    sections it creates (None: the plan is empty). For a configuration that goes whole in one raw push
    whatever its plan (a freshly started Dataplane API): a first deployment creates 3,000 backends and
    30,000 servers, whose operations would only be counted."""
    planner = _Planner()
    created: list[Section] = []
    _walk(planner, current, desired, created.append)
    if not created and not planner.pending:
        return None
    summary = operation_summary(planner.result().operations)
    for section in created:
        summary["totalAPIOperations"] += _count_created(summary, section)
    return summary


def _walk(planner: _Planner, current: HAProxyConfig, desired: HAProxyConfig,
          create: Callable[[Section], None]) -> None:
    added, left = _differing(desired, current)
    for section in added:
        existing = current.find(section.key)
        if existing is None:
            create(section)
        elif existing is not section and not existing.same_content(section):
            planner.compare_sections(existing, section)
    for section in left:
        if desired.find(section.key) is None:
            planner.emit("delete", section, None, None, None, _section_description("delete", section))


def _count_created(summary: dict[str, int], section: Section) -> int:
    """Adds to ``summary`` what ``_Planner.create_section`` emits for ``section``; returns how many operations."""
    count_operation(summary, "create", section.kind, None)
    if section.kind in _CHILDREN_ARE_ATTRIBUTES:
        return 1
    total = 1
    for child_type, children in section.named.items():
        count_operation(summary, "create", section.kind, child_type, len(children))
        total += len(children)
    return total + len(section.acls) + sum(len(rules) for rules in section.rules.values())


def _differing(desired: HAProxyConfig, current: HAProxyConfig) -> tuple[Iterable[Section], Iterable[Section]]:
    """``_not_in`` both ways: ``desired``'s sections ``current`` does not hold, and the other way round. Two
    configs of as many sections (most likely the same sections in the same places) are compared place by place,
    once for both: a section in a place of its own is held iff it is one of the other's not in their own place."""
    ours, theirs = desired.sections, current.sections
    if len(ours) != len(theirs):
        return _not_in(ours, current), _not_in(theirs, desired)
    derived = desired.derived
    if derived is not None and derived[0]() is current:
        # parsed piece-wise from ``current``: every place but those parsed holds ``current``'s very section
        places = [i for start, end in derived[1] for i in range(start, end) if ours[i] is not theirs[i]]
        moved, moved_from = [ours[i] for i in places], [theirs[i] for i in places]
    else:
        elsewhere = list(map(operator.is_not, ours, theirs))
        moved, moved_from = list(compress(ours, elsewhere)), list(compress(theirs, elsewhere))
    moved_ids, moved_from_ids = set(map(id, moved)), set(map(id, moved_from))
    added = [s for s in moved if id(s) not in moved_from_ids] if _keyed_once(current) else ours
    left = [s for s in moved_from if id(s) not in moved_ids] if _keyed_once(desired) else theirs
    return added, left


def _keyed_once(config: HAProxyConfig) -> bool:
    """No two of ``config``'s sections under one key: ``by_key`` names each of them."""
    return config.key_count == len(config.sections)


def _not_in(sections: list[Section], other: HAProxyConfig) -> Iterable[Section]:
    """``sections`` without those ``other`` holds as the very objects (the parser shares an unchanged section
    between the parses of two texts): for such a section the loops above do nothing, as long as ``other`` holds
    no two sections under one key. Found at C speed: an endpoint change among 10,000 backends compares one
    section, not 10,000."""
    if not _keyed_once(other):
        return sections
    held = set(map(id, other.sections))
    return compress(sections, map(operator.not_, map(held.__contains__, map(id, sections))))


class _Planner:
    def __init__(self) -> None:
        self._ops: list[tuple[tuple[int, int, int], Operation]] = []

    @property
    def pending(self) -> int:
        """Operations emitted so far."""
        return len(self._ops)

    def result(self) -> SyncPlan:
        self._ops.sort(key=lambda item: item[0])
        operations = tuple(op for _, op in self._ops)
        return SyncPlan(operations=operations, reload_required=not all(op.runtime for op in operations))

    def emit(
        self,
        action: Action,
        section: Section,
        child_type: str | None,
        child_name: str | None,
        index: int | None,
        description: str,
        *,
        runtime: bool = False,
        payload: dict[str, Any] | None = None,
        lines: tuple[str, ...] = (),
        previous: dict[str, Any] | None = None,
    ) -> None:
        if child_type is None:
            base = SECTION_PRIORITY.get(section.kind, 30)
        else:
            base = CHILD_PRIORITY.get(child_type, RULE_PRIORITY)
        order = (_PHASE[action], -base if action == "delete" else base, len(self._ops))
        op = Operation(
            action=action,
            section_type=section.kind,
            section_name=section.name,
            child_type=child_type,
            child_name=child_name,
            index=index,
            description=description,
            runtime=runtime,
            payload=payload,
            config_lines=lines,
            previous=previous,
        )
        self._ops.append((order, op))

    # -- sections ---------------------------------------------------------------------------

    def create_section(self, section: Section) -> None:
        self.emit(
            "create", section, None, None, None, _section_description("create", section), lines=_section_lines(section)
        )
        if section.kind in _CHILDREN_ARE_ATTRIBUTES:
            return
        for child_type, children in section.named.items():
            for name, directive in children.items():
                self._named("create", section, child_type, name, directive, model=False)
        for name, definitions in section.acls.items():
            self._acl("create", section, name, definitions)
        for child_type, rules in section.rules.items():
            for index, rule in enumerate(rules):
                self._rule("create", section, child_type, index, rule)

    def compare_sections(self, current: Section, desired: Section) -> None:
        children_changed = desired.kind in _CHILDREN_ARE_ATTRIBUTES and _named_words(current) != _named_words(desired)
        if (
            current.header_args != desired.header_args
            or current.implicit_defaults != desired.implicit_defaults
            or _words(current.attributes) != _words(desired.attributes)
            or children_changed
        ):
            self.emit(
                "update",
                desired,
                None,
                None,
                None,
                _section_description("update", desired),
                lines=_section_lines(desired),
            )
        if desired.kind not in _CHILDREN_ARE_ATTRIBUTES:
            self._compare_named(current, desired)
        self._compare_acls(current, desired)
        self._compare_rules(current, desired)

    # -- named children ---------------------------------------------------------------------

    def _compare_named(self, current: Section, desired: Section) -> None:
        for child_type in _ordered_union(desired.named, current.named):
            have = current.named.get(child_type, {})
            want = desired.named.get(child_type, {})
            for name, directive in want.items():
                existing = have.get(name)
                if existing is None:
                    self._named("create", desired, child_type, name, directive)
                elif existing.words != directive.words:
                    self._named("update", desired, child_type, name, directive, existing)
            for name, directive in have.items():
                if name not in want:
                    self._named("delete", current, child_type, name, directive)

    def _named(
        self,
        action: Action,
        section: Section,
        child_type: str,
        name: str,
        directive: Directive,
        existing: Directive | None = None,
        *,
        model: bool = True,
    ) -> None:
        payload: dict[str, Any] | None = None
        before: dict[str, Any] | None = None
        runtime = False
        # A new section goes out as configuration text (a plan creating a section is never fine-grained):
        # its servers need no API model, and a first deployment has 30,000 of them.
        if model and child_type == "server" and section.kind in _SERVER_MODEL_KINDS:
            if action != "delete":
                payload = server_words_to_model(directive.words)
            if existing is not None and payload is not None:
                before = server_words_to_model(existing.words)
                if before == payload:
                    return  # only the order or spelling of parameters changed
                # The Dataplane API's runtime path exists for backend servers only.
                runtime = section.kind == "backend" and runtime_only_change(before, payload)
        description = _child_description(action, section, _CHILD_LABELS.get(child_type, child_type), name)
        lines = () if action == "delete" else (directive.text,)
        self.emit(action, section, child_type, name, None, description, runtime=runtime, payload=payload, lines=lines,
                  previous=before)

    # -- ACLs -------------------------------------------------------------------------------

    def _compare_acls(self, current: Section, desired: Section) -> None:
        for name, definitions in desired.acls.items():
            existing = current.acls.get(name)
            if existing is None:
                self._acl("create", desired, name, definitions)
            elif _words(existing) != _words(definitions):
                self._acl("update", desired, name, definitions)
        for name, definitions in current.acls.items():
            if name not in desired.acls:
                self._acl("delete", current, name, definitions)

    def _acl(self, action: Action, section: Section, name: str, definitions: list[Directive]) -> None:
        lines = () if action == "delete" else tuple(d.text for d in definitions)
        description = _child_description(action, section, "ACL", name)
        self.emit(action, section, "acl", name, None, description, lines=lines)

    # -- positional rule lists --------------------------------------------------------------

    def _compare_rules(self, current: Section, desired: Section) -> None:
        for child_type in _ordered_union(desired.rules, current.rules):
            have = current.rules.get(child_type, [])
            want = desired.rules.get(child_type, [])
            common = min(len(have), len(want))
            for index in range(common):
                if have[index].words != want[index].words:
                    self._rule("update", desired, child_type, index, want[index])
            for index in range(common, len(want)):
                self._rule("create", desired, child_type, index, want[index])
            # Highest index first, so that the remaining indexes stay valid while deleting.
            for index in range(len(have) - 1, common - 1, -1):
                self._rule("delete", current, child_type, index, have[index])

    def _rule(self, action: Action, section: Section, child_type: str, index: int, rule: Directive) -> None:
        label = _RULE_LABELS.get(child_type, child_type)
        detail = _rule_detail(child_type, rule.words)
        if detail:
            label = f"{label} ({detail})"
        description = _child_description(action, section, label, None)
        lines = () if action == "delete" else (rule.text,)
        self.emit(action, section, child_type, None, index, description, lines=lines)


def _named_words(section: Section) -> dict[str, dict[str, tuple[str, ...]]]:
    return {kind: {name: d.words for name, d in children.items()} for kind, children in section.named.items()}


def _words(directives: list[Directive]) -> list[tuple[str, ...]]:
    return [d.words for d in directives]


def _ordered_union(first: dict[str, Any], second: dict[str, Any]) -> list[str]:
    keys = list(first)
    keys.extend(k for k in second if k not in first)
    return keys


def _section_lines(section: Section) -> tuple[str, ...]:
    header = " ".join((section.kind, *([] if section.name is None else [section.name]), *section.header_args))
    if section.kind == "defaults" and section.name is not None and section.name.startswith("unnamed_defaults_"):
        header = " ".join(("defaults", *section.header_args))
    return (header, *(d.text for d in section.attributes))


def _section_ref(section: Section, labels: dict[str, str] = _SECTION_LABELS) -> str:
    if section.name is None:
        return f"{section.kind} section"
    if section.kind == "defaults":
        return f"defaults section '{section.name}'"
    return f"{labels.get(section.kind, _SECTION_LABELS.get(section.kind, section.kind))} '{section.name}'"


def _section_description(action: Action, section: Section) -> str:
    if section.kind == "traces" and action != "delete":
        return "Update traces section"  # a singleton the API creates or replaces with one PUT
    return f"{action.capitalize()} {_section_ref(section)}"


def _child_description(action: Action, section: Section, label: str, name: str | None) -> str:
    what = label if name is None else f"{label} '{name}'"
    preposition = "from" if action == "delete" else "in"
    return f"{action.capitalize()} {what} {preposition} {_section_ref(section, _PARENT_LABELS)}"


def _rule_detail(child_type: str, words: tuple[str, ...]) -> str:
    # tcp-request/response rules by their type (``content``, ``connection``, ``inspect-delay``...),
    # declared captures by their direction: the original's wording.
    if child_type == "capture" and words[0] == "declare":
        return words[2] if len(words) > 2 else ""
    return words[1] if len(words) > 1 else ""
