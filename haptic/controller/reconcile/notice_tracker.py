"""``NoticeTracker``: which of a render's notices about single objects are new, and which exclusions ended.

Templates report the same notices on every render while the cause lasts; observers (Kubernetes Events,
status, metrics) want each once: when an object starts being left out (or for another reason), when it
is rendered again, and each warning once while it lasts.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from haptic.templating.notices import ObjectNotice


@dataclass
class NoticeChanges:
    excluded: list[ObjectNotice] = field(default_factory=list)
    readmitted: list[ObjectNotice] = field(default_factory=list)
    warned: list[ObjectNotice] = field(default_factory=list)


class NoticeTracker:
    def __init__(self) -> None:
        #: (kind, namespace, name) -> the notice it is excluded by (the first one, in sort order)
        self.excluded: dict[tuple[str, str, str], ObjectNotice] = {}
        self._warned: set[tuple[object, ...]] = set()

    def update(self, notices: Iterable[ObjectNotice]) -> NoticeChanges:
        changes = NoticeChanges()
        excluded: dict[tuple[str, str, str], ObjectNotice] = {}
        warned: set[tuple[object, ...]] = set()
        for notice in sorted(notices):
            if notice.excluded:
                excluded.setdefault(notice.ref.key, notice)
            elif notice.key not in warned:
                warned.add(notice.key)
                if notice.key not in self._warned:
                    changes.warned.append(notice)
        for key in sorted(excluded):
            before = self.excluded.get(key)
            now = excluded[key]
            if before is None or (before.reason, before.message, before.field) != (now.reason, now.message, now.field):
                changes.excluded.append(now)
        changes.readmitted = [self.excluded[key] for key in sorted(self.excluded) if key not in excluded]
        self.excluded = excluded
        self._warned = warned
        return changes
