"""``cut(text, separator)``: ``text.split(separator)``, once per text object and separator.

A rendered config of 10,000 backends (4 MB) is cut at its ``backend`` lines by the structural check and by the
reader of the deployed config, one after the other, for every change: the second gets the first's pieces. The
deployed config read back from a pod is the text rendered before as another object: it gets that text's pieces. A
new text of a change is cut from the last text cut at the same separator: the pieces it has as they were, in place,
are that text's piece objects (found by memory compares of whole runs of pieces), only the others are cut anew
(a 4 MB split per change was the largest pass left of an endpoint change; the reused pieces also compare by
identity in the passes after). The lists are shared: callers only read them. Holds the last few
texts (each entry holds its text, so that its id is not reused meanwhile); safe from several threads.

``changed_pieces(old, new)``: where two cuts differ. A cut made from another with as many pieces records which
pieces it cut anew (its lineage); the pieces between two cuts of one lineage that differ are among those cut anew
along it, so each pass over a change (the structural check, the config reader, the deployer's parse, the
publication) finds its ten changed backends without comparing 10,000 pieces; two cuts of no common lineage are
compared piece by piece.
"""

from __future__ import annotations

import threading
from itertools import compress
from operator import ne

from haptic.core.identity import Recent

__all__ = ["BACKENDS", "changed_pieces", "cut", "split_like"]

#: where a rendered config is cut into its backends (the structural check and the deployed-config reader share
#: these pieces only while both cut at the same separator)
BACKENDS = "\nbackend "

#: pieces in a row not found in place, after which the walk stops looking (pieces were added or taken out)
_LOST = 16

#: below this size a text is split whole, and not kept: finding the stretch that changed costs more than it saves
_LARGE = 1 << 16

#: the texts of a change (the passed config, the new one, the deployed one read back), cut at lines and at backends
_CUTS: Recent[list[str]] = Recent(8)

#: how many cuts a lineage is followed back (each link holds its parent's list: a few lists of references)
_DEPTH = 16

#: per cut made from another with as many pieces (by the id of its list): the list, the list it was made from and
#: the indices it cut anew; the last ``_DEPTH`` * 2 such cuts
_LINEAGE: dict[int, tuple[list[str], list[str], tuple[int, ...]]] = {}
_LINEAGE_LOCK = threading.Lock()


def _descend(child: list[str], parent: list[str], fresh: tuple[int, ...]) -> None:
    with _LINEAGE_LOCK:
        while len(_LINEAGE) >= _DEPTH * 2:
            del _LINEAGE[next(iter(_LINEAGE))]
        _LINEAGE[id(child)] = (child, parent, fresh)


def changed_pieces(old: list[str], new: list[str]) -> list[int] | None:
    """The indices at which the pieces ``new`` and ``old`` (two answers of ``cut``) differ, in order; None when they
    are not as many (the pieces do not line up). When they descend from one cut through cuts of as many pieces
    (either may be the other's ancestor: a text that comes again is answered with its first cut) only the pieces cut
    anew along the way are compared, else every piece is. A config kept for long (the one ``haproxy -c`` passed
    last, which every structural proof starts from) stays near: once out of the memo it is cut again from the
    latest cut."""
    if new is old:
        return []
    if len(new) != len(old):
        return None
    with _LINEAGE_LOCK:
        found = _by_lineage(old, new)
    if found is None:
        return list(compress(range(len(old)), map(ne, old, new)))
    return [k for k in sorted(found) if new[k] != old[k]]


def _by_lineage(old: list[str], new: list[str]) -> set[int] | None:
    """The indices of the pieces cut anew along the lines of descent of ``old`` and ``new`` from a common cut (those
    that may differ), or None when they have none within ``_DEPTH`` cuts. Called with the lock held."""
    ancestors = _ancestors(new)
    fresh: set[int] = set()
    at = old
    for _ in range(_DEPTH + 1):
        known = ancestors.get(id(at))
        if known is not None and known[0] is at:
            return fresh | known[1]
        link = _LINEAGE.get(id(at))
        if link is None or link[0] is not at:
            return None
        fresh.update(link[2])
        at = link[1]
    return None


def _ancestors(pieces: list[str]) -> dict[int, tuple[list[str], set[int]]]:
    """``pieces`` and the cuts it descends from (by the ids of their lists), each with the indices cut anew on the
    way down from it."""
    found: dict[int, tuple[list[str], set[int]]] = {id(pieces): (pieces, set())}
    fresh: set[int] = set()
    at = pieces
    for _ in range(_DEPTH):
        link = _LINEAGE.get(id(at))
        if link is None or link[0] is not at:
            break
        fresh = fresh | set(link[2])
        at = link[1]
        found[id(at)] = (at, fresh)
    return found


def cut(text: str, separator: str) -> list[str]:
    """The pieces of ``text`` between occurrences of ``separator`` (read-only: shared with other callers)."""
    if len(text) < _LARGE:
        # split whole, and not kept: a section's text (the planner's) would push a config's cut out of the memo
        # and be the cut the next config is made from
        return text.split(separator)

    def split() -> list[str]:
        last = _CUTS.latest(separator)
        return text.split(separator) if last is None else split_like(text, last[1], separator)

    return _CUTS.answer(text, separator, split, by_value=True)


def _overlaps_itself(separator: str) -> bool:
    """Whether an occurrence of ``separator`` can begin inside another (a border: a proper prefix that is also a
    suffix), where the end of one run of pieces would decide how the next one is split."""
    return any(separator[:k] == separator[-k:] for k in range(1, len(separator)))


def split_like(text: str, pieces: list[str], separator: str) -> list[str]:
    """``text.split(separator)``, given the ``pieces`` of a similar text (its ``split(separator)``): walking both,
    each run of ``pieces`` found in place (each piece followed by a separator) is taken as it is; where a piece is
    not, the text's own piece there takes its place (a changed backend: the endpoints of one Service change the 10
    backends of its Ingresses, anywhere in the config); after ``_LOST`` such pieces in a row (pieces added or
    taken out), the longest run that the text ends with is taken too, and the stretch between is split. Correct
    for any such pieces (none holds the separator): a separator without borders is found where it stands,
    whatever precedes it, so a run of pieces matched in place splits as it did; one with borders is split
    whole."""
    if not separator or _overlaps_itself(separator) or len(pieces) < 2:
        return text.split(separator)
    width = len(separator)
    out: list[str] = []
    fresh: list[int] = []  # the indices of the pieces cut anew
    # Galloping over runs of pieces, each compared where it would stand (one copy of the run and one memory
    # compare), doubling on a match, halving on a miss.
    first, at, step, lost = 0, 0, 1, 0
    limit = len(pieces) - 1  # the last piece is not followed by a separator
    while first < limit and lost < _LOST:
        count = min(step, limit - first)
        run = separator.join(pieces[first:first + count])
        end = at + len(run)
        if text.startswith(run, at) and text.startswith(separator, end):
            out += pieces[first:first + count]
            first, at, step, lost = first + count, end + width, step * 2, 0
        elif count > 1:
            step = max(1, count // 2)
        else:
            found = text.find(separator, at)
            if found < 0:
                break
            fresh.append(len(out))
            out.append(text[at:found])
            first, at, step, lost = first + 1, found + width, 1, lost + 1
    # The run at the end, not reaching back past what was taken: its leading separator at or after ``at``, or the
    # one taken last (then nothing is left between them).
    floor = at - width if first else 0
    last, stop, step = len(pieces), len(text), 1
    while last > max(first, 1):
        count = min(step, last - max(first, 1))
        run = separator.join(pieces[last - count:last])
        begin = stop - len(run) - width
        if begin >= floor and text.startswith(separator, begin) and text.startswith(run, begin + width):
            last, stop, step = last - count, begin, step * 2
        elif count == 1:
            break
        else:
            step = max(1, count // 2)
    if stop >= at:
        middle = text[at:stop].split(separator)
        fresh.extend(range(len(out), len(out) + len(middle)))
        out += middle
    out += pieces[last:]
    if len(out) == len(pieces):  # one for one: every piece not cut anew is the other's at its own index
        _descend(out, pieces, tuple(fresh))
    return out
