"""Properties of plan() over seeded random edits of a realistic config."""

from __future__ import annotations

import random

import pytest

from haptic.dataplane import Operation, parse_config, plan, plan_parsed
from tests.support.realworld import REALWORLD_CFG

EXTRA_LINES = {
    "frontend": ["acl extra src 10.0.0.0/8", "http-request deny if extra", "bind :9999 name extra", "maxconn 10"],
    "backend": ["server extra 127.0.0.1:7000", "http-request set-header X-E e", "timeout server 1s", "stick on src"],
}


def mutate(text: str, rng: random.Random) -> str:
    lines = text.splitlines()
    for _ in range(rng.randint(1, 4)):
        choice = rng.random()
        body = [i for i, line in enumerate(lines) if line.startswith("    ")]
        if choice < 0.3 and body:
            del lines[rng.choice(body)]
        elif choice < 0.6:
            headers = [i for i, line in enumerate(lines) if line.split()[:1] in (["frontend"], ["backend"])]
            at = rng.choice(headers)
            kind = lines[at].split()[0]
            extra = rng.choice(EXTRA_LINES[kind])
            if not any(line.strip() == extra for line in lines[at:]):
                lines.insert(at + 1, "    " + extra)
        elif choice < 0.8 and body:
            at = rng.choice(body)
            lines[at] = lines[at].replace("127.0.0.1:9", "127.0.0.2:9").replace("weight 10", "weight 20")
        else:
            lines.append(f"backend extra_{rng.randint(0, 3)}")
            lines.append(f"    server s1 127.0.0.1:{rng.randint(1000, 2000)}")
    seen: set[str] = set()
    out = []
    for line in lines:  # keep generated backends unique
        if line.startswith("backend "):
            if line in seen:
                out.append(line + "_dup")
                seen.add(line + "_dup")
                continue
            seen.add(line)
        out.append(line)
    return "\n".join(out) + "\n"


def identity(op: Operation) -> tuple[str, str | None, str | None, str | None, int | None]:
    return (op.section_type, op.section_name, op.child_type, op.child_name, op.index)


@pytest.mark.parametrize("seed", range(40))
def test_plan_is_symmetric_and_parse_independent(seed: int) -> None:
    rng = random.Random(seed)
    current = mutate(REALWORLD_CFG, rng)
    desired = mutate(current, rng)
    forward = plan(current, desired)
    backward = plan(desired, current)
    # What one direction creates the other deletes, and updates touch the same objects. Deleting a
    # section does not list its children, so compare top-level creates with children excluded.
    created = {identity(op) for op in forward.operations if op.action == "create"}
    deleted_back = {identity(op) for op in backward.operations if op.action == "delete"}
    created_sections = {(i[0], i[1]) for i in created if i[2] is None}
    assert deleted_back == {i for i in created if i[2] is None or (i[0], i[1]) not in created_sections}
    updated = {identity(op) for op in forward.operations if op.action == "update"}
    assert updated == {identity(op) for op in backward.operations if op.action == "update"}
    # Fresh parses give the same plan as the cached, section-reusing parses of plan().
    assert plan_parsed(parse_config(current), parse_config(desired)) == forward
    # A config planned against itself is always empty.
    assert plan(desired, desired).is_empty
    sections_before = {s.key: (s.header_args, s.signature) for s in parse_config(current).sections}
    sections_after = {s.key: (s.header_args, s.signature) for s in parse_config(desired).sections}
    assert forward.is_empty == (sections_before == sections_after)


@pytest.mark.parametrize("seed", range(100))
def test_sections_compared_both_ways_at_once_are_those_compared_one_way_at_a_time(seed: int) -> None:
    """``_differing`` (one place-by-place pass for both directions) finds what ``_not_in`` finds each way, over
    configs parsed against each other (sections shared) and with sections swapped in place."""
    from haptic.dataplane.parser import parse_config_reusing
    from haptic.dataplane.planner import _differing, _not_in

    rng = random.Random(seed)
    current = parse_config(REALWORLD_CFG)
    desired = parse_config_reusing(mutate(REALWORLD_CFG, rng), current)
    if rng.random() < 0.5 and len(desired.sections) > 3:  # two sections trade places
        a, b = rng.sample(range(len(desired.sections)), 2)
        desired.sections[a], desired.sections[b] = desired.sections[b], desired.sections[a]
        desired.derived = None  # no longer the parse it was derived as (results are read-only otherwise)
    added, left = _differing(desired, current)
    assert [id(s) for s in added] == [id(s) for s in _not_in(desired.sections, current)]
    assert [id(s) for s in left] == [id(s) for s in _not_in(current.sections, desired)]
