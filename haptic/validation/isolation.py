"""Per-object isolation: when ``haproxy -c`` rejects a render, find the object(s) whose lines it rejected,
leave them out and validate the rest, so that one tenant's bad object never blocks the others.

The culprits are searched among the objects that changed since the last config that validated (the
caller hands them in, oldest change first): everything unchanged was part of a config that passed.

1. A first guess costs one extra ``haproxy -c``: per rejected line, the object holding the value HAProxy
   complains about (``timeout server 999999999d`` ← the annotation ``…/timeout-server: 999999999d``),
   changed or not (an old EndpointSlice's bad port shows once a new Ingress uses it).
2. Otherwise (or when the guess does not validate) a search renders with a prefix of the candidates
   and leaves the rest out: the render without any candidate must validate (else the fault is not an
   object's: no isolation), and a binary search finds the shortest failing prefix, whose last object is
   a culprit (when two objects only fail together, the later change is blamed). It repeats with the
   objects after it until everything left validates: about ``log2(n) + 1`` renders per culprit.

Objects are left out through ``RenderInputs.skip``: the engine hides them from every store. Pure: renders
and validates through what it is handed; no clock, no event bus.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from haptic.templating.engine import RenderInputs, TemplateEngine
from haptic.templating.notices import REJECTED_BY_HAPROXY, ObjectNotice, ObjectRef, object_ref
from haptic.validation.haproxy_check import ConfigProblem, HAProxyValidator
from haptic.validation.process import AsyncCommandRunner
from haptic.validation.render_check import CheckedRender, render_and_validate
from haptic.validation.render_runner import RenderRunner

__all__ = ["Culprit", "Isolation", "change_order", "content_fingerprint", "culprit_field", "isolate_rejected",
           "resource_version"]

#: Renders (each with its ``haproxy -c``) one isolation may run besides the failed one.
DEFAULT_MAX_ATTEMPTS = 40
#: Shortest string a guess matches inside a rejected line (shorter ones, ``80``, ``http``, match anywhere).
_MIN_GUESS = 4
#: What separates the words of a config line or message (``10.3.0.1:70000`` is two words).
_WORDS = re.compile(r"[\s\"'`:,;=()\[\]{}]+")


@dataclass(frozen=True)
class Culprit:
    """An object left out because ``haproxy -c`` rejected what it rendered."""

    ref: ObjectRef
    field: str
    problems: tuple[ConfigProblem, ...]
    #: its version in the last config that validated is rendered instead (False: it is new, left out)
    held_back: bool = False

    @property
    def message(self) -> str:
        first = next((p for p in self.problems if p.source), self.problems[0] if self.problems else None)
        if first is None:
            return "haproxy -c rejected the configuration with this object"
        where = f" at {first.file}:{first.line}" if first.file and first.line else ""
        line = f" (`{first.source}`)" if first.source else ""
        kept = "its last valid version stays deployed" if self.held_back else "it is left out"
        return f"haproxy -c rejected the lines rendered from it{where}: {first.message}{line}; {kept}"

    def notice(self) -> ObjectNotice:
        return ObjectNotice(self.ref, REJECTED_BY_HAPROXY, self.message, self.field, excluded=True)


@dataclass(frozen=True)
class Isolation:
    """A render without the culprits that validated, the culprits and how many extra renders it took."""

    checked: CheckedRender
    culprits: tuple[Culprit, ...]
    attempts: int


def content_fingerprint(obj: Mapping[str, Any]) -> str:
    """What an object renders from, as text: all but its status and the server's bookkeeping (a status
    write bumps ``resourceVersion`` without changing what the templates see of a held-back change)."""
    meta = {k: v for k, v in (obj.get("metadata") or {}).items()
            if k not in ("resourceVersion", "managedFields", "generation")}
    body = {k: v for k, v in obj.items() if k not in ("status", "metadata")}
    return json.dumps({"metadata": meta, **body}, sort_keys=True, default=str)


def resource_version(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata")
    return str(meta.get("resourceVersion") or "") if isinstance(meta, Mapping) else ""


def change_order(obj: Mapping[str, Any]) -> tuple[int, str, tuple[str, str, str]]:
    """Oldest change first: numeric resourceVersions by value (an API server's are opaque but increasing)."""
    version = resource_version(obj)
    ref = object_ref(obj)
    key = ref.key if ref is not None else ("", "", "")
    return (int(version) if version.isdigit() else -1, version, key)


def _leaves(value: Any, path: str) -> list[tuple[str, str]]:
    """(field path, string) of every string in an object, paths as Kubernetes messages write them."""
    found: list[tuple[str, str]] = []
    if isinstance(value, str):
        found.append((path, value))
    elif isinstance(value, int) and not isinstance(value, bool):
        found.append((path, str(value)))
    elif isinstance(value, Mapping):
        for key in sorted(value, key=str):
            key_text = str(key)
            if path.rpartition(".")[2] in ("annotations", "labels", "data", "stringData"):
                child = f"{path}[{key_text}]"
            else:
                child = f"{path}.{key_text}" if path else key_text
            found.extend(_leaves(value[key], child))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            found.extend(_leaves(item, f"{path}[{i}]"))
    return found


def _fields_in(
    obj: Mapping[str, Any], lines: Sequence[str], messages: Sequence[str] = ()
) -> list[tuple[int, int, str]]:
    """(named by HAProxy's message, length, field) of the object's values that a rejected line holds as a
    word or part of one."""
    matches: list[tuple[int, int, str]] = []
    words = [set(_WORDS.split(line)) for line in lines]
    said = [set(_WORDS.split(message)) for message in messages]
    for path, text in _leaves({k: v for k, v in obj.items() if k not in ("status",)}, ""):
        if len(text) < _MIN_GUESS or path.startswith(("metadata.managedFields", "metadata.uid",
                                                      "metadata.resourceVersion", "metadata.creationTimestamp")):
            continue
        if any(text in ws for ws in words) or (len(text) >= 8 and any(text in line for line in lines)):
            matches.append((int(any(text in ws for ws in said)), len(text), path))
    return matches


def culprit_field(obj: Mapping[str, Any], problems: Sequence[ConfigProblem]) -> str:
    """The field of ``obj`` whose value a rejected line shows (the longest such value), or ``""``."""
    lines = [p.source for p in problems if p.source]
    matches = _fields_in(obj, lines, [p.message for p in problems])
    return max(matches)[2] if matches else ""


def _guess(objects: Sequence[Mapping[str, Any]], changed: frozenset[tuple[str, str, str]],
           problems: Sequence[ConfigProblem]) -> list[Mapping[str, Any]]:
    """Per rejected line, the object holding the best match of a value in it (named by HAProxy's message,
    then longest; a changed object wins a tie): the one whose field HAProxy complains about."""
    guessed: dict[tuple[str, str, str], Mapping[str, Any]] = {}
    for problem in problems:
        if not problem.source:
            continue
        best: tuple[tuple[int, int, int], Mapping[str, Any]] | None = None
        for obj in objects:
            matches = _fields_in(obj, [problem.source], [problem.message])
            if matches:
                top = max(matches)
                if not top[0] and _key(obj) not in changed:
                    continue  # an object that validated before is blamed only for a value HAProxy names
                score = (top[0], top[1], int(_key(obj) in changed))
                if best is None or score > best[0]:
                    best = (score, obj)
        if best is not None:
            guessed.setdefault(_key(best[1]), best[1])
    return list(guessed.values())


def _key(obj: Mapping[str, Any]) -> tuple[str, str, str]:
    ref = object_ref(obj)
    assert ref is not None  # candidates come from stores: every one has metadata.name
    return ref.key


async def isolate_rejected(
    engine: TemplateEngine,
    inputs: RenderInputs,
    validator: HAProxyValidator,
    *,
    runner: AsyncCommandRunner,
    failed: CheckedRender,
    candidates: Sequence[Mapping[str, Any]],
    last_good: Mapping[tuple[str, str, str], Mapping[str, Any]] | None = None,
    others: Sequence[Mapping[str, Any]] = (),
    max_attempts: int = DEFAULT_MAX_ATTEMPTS,
    render_runner: RenderRunner | None = None,
) -> Isolation | None:
    """A valid render of ``inputs`` without the candidates ``haproxy -c`` rejected (``failed`` is the render
    of ``inputs`` as is), or None when leaving candidates out does not help or the attempts run out.
    A candidate in ``last_good`` (its version in the last config that validated) is held back to that
    version rather than left out. The first guess also looks at ``others`` (the objects that did not change):
    the value HAProxy rejects may sit in an old object that a change made visible (an unused EndpointSlice
    with a bad port, then an Ingress using it); such an object is left out.
    A render that raises ``TemplatingError`` propagates."""
    pool = [obj for obj in candidates if object_ref(obj) is not None and _key(obj) not in inputs.skip]
    changed = frozenset(_key(obj) for obj in pool)
    previous = {key: obj for key, obj in (last_good or {}).items() if key in changed}
    attempts = 0

    async def without(objs: Sequence[Mapping[str, Any]]) -> CheckedRender:
        nonlocal attempts
        attempts += 1
        keys = frozenset(_key(obj) for obj in objs)
        older = {**inputs.previous, **{key: previous[key] for key in keys if key in previous}}
        return await render_and_validate(engine, replace(inputs, skip=inputs.skip | keys, previous=older),
                                         validator, runner=runner, render_runner=render_runner)

    def _culprit(obj: Mapping[str, Any], problems: tuple[ConfigProblem, ...]) -> Culprit:
        ref = object_ref(obj)
        assert ref is not None
        return Culprit(ref, culprit_field(obj, problems), problems, held_back=ref.key in previous)

    if not pool:
        return None
    unchanged = [obj for obj in others if object_ref(obj) is not None and _key(obj) not in changed
                 and _key(obj) not in inputs.skip]
    guessed = _guess(pool + unchanged, changed, failed.validation.errors)
    if guessed and (len(guessed) < len(pool) or any(_key(obj) not in changed for obj in guessed)):
        trial = await without(guessed)
        if trial.valid:
            return Isolation(trial, tuple(_culprit(obj, failed.validation.errors) for obj in guessed), attempts)
    passing = await without(pool)
    if not passing.valid:
        return None
    bad: list[Mapping[str, Any]] = []
    culprits: list[Culprit] = []
    rest = list(pool)
    failing = failed
    while rest:
        # Invariant: leaving out bad + rest validates (``passing``), leaving out bad only does not (``failing``).
        lo, hi = 0, len(rest)
        while hi - lo > 1:
            if attempts >= max_attempts:
                return None
            mid = (lo + hi) // 2
            trial = await without(bad + rest[mid:])
            if trial.valid:
                lo, passing = mid, trial
            else:
                hi, failing = mid, trial
        bad.append(rest[hi - 1])
        culprits.append(_culprit(rest[hi - 1], failing.validation.errors))
        rest = rest[hi:]
        if not rest:
            break
        if attempts >= max_attempts:
            return None
        trial = await without(bad)
        if trial.valid:
            return Isolation(trial, tuple(culprits), attempts)
        failing = trial
    return Isolation(passing, tuple(culprits), attempts)
