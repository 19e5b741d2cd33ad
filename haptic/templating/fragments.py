"""Fragment caching: ``{% fragment %}…{% endfragment %}`` renders its body once and reuses the text in the
next renders for as long as everything the body read is unchanged.

What a body reads is of two kinds. Template variables from around it (the loop's ``ing``, a ``set``
before it): the extension lists every name the body loads when it compiles, and the key of an entry is
their values (scalars and small plain containers by value, anything else by identity: store objects are
replaced, never mutated, on change, and the sandbox lets templates mutate nothing). Render state reached
through the context objects (stores, ``shared``, ``first_seen``, ``warn``, ``server_slots``,
``fileRegistry``): each such call made while a body renders is written to the fragment's ``Journal``
(role of the object, method, arguments, result). A later render reuses the text only when replaying the
journal's reads against this render's objects gives the same answers (stores: the same objects;
``first_seen``: the same verdicts; ``server_slots.assign``: the same slots); then it applies the journal's
effects (appends, marks, warnings, notices, registered files, ``first_seen`` claims) as the body would have.
A body that reads what it cannot be checked on (``now()``, a big ``shared`` value, a value it wrote
itself) is rendered every time. The result is byte-identical to a render without the cache
(``TemplateEngine(fragments=False)``; tests compare both over the scenario library). A fragment loop over the
same items as in the last render is reused in bulk, its untouched items' journals not replayed one by one
(``fragment_loops``).

Holds no Jinja state of its own besides the extension; must not import the engine.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from jinja2 import nodes
from jinja2.ext import Extension
from jinja2.parser import Parser
from jinja2.runtime import Macro, Undefined

from haptic.core.identity import same_items
from haptic.templating.seen_keys import SeenKeys

#: A read whose answer must be the same (stores by identity of the objects, else by value).
READ = 0
#: A call made again when checking (idempotent within a render: ``server_slots.assign``), same answer.
CHECKED = 1
#: ``first_seen``: the verdict must be the same; a True verdict is claimed again.
CLAIM = 2
#: A write, replayed once the entry is known valid.
EFFECT = 3

Op = tuple[int, str, str, tuple[Any, ...], Any]

#: Containers up to this many values (nested included) are compared by value; larger ones by identity.
_FREEZE_BUDGET = 32


class Journal:
    """The calls on render state one fragment body made, in order."""

    __slots__ = ("cacheable", "ops", "wrote")

    def __init__(self) -> None:
        self.ops: list[Op] = []
        self.cacheable = True
        self.wrote: set[str] = set()  # roles written so far: a later read of one is the body's own value


RECORDING: ContextVar[Journal | None] = ContextVar("haptic_fragment_journal", default=None)


def note(kind: int, role: str, method: str, args: tuple[Any, ...], result: Any = None) -> None:
    """Writes one call into the journal of the fragment rendering now, if any."""
    journal = RECORDING.get()
    if journal is None:
        return
    if kind == EFFECT:
        journal.wrote.add(role)
    elif kind == READ and role in journal.wrote:
        journal.cacheable = False
    journal.ops.append((kind, role, method, args, result))


def note_read(role: str, method: str, args: tuple[Any, ...], result: Any,
              holds: Callable[[Any], bool] = lambda value: False) -> None:
    """A read of a plain value (``shared.get``): kept by value (small ones frozen, containers as a shallow
    copy, as they were when read: the original may still grow), anything else by identity. ``holds``: whether
    the role holds a container unchanged for good (see ``_Held``), asked only of a container copied."""
    journal = RECORDING.get()
    if journal is None:
        return
    kind = type(result)
    if kind is bool or kind is str or kind is int or kind is type(None):  # ``freeze``'s answer, without its budget
        note(READ, role, method, args, (kind.__name__, result))
        return
    frozen = freeze(result)
    if frozen is _UNFROZEN:
        frozen = _held(result) if holds(result) else _snapshot(result)
    note(READ, role, method, args, frozen)


class _Copy(tuple[Any, ...]):
    """A shallow copy of a container read (its type, its items); compared item by item with ``==``."""


class _Held(_Copy):
    """The copy of a container its role holds unchanged for good (``shared``: a value ``set``, never changed in
    place): a later read of the very same object gives the same items without a copy or a comparison (copying
    10,000 hosts is most of a map's reuse: each copied item is a write to its object's reference count)."""

    source: Any


def _held(value: Any) -> _Held:
    copy = _Held(_snapshot(value))
    copy.source = value
    return copy


def _snapshot(value: Any) -> Any:
    if isinstance(value, list | tuple):
        return _Copy((type(value), tuple(value)))
    if isinstance(value, dict):
        return _Copy((dict, tuple(value), tuple(value.values())))  # two tuples, not one pair per item
    return ("objects", (value,))


def uncacheable() -> None:
    """The body read something no journal entry can check (the clock, the render's skip set)."""
    journal = RECORDING.get()
    if journal is not None:
        journal.cacheable = False


class _Unfrozen:
    pass


_UNFROZEN: Any = _Unfrozen()
_SCALARS = (str, int, float, bool, type(None))


def freeze(value: Any, budget: list[int] | None = None) -> Any:
    """``value`` as a hashable snapshot (type-tagged, so 1 and True differ), or ``_UNFROZEN``."""
    budget = budget if budget is not None else [_FREEZE_BUDGET]
    budget[0] -= 1
    if budget[0] < 0:
        return _UNFROZEN
    if isinstance(value, _SCALARS):
        return (type(value).__name__, value)
    if isinstance(value, Undefined):
        return ("undefined",)
    if isinstance(value, list | tuple | dict) and len(value) > budget[0]:
        return _UNFROZEN  # too many values whatever they hold: not one freeze call per item of a long list
    if isinstance(value, list | tuple):
        items = tuple(freeze(v, budget) for v in value)
        return _UNFROZEN if any(i is _UNFROZEN for i in items) else (type(value).__name__, items)
    if isinstance(value, dict):
        pairs = tuple((freeze(k, budget), freeze(v, budget)) for k, v in value.items())
        if any(k is _UNFROZEN or v is _UNFROZEN for k, v in pairs):
            return _UNFROZEN
        return ("dict", pairs)
    return _UNFROZEN


@dataclass(slots=True)
class Entry:
    text: str
    ops: tuple[Op, ...]
    #: what the key names by identity, kept alive so that no id in the key is reused meanwhile
    refs: tuple[Any, ...] = field(repr=False)
    #: the ops as a fragment loop's record aggregates them (``fragment_loops.Shape``), worked out once
    shape: Any = field(default=None, repr=False, compare=False)


class FragmentCache:
    """Entries by (fragment, key) of the last render and of this one, and the records of fragment loops
    (``fragment_loops.LoopRecord``) by the loop's key; ``next_render`` drops the older."""

    def __init__(self) -> None:
        self._previous: dict[tuple[Any, ...], Entry] = {}
        self._current: dict[tuple[Any, ...], Entry] = {}
        self._loops_previous: dict[tuple[Any, ...], Any] = {}
        self._loops_current: dict[tuple[Any, ...], Any] = {}
        self.hits = self.misses = 0

    def next_render(self) -> None:
        self._previous, self._current = self._current, {}
        self._loops_previous, self._loops_current = self._loops_current, {}
        self.hits = self.misses = 0

    def clear(self) -> None:
        self._previous, self._current = {}, {}
        self._loops_previous, self._loops_current = {}, {}

    def forget_loops(self) -> None:
        """Drops the fragment loops' records and entries (their items render again)."""
        self._loops_previous, self._loops_current = {}, {}

    def entries(self) -> list[Entry]:
        """Every entry kept for the next render."""
        return [*self._current.values(),
                *(e for record in self._loops_current.values() for e in record.entries if e is not None)]

    def get(self, key: tuple[Any, ...]) -> Entry | None:
        return self._current.get(key) or self._previous.get(key)

    def put(self, key: tuple[Any, ...], entry: Entry) -> None:
        self._current[key] = entry

    def loop(self, key: tuple[Any, ...]) -> Any:
        """The record of the fragment loop under ``key`` (this render's, else the last one's), or None."""
        record = self._loops_current.get(key)
        return record if record is not None else self._loops_previous.get(key)

    def keep_loop(self, key: tuple[Any, ...], record: Any) -> None:
        self._loops_current[key] = record
        # never asked for again (``loop`` prefers this render's): freed now, in the render that replaced it, not
        # in the next one (10,000 entries to free once every Ingress rendered again)
        self._loops_previous.pop(key, None)


_ROLE = ("role",)
_UNDEFINED = ("undefined",)
_SCALAR_TYPES = frozenset(_SCALARS)
_EMPTY: dict[type, tuple[str]] = {dict: ("dict",), list: ("list",), tuple: ("tuple",)}


def key_of(fragment: str, values: Mapping[str, Any], roles: frozenset[type],
           role_dicts: frozenset[int] = frozenset()) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    """The cache key of a fragment for the values of the names its body loads (in the extension's fixed
    order), and the objects it names by identity. Non-empty containers go by identity too: comparing them
    deeply would cost what the fragment saves, and the engine keeps its per-render dicts the same objects
    while their content is. ``role_dicts``: ids of this render's dicts of context objects (``resources``)."""
    parts: list[Any] = [fragment]
    refs: list[Any] = []
    for value in values.values():
        kind = type(value)
        if kind in _SCALAR_TYPES:
            parts.append(kind)
            parts.append(value)
        elif kind in roles or (kind is dict and id(value) in role_dicts):
            parts.append(_ROLE)  # reached through the journal
        elif kind in _EMPTY and not value:
            parts.append(_EMPTY[kind])
        elif isinstance(value, Undefined):
            parts.append(_UNDEFINED)
        else:
            parts.append(id(value))
            refs.append(value)
    return tuple(parts), tuple(refs)


def item_key(item: Any) -> tuple[Any, Any]:
    """An item's part of a loop fragment's key (as ``key_of`` keys a value: scalars by value, the rest by
    identity) and what the entry must hold to keep that identity."""
    kind = type(item)
    if kind in _SCALAR_TYPES:
        return (kind, item), None
    if isinstance(item, Undefined):
        return _UNDEFINED, None
    return id(item), item


def _same(recorded: Any, now: Any) -> bool:
    if isinstance(recorded, tuple) and recorded and recorded[0] == "objects":
        seq = now if isinstance(now, list | tuple) else (now,)
        return same_items(recorded[1], seq)
    return bool(recorded == now)


def _never(value: Any) -> bool:
    return False


def _as_recorded(recorded: Any, answer: Any) -> Any:
    """``answer`` in the form ``recorded`` was kept in (see ``note_read``)."""
    if isinstance(recorded, _Copy):
        return _snapshot(answer)
    if isinstance(recorded, tuple) and recorded and recorded[0] == "objects":
        return answer
    return freeze(answer)


#: store role -> the index prefixes whose lookups may answer differently than in the last render (None: unknown)
Dirty = Mapping[str, frozenset[tuple[str, ...]] | None]


def replay(ops: tuple[Op, ...], roles: Mapping[str, Any], seen: SeenKeys,
           dirty: Dirty | None = None) -> tuple[Op, ...] | None:
    """Checks the journal against this render's objects; when it holds, applies its effects and returns the
    journal to keep (None when it does not hold). ``dirty``: what each store's writes since the last render
    touched; a store read outside it gives the objects it gave then (stores replace objects, never mutate them),
    so it is not asked again. A container read equal to the recorded one by value is kept as read now: the
    next comparison then finds the same items (by identity, at C speed) instead of comparing them all again."""
    # neither the checks nor the replayed writes are a body's own calls
    token = RECORDING.set(None) if RECORDING.get() is not None else None
    fresh_reads: dict[int, Op] = {}
    try:
        claimed: set[tuple[str, ...]] = set()
        for position, (kind, role, method, args, result) in enumerate(ops):
            if kind == READ:
                changed = dirty.get(role) if dirty else None
                if changed is not None and args not in changed:  # ``list()``: (), in it after any write
                    continue
                answer = getattr(roles[role], method)(*args)
                if role.startswith("store:"):
                    if not _same(result, answer):
                        return None
                elif type(answer) in _SCALAR_TYPES:  # frozen as (type name, value): compared as such
                    if result != (type(answer).__name__, answer):
                        return None
                elif type(result) is not _Held or answer is not result.source:
                    now = _as_recorded(result, answer)
                    if not _same(result, now):
                        return None
                    if type(result) is _Held and getattr(roles[role], "holds", _never)(answer):
                        now = _held(answer)
                    if isinstance(result, _Copy):
                        fresh_reads[position] = (kind, role, method, args, now)
            elif kind == CHECKED:
                answer = getattr(roles[role], method)(*args)
                if (tuple(answer) if type(result) is tuple and type(answer) is list else answer) != result:
                    return None
            elif kind == CLAIM:
                key = args[0]
                fresh = key not in seen.own and (not seen.runs or key not in seen) and key not in claimed
                if fresh != result:
                    return None
                if fresh:
                    claimed.add(key)
        for kind, role, method, args, result in ops:
            if kind == EFFECT:
                getattr(roles[role], method)(*args)
            elif kind == CLAIM and result:
                seen.add(args[0])  # what ``RenderState.first_seen`` does with a fresh key
    finally:
        if token is not None:
            RECORDING.reset(token)
    if not fresh_reads:
        return ops
    kept = list(ops)
    for position, op in fresh_reads.items():
        kept[position] = op
    return tuple(kept)


def begin() -> tuple[Journal, Any, Journal | None]:
    """A journal for one body (``end`` closes it); what it records goes into the enclosing fragment's too."""
    outer = RECORDING.get()
    journal = Journal()
    return journal, RECORDING.set(journal), outer


def end(journal: Journal, token: Any, outer: Journal | None) -> None:
    RECORDING.reset(token)
    if outer is not None:
        outer.ops.extend(journal.ops)
        outer.wrote |= journal.wrote
        outer.cacheable = outer.cacheable and journal.cacheable


def adopt(ops: tuple[Op, ...]) -> None:
    """A reused entry's calls count as the enclosing fragment's reads and writes."""
    outer = RECORDING.get()
    if outer is not None:
        for op in ops:
            note(op[0], op[1], op[2], op[3], op[4])


def direct_body(caller: Callable[[Any], str]) -> Callable[[Any], str]:
    """The function a ``{% fragment for %}`` body's macro runs, when calling the macro with one item does nothing
    else (no ``caller``, no catch-all arguments, no autoescape, not async): a large loop saves the macro's
    argument handling once per item. Anything else: the macro itself."""
    if type(caller) is not Macro:
        return caller
    # Jinja's private attributes (3.1), each read with a default that keeps the macro: another Jinja loses the
    # shortcut, never the output
    body: Callable[[Any], str] | None = getattr(caller, "_func", None)
    plain = getattr(caller, "_argument_count", None) == 1 and not any(
        getattr(caller, name, True) for name in ("caller", "catch_kwargs", "catch_varargs", "_default_autoescape"))
    if body is None or not plain or getattr(getattr(caller, "_environment", None), "is_async", True):
        return caller
    return body


def _loads_outer_loop(node: nodes.Node) -> bool:
    """Whether ``node`` reads ``loop`` outside the bodies of the for loops within it (which have their own)."""
    if isinstance(node, nodes.Name):
        return node.name == "loop" and node.ctx == "load"
    if isinstance(node, nodes.For):
        return _loads_outer_loop(node.iter)
    return any(_loads_outer_loop(child) for child in node.iter_child_nodes())


class FragmentExtension(Extension):
    """``{% fragment %}body{% endfragment %}``: calls ``environment.render_fragment(name, values, caller)``.

    ``{% fragment for x in items %}body{% endfragment %}`` is ``{% for x in items %}{% fragment %}body{% endfragment
    %}{% endfor %}`` (without ``loop``) run by the engine (``environment.render_fragments``): the body's other names
    are loaded and keyed once for the whole loop, each item adds its own identity, and a reused item costs no
    template code at all."""

    tags = {"fragment"}

    def parse(self, parser: Parser) -> nodes.Node:
        lineno = next(parser.stream).lineno
        target: str | None = None
        items: nodes.Expr | None = None
        if parser.stream.skip_if("name:for"):
            target = parser.stream.expect("name").value
            parser.stream.expect("name:in")
            items = parser.parse_tuple(with_condexpr=False)
        body = parser.parse_statements(("name:endfragment",), drop_needle=True)
        if target is not None and any(_loads_outer_loop(stmt) for stmt in body):
            parser.fail("'loop' is not available in a {% fragment for %} body (only in the loops inside it)", lineno)
        names = sorted({n.name for stmt in body for n in stmt.find_all(nodes.Name) if n.ctx == "load"} - {target})
        values = nodes.Dict([nodes.Pair(nodes.Const(n), nodes.Name(n, "load")) for n in names])
        fragment = nodes.Const(f"{parser.name}:{lineno}")
        if target is None or items is None:
            call = self.call_method("_render", [fragment, values])
            return nodes.CallBlock(call, [], [], body).set_lineno(lineno)
        call = self.call_method("_render_each", [fragment, items, values])
        return nodes.CallBlock(call, [nodes.Name(target, "param")], [], body).set_lineno(lineno)

    def _render(self, fragment: str, values: dict[str, Any], caller: Callable[[], str]) -> str:
        render: Callable[[str, dict[str, Any], Callable[[], str]], str] | None = getattr(
            self.environment, "render_fragment", None)
        return render(fragment, values, caller) if render is not None else caller()

    def _render_each(self, fragment: str, items: Any, values: dict[str, Any], caller: Callable[[Any], str]) -> str:
        render: Callable[[str, Any, dict[str, Any], Callable[[Any], str]], str] | None = getattr(
            self.environment, "render_fragments", None)
        if render is not None:
            return render(fragment, items, values, caller)
        return "".join(caller(item) for item in items)
