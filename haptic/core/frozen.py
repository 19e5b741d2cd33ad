"""``frozen_instance``: a frozen dataclass instance built without its generated ``__init__``.

A frozen dataclass's ``__init__`` sets each field through ``object.__setattr__``; for objects built by the thousand
at a startup (a status or a notice per watched object) that is most of their cost. For classes whose ``__init__``
only stores its fields (no ``__post_init__``, no defaults computed, no slots): the fields are set as the generated
one would, in one dict update.
"""

from __future__ import annotations

from typing import Any, TypeVar

__all__ = ["frozen_instance"]

T = TypeVar("T")


def frozen_instance(cls: type[T], **fields: Any) -> T:
    """``cls(**fields)`` for a frozen dataclass without ``__post_init__`` or slots, every field given."""
    instance: T = object.__new__(cls)
    instance.__dict__.update(fields)
    return instance
