"""``ConfigError``: a configuration (custom resource or Secret) that cannot be used, and where it is wrong."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import ValidationError


@dataclass(frozen=True)
class FieldProblem:
    """One problem: a dotted field path (``spec.watchedResources.ingresses.indexBy[0]``) and a message."""

    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}" if self.path else self.message


class ConfigError(ValueError):
    """Raised for unusable configuration. ``str()`` names the object and the first field path.

    ``problems`` lists every field that failed, in the order pydantic reported them.
    """

    def __init__(self, object_name: str, problems: Sequence[FieldProblem]) -> None:
        self.object_name = object_name
        self.problems = list(problems)
        first = self.problems[0] if self.problems else FieldProblem("", "invalid")
        more = f" (+{len(self.problems) - 1} more)" if len(self.problems) > 1 else ""
        super().__init__(f"{object_name}: {first}{more}")

    @property
    def path(self) -> str:
        return self.problems[0].path if self.problems else ""

    def details(self) -> list[str]:
        """Every problem as ``path: message`` (for status ``validationErrors``)."""
        return [str(p) for p in self.problems]

    @classmethod
    def from_validation_error(cls, object_name: str, error: ValidationError, prefix: str = "") -> ConfigError:
        problems = []
        for item in error.errors(include_url=False, include_input=False):
            path = format_loc(item["loc"], prefix)
            message = item["msg"].removeprefix("Value error, ")
            problems.append(FieldProblem(path, message))
        return cls(object_name, problems)


def format_loc(loc: Sequence[str | int], prefix: str = "") -> str:
    """``('watchedResources', 'ingresses', 'indexBy', 0)`` -> ``spec.watchedResources.ingresses.indexBy[0]``."""
    out = prefix
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part and all(c.isalnum() or c in "_-" for c in part):
            out += f".{part}" if out else part
        else:
            out += f"[{part!r}]"
    return out
