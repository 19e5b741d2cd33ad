"""Values a validity check already accepted, remembered so that checking them again costs a set lookup.

Label keys and values, annotation keys and data keys repeat across writes (every revision of an object
carries the same ones), and the fake checks each write as the API server does: remembering what passed
keeps that affordable. Only acceptance is remembered; a refused value is checked (and its errors
worded) every time.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Hashable


class KnownGood:
    def __init__(self, check: Callable[[Hashable], bool], limit: int = 20_000) -> None:
        self._check = check
        self._good: set[Hashable] = set()
        self._limit = limit

    def all(self, values: Collection[Hashable]) -> bool:
        """Whether every value passes the check."""
        good = self._good
        if good.issuperset(values):
            return True
        for value in values:
            if value not in good:
                if not self._check(value):
                    return False
                if len(good) >= self._limit:  # bounded: values of long runs do not pile up
                    good.clear()
                good.add(value)
        return True
