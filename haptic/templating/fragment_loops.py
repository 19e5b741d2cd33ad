"""Fragment loops reused in bulk: ``{% fragment for x in items %}`` over the same items as in the last render
costs what its changed items cost, not what all of them do.

The per-item path (``TemplateEngine._cached``) replays each reused item's journal: every read checked, every
effect applied one call at a time (~8 µs an item: 100 ms for 10,000 Ingresses whose endpoints did not change).
A ``LoopRecord`` keeps what the items' journals say in aggregate, for the last render of one loop: which store
lookups each item made (an index), which ``shared`` keys they read and wrote, what ``first_seen`` held before the
loop, the ``server_slots`` backends they assigned, and their effects as streams in item order (``shared.append``
values per key, ``shared.mark`` members per key, fresh ``first_seen`` keys, backends assigned, any other effect
as it was journalled). The next render of the loop over the same items (by identity) uses the record when what
the items read besides their own store lookups is as it was:

- the ``first_seen`` keys claimed before the loop: the same (``SeenKeys.fingerprint``);
- each ``shared`` key the items read: written the same way so far this render (``SharedState.log``), and no
  item writes one of them;
- any other read (paths, render state): the same answer, asked once;
- ``server_slots``: the memo and quiet times of the render that left the record, no compacting
  (``ServerSlots.follows``).

Then only *candidates* take the per-item path: items with a store lookup among those the stores' writes since the
last render touched (``Dirty``; a store that cannot tell makes each item reading it a candidate), items whose
backend's deployed object changed, items whose journal could not be kept. Between candidates, the effects of the
untouched items are applied a stretch at a time (``list.extend``, ``dict.update``) and their texts kept. A candidate
that now claims other ``first_seen`` keys than before changes what the items after it find: those all take the
per-item path. A candidate whose journal has another shape (other lookups, another number of appends, ...) has the
record rebuilt once the loop is done (O(items), as the per-item path). Anything unusual (an enclosing fragment
recording, an unknown kind of checked call, an item reading a ``shared`` key items write) leaves the loop on the
per-item path, which is always right.

Must not import the engine.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import partial
from itertools import chain, compress
from operator import not_
from typing import Any

from haptic.core.identity import same_items
from haptic.templating.context import LoggedWrite
from haptic.templating.fragments import CHECKED, CLAIM, READ, Dirty, Entry, Op, item_key, replay
from haptic.templating.seen_keys import SeenKeys

_SCALARS = (str, int, float, bool, type(None))
#: the one checked call a record knows how to reuse in bulk
_SLOTS = ("slots", "assign")

#: ``_cached(key, refs, render, current, previous)`` of the engine: an item's text by the per-item path
Cached = Callable[[Any, tuple[Any, ...], Callable[[], str], dict[Any, Entry], dict[Any, Entry]], str]


class Shape:
    """One item's journal as the record aggregates it."""

    __slots__ = ("appends", "claims", "generic", "marks", "ok", "other_reads", "shared_reads", "signature",
                 "slots", "store_reads", "writes")

    def __init__(self, ops: Sequence[Op]) -> None:
        store_reads: list[tuple[str, tuple[Any, ...]]] = []
        other: list[Op] = []
        shared_reads: set[tuple[str, str]] = set()
        writes: set[tuple[str, str]] = set()
        appends: dict[str, list[Any]] = {}
        marks: dict[str, list[Any]] = {}
        claims: list[Any] = []
        queried: list[Any] = []
        slots: list[tuple[Any, ...]] = []
        generic: list[Op] = []
        ok = True
        for op in ops:
            kind, role, method, args, result = op
            if kind == READ:
                if role.startswith("store:"):
                    store_reads.append((role, args))
                elif role == "shared":
                    shared_reads.add(("m" if method == "marked" else "v", args[0]))
                else:
                    other.append(op)
            elif kind == CHECKED:
                if (role, method) == _SLOTS:
                    slots.append(args)
                else:
                    ok = False
            elif kind == CLAIM:
                (claims if result else queried).append(args[0])
            elif role == "shared" and method == "append":
                appends.setdefault(args[0], []).append(args[1])
                writes.add(("v", args[0]))
            elif role == "shared" and method == "mark":
                marks.setdefault(args[0], []).append(args[1])
                writes.add(("m", args[0]))
            else:
                if role == "shared":
                    writes.add(("m" if method == "mark" else "v", args[0]))
                generic.append(op)
        self.store_reads = tuple(store_reads)
        self.other_reads = tuple(other)
        self.shared_reads = frozenset(shared_reads)
        self.writes = frozenset(writes)
        self.appends, self.marks, self.claims, self.slots, self.generic = appends, marks, claims, slots, generic
        self.ok = ok
        #: what must be the same for a changed item to take its place in the record without a rebuild
        self.signature = (self.store_reads, tuple((o[1], o[2], o[3]) for o in other), self.shared_reads,
                          self.writes, tuple((k, len(v)) for k, v in appends.items()),
                          tuple((k, len(v)) for k, v in marks.items()), tuple(claims), tuple(queried),
                          tuple(a[0] for a in slots), len(generic), ok)


def shape_of(entry: Entry) -> Shape:
    shape: Shape | None = entry.shape
    if shape is None:
        shape = entry.shape = Shape(entry.ops)
    return shape


class _Stream:
    """Values of the items, flat in item order, each with its item's position (``at``, ascending): a stretch of
    items is one slice between two bisections, and building one is two ``append`` per value."""

    __slots__ = ("at", "flat")

    def __init__(self) -> None:
        self.flat: list[Any] = []
        self.at: list[int] = []

    def add(self, position: int, value: Any) -> None:
        self.flat.append(value)
        self.at.append(position)

    def slice(self, a: int, b: int) -> list[Any]:
        at = self.at
        return self.flat[bisect_left(at, a):bisect_left(at, b)]

    def of(self, position: int) -> list[Any]:
        return self.slice(position, position + 1)

    def replace(self, position: int, values: list[Any]) -> None:
        at = self.at
        start, end = bisect_left(at, position), bisect_left(at, position + 1)
        self.flat[start:end] = values
        if end - start != len(values):
            at[start:end] = [position] * len(values)


def _same(a: Any, b: Any) -> bool:
    """Written the same way: the same objects, or equal plain values of the same type."""
    if a is b:
        return True
    kind = type(a)
    if kind is not type(b):
        return False
    if kind is LoggedWrite:
        return bool(a.method == b.method and _same(a.value, b.value))
    if kind in _SCALARS:
        return bool(a == b)
    if kind is tuple:
        return len(a) == len(b) and all(map(_same, a, b))
    return False


class LoopRecord:
    """The last render of one fragment loop, aggregated (see the module docstring)."""

    def __init__(self, items: Sequence[Any], keys: list[Any], entries: list[Entry | None], texts: list[str],
                 state: LoopState, aggregate: bool = True) -> None:
        self.items, self.keys, self.entries, self.texts = items, keys, entries, texts
        self._joined: str | None = None
        self.claim_positions: dict[tuple[str, ...], int] | None = None
        self.usable = aggregate
        if not aggregate:  # only the entries, for the per-item path (a loop inside a recording fragment)
            return
        # One pass over every item's journal into the aggregates, classifying each call as ``Shape`` does (no
        # per-item ``Shape``: those are worked out only for the items that take the per-item path later).
        self.always: list[int] = []
        #: store role -> lookup arguments -> the positions of the items that made that lookup
        index: dict[str, dict[tuple[Any, ...], list[int]]] = {}
        reads: set[tuple[str, str]] = set()
        writes: set[tuple[str, str]] = set()
        other: dict[Any, Op] = {}
        appends: dict[str, _Stream] = {}
        marks: dict[str, _Stream] = {}
        claims, slot_names = _Stream(), _Stream()
        # the streams every item feeds, appended to through their bound methods (a call less per value)
        claim, claim_at = claims.flat.append, claims.at.append
        slot, slot_at = slot_names.flat.append, slot_names.at.append
        slot_calls: list[tuple[int, tuple[Any, ...]]] = []
        slot_index: dict[str, list[int]] = {}
        generic: list[tuple[int, Op]] = []
        usable = True
        for p, entry in enumerate(entries):
            if entry is None:
                self.always.append(p)
                continue
            for op in entry.ops:
                kind, role, method, args, result = op
                if kind == READ:
                    if role.startswith("store:"):
                        lookups = index.get(role)
                        if lookups is None:
                            lookups = index[role] = {}
                        positions = lookups.get(args)
                        if positions is None:
                            lookups[args] = [p]
                        elif positions[-1] != p:
                            positions.append(p)
                    elif role == "shared":
                        reads.add(("m" if method == "marked" else "v", args[0]))
                    else:
                        try:
                            other.setdefault((role, method, args), op)
                        except TypeError:  # an unhashable argument: asked per item
                            usable = False
                elif kind == CHECKED:
                    if role == "slots" and method == "assign":
                        name = args[0]
                        slot(name)
                        slot_at(p)
                        slot_calls.append((p, args))
                        found = slot_index.get(name)
                        if found is None:
                            slot_index[name] = [p]
                        else:
                            found.append(p)
                    else:
                        usable = False
                elif kind == CLAIM:
                    if result:
                        claim(args[0])
                        claim_at(p)
                elif role == "shared" and (method == "append" or method == "mark"):
                    streams, tag = (appends, "v") if method == "append" else (marks, "m")
                    stream = streams.get(args[0])
                    if stream is None:
                        stream = streams[args[0]] = _Stream()
                    stream.add(p, args[1])
                    writes.add((tag, args[0]))
                else:
                    if role == "shared":
                        writes.add(("m" if method == "mark" else "v", args[0]))
                    generic.append((p, op))
        # the effects are applied per kind: a key written both by a stream and by another effect would lose its order
        streamed = {("v", k) for k in appends} | {("m", k) for k in marks}
        generic_writes = {("m" if op[2] == "mark" else "v", op[3][0]) for _, op in generic if op[1] == "shared"}
        if reads & writes or streamed & generic_writes:
            usable = False
        self.usable = usable
        self.index = index
        self.shared_reads = frozenset(reads)
        self.other_reads = tuple(other.values())
        self.generic = generic
        self.generic_at = [p for p, _ in generic]
        self.appends, self.marks, self.claims, self.slots = appends, marks, claims, slot_names
        self.slot_index = slot_index
        # (since + quiet, position, since, quiet) of each low backend: ascending, and per item that has one
        self.low_entries: dict[int, list[tuple[float, int, float, float]]] = {}
        self.lows = _Stream()
        lows_at = getattr(state.roles.get("slots"), "lows_at", None)
        if lows_at is not None and slot_calls:
            for p, backend, since, quiet in lows_at(slot_calls):
                self.low_entries.setdefault(p, []).append((since + quiet, p, since, quiet))
                self.lows.add(p, backend)
        self.low_order = sorted(chain.from_iterable(self.low_entries.values()))
        self.finish(state)

    @property
    def joined(self) -> str:
        """The loop's text: its items' texts joined, once (a caller splicing ``texts`` into a larger text never
        asks: a 4 MB join less per change at 10,000 Ingresses)."""
        if self._joined is None:
            self._joined = "".join(self.texts)
        return self._joined

    def positions(self) -> dict[tuple[str, ...], int]:
        """Each claimed key -> the position of the item that claimed it (``SeenKeys`` runs; built once: the claims
        of a record never change, a changed one is a rebuilt record)."""
        if self.claim_positions is None:
            self.claim_positions = dict(zip(self.claims.flat, self.claims.at, strict=True))
        return self.claim_positions

    def set_lows(self, positions: Iterable[int], state: LoopState) -> None:
        """The low backends of the items at ``positions`` as ``server_slots`` left them in this render."""
        slots = state.roles.get("slots")
        lows = getattr(slots, "lows", None)
        for p in positions:
            entry = self.entries[p]
            shape = shape_of(entry) if entry is not None else None
            for old in self.low_entries.pop(p, ()):
                del self.low_order[bisect_left(self.low_order, old)]
            found = lows(shape.slots) if shape is not None and shape.slots and lows is not None else []
            entries = [(since + quiet, p, since, quiet) for _, since, quiet in found]
            for new in entries:
                insort(self.low_order, new)
            if entries:
                self.low_entries[p] = entries
            if [b for b, _, _ in found] != self.lows.of(p):
                self.lows.replace(p, [b for b, _, _ in found])

    def finish(self, state: LoopState) -> None:
        """What the next render compares with: this render's state before the loop, the slots' memo after it."""
        self.seen_at_start = state.seen_at_start
        shared = state.roles.get("shared")
        log = getattr(shared, "log", None)
        self.shared_at_start = {
            name: tuple(log(name)[: state.log_lengths.get(name, 0)]) if log is not None else ()
            for name in self.shared_reads
        }
        slots = state.roles.get("slots")
        self.slots_left = (getattr(slots, "memo", None), getattr(slots, "low_since", None))
        self.slots_deployed = getattr(slots, "deployed", None)

    def by_key(self) -> dict[Any, Entry]:
        return {k: e for k, e in zip(self.keys, self.entries, strict=True) if e is not None}


class LoopState:
    """What one render of a loop starts from: the render's context objects and what they held before the loop."""

    __slots__ = ("dirty", "log_lengths", "roles", "seen", "seen_at_start")

    def __init__(self, roles: Mapping[str, Any], seen: SeenKeys, dirty: Dirty | None) -> None:
        self.roles, self.seen, self.dirty = roles, seen, dirty
        self.seen_at_start = seen.fingerprint()
        shared = roles.get("shared")
        lengths = getattr(shared, "log_lengths", None)
        self.log_lengths: dict[tuple[str, str], int] = lengths() if lengths is not None else {}


def candidates(record: LoopRecord, items: Sequence[Any], state: LoopState) -> list[int] | None:
    """The positions that must take the per-item path this render, or None when the record cannot be used."""
    if not record.usable or not same_items(items, record.items):
        return None
    if state.seen_at_start != record.seen_at_start:
        return None
    roles = state.roles
    shared = roles.get("shared")
    for name, before in record.shared_at_start.items():
        now = shared.log(name) if shared is not None else ()
        if len(now) != len(before) or not all(map(_same, before, now)):
            return None
    if record.other_reads:
        kept = replay(record.other_reads, roles, state.seen, None)
        if kept is None:
            return None
        record.other_reads = kept
    slots: Any = roles.get("slots")
    if record.slots.flat:
        follows = getattr(slots, "follows", None)
        if follows is None or not follows(*record.slots_left):
            return None
    found: set[int] = set(record.always)
    dirty = state.dirty or {}
    for role, lookups in record.index.items():
        changed = dirty.get(role)
        if changed is None:
            found.update(chain.from_iterable(lookups.values()))
            continue
        for args in changed:
            found.update(lookups.get(args, ()))
    deployed = slots.deployed if record.slots.flat else None
    if record.slots.flat and deployed is not record.slots_deployed:  # else: the same deployed objects
        changed = deployed.changed_since(record.slots_deployed) if deployed is not None else None
        if changed is not None:  # the reader knows which backends it read anew
            for name in changed:
                found.update(record.slot_index.get(name, ()))
        else:
            found.update(compress(record.slots.at, map(not_, slots.unchanged(record.slots.flat))))
    return sorted(found)


def render_loop(record: LoopRecord | None, items: Sequence[Any], refs: tuple[Any, ...],
                caller: Callable[[Any], str], state: LoopState, cached: Cached,
                bulk: bool = True) -> tuple[LoopRecord, int]:
    """The loop's record for the next render (its text: ``joined``; its items' texts: ``texts``), and how many
    items took the per-item path (all of them unless ``bulk``: an enclosing fragment records every item's calls)."""
    # a tuple is kept as it is (no copy): the same one next render is the same items at once (``same_items``)
    items = items if type(items) is tuple else list(items)
    todo = candidates(record, items, state) if record is not None and bulk else None
    if record is None or todo is None:
        return _per_item(record, items, refs, caller, state, cached, bulk)
    record.usable = False  # until the loop is done: an exception leaves a record good only for its entries
    roles, seen = state.roles, state.seen
    spliced: list[int] = []
    rebuild = False
    cursor = 0
    processed: list[int] = []
    queue = list(reversed(todo))
    while queue:
        p = queue.pop()
        if p < cursor:
            continue
        _apply(record, cursor, p, roles, seen)
        old = record.entries[p]
        key = record.keys[p]
        current: dict[Any, Entry] = {}
        previous = {key: old} if old is not None else {}
        held = item_key(items[p])[1]
        record.texts[p] = cached(key, (held, refs), partial(caller, items[p]), current, previous)
        new = current.get(key)
        record.entries[p] = new
        processed.append(p)
        cursor = p + 1
        old_shape = shape_of(old) if old is not None else None
        new_shape = shape_of(new) if new is not None else None
        if old_shape is None or new_shape is None or old_shape.signature != new_shape.signature:
            rebuild = rebuild or old_shape is not None or new_shape is not None
            if old_shape is None or new_shape is None or old_shape.signature[6:8] != new_shape.signature[6:8] \
                    or new_shape.writes & record.shared_reads:
                # what first_seen finds after this item may differ: every later item checks its own journal
                queue = list(range(len(items) - 1, cursor - 1, -1))
            continue
        if not rebuild:
            _splice(record, p, new_shape)
            spliced.append(p)
    if rebuild:
        return _rebuilt(record, items, state, processed, cursor)
    _apply(record, cursor, len(items), roles, seen)
    _settle_lows(record, processed, roles.get("slots"))
    record.set_lows(spliced, state)
    _shrinkable(record, set(processed), roles.get("slots"))
    if processed:
        record._joined = None
    record.usable = True
    record.finish(state)
    return record, len(processed)


def _rebuilt(record: LoopRecord, items: Sequence[Any], state: LoopState, processed: list[int],
             cursor: int) -> tuple[LoopRecord, int]:
    """The rest of the loop after a candidate changed shape: its effects as recorded, then a new record."""
    _apply(record, cursor, len(items), state.roles, state.seen)
    _settle_lows(record, processed, state.roles.get("slots"))
    _shrinkable(record, set(processed), state.roles.get("slots"))
    fresh = LoopRecord(items, record.keys, record.entries, record.texts, state)
    return fresh, len(processed)


def _per_item(record: LoopRecord | None, items: Sequence[Any], refs: tuple[Any, ...], caller: Callable[[Any], str],
              state: LoopState, cached: Cached, bulk: bool) -> tuple[LoopRecord, int]:
    previous = record.by_key() if record is not None else {}
    current: dict[Any, Entry] = {}
    keys, texts = [], []
    for item in items:
        part, held = item_key(item)
        keys.append(part)
        texts.append(cached(part, (held, refs), partial(caller, item), current, previous))
    entries = [current.get(k) for k in keys]
    fresh = LoopRecord(items, keys, entries, texts, state, aggregate=bulk)
    return fresh, len(items)


def _splice(record: LoopRecord, p: int, shape: Shape) -> None:
    """Item ``p``'s new journal, of the same shape as its old one, in the record's streams."""
    for k, stream in record.appends.items():
        stream.replace(p, shape.appends.get(k, []))
    for k, stream in record.marks.items():
        stream.replace(p, shape.marks.get(k, []))
    if shape.generic:
        at = bisect_left(record.generic_at, p)
        for offset, op in enumerate(shape.generic):
            record.generic[at + offset] = (p, op)


def _apply(record: LoopRecord, a: int, b: int, roles: Mapping[str, Any], seen: SeenKeys) -> None:
    """The effects of the untouched items ``a`` to ``b`` (excluded), as their journals would have applied them."""
    if a >= b:
        return
    shared: Any = roles.get("shared")
    for key, stream in record.appends.items():
        values = stream.slice(a, b)
        if values:
            shared.extend(key, values)
    for key, stream in record.marks.items():
        values = stream.slice(a, b)
        if values:
            shared.mark_all(key, values)
    if record.claims.flat:  # lent as a run (``SeenKeys``), not inserted one by one
        seen.add_run(record.positions(), a, b, record.claims.slice)
    slot_at = record.slots.at
    if slot_at and bisect_left(slot_at, a) < bisect_left(slot_at, b):  # some items assigned backends
        every_low = len(record.lows.flat) if len(record.slot_index) == len(record.slots.flat) else -1
        roles["slots"].carry(partial(record.lows.slice, a, b), every_low)
    if record.generic_at:
        start, end = bisect_left(record.generic_at, a), bisect_left(record.generic_at, b)
        for _, (_, role, method, args, _) in record.generic[start:end]:
            getattr(roles[role], method)(*args)


def _settle_lows(record: LoopRecord, processed: list[int], slots: Any) -> None:
    """``server_slots.settle_lows`` of the backends the processed items assigned in the last render."""
    settle = getattr(slots, "settle_lows", None)
    if settle is not None and processed and record.slots.flat:
        settle(chain.from_iterable(map(record.slots.of, processed)))


def _shrinkable(record: LoopRecord, processed: set[int], slots: Any) -> None:
    """``server_slots.shrinkable`` as the untouched items' ``assign`` calls would have left it."""
    if slots is None or not record.low_order or getattr(slots, "shrinkable", True):
        return
    now = slots.now
    if now is None:
        return
    for at, p, since, quiet in record.low_order:
        if at > now + 1.0:
            return
        if p not in processed and slots.note_low(since, quiet):
            return


__all__ = ["LoopRecord", "LoopState", "Shape", "render_loop"]
