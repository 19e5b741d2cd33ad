"""``metav1.Condition`` entries as the Gateway API statuses carry them.

``lastTransitionTime`` is left to the status writer: it keeps the object's current time when the
condition's status did not change, and stamps the write time otherwise.
"""

from __future__ import annotations

from typing import Any

from haptic.templating.ingress_helpers import age_key

__all__ = ["age_key", "condition", "generation_of"]


def condition(kind: str, ok: bool, reason: str, message: str, generation: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"type": kind, "status": "True" if ok else "False", "reason": reason, "message": message}
    if isinstance(generation, int):
        out["observedGeneration"] = generation
    return out


def generation_of(obj: Any) -> Any:
    return ((obj.get("metadata") or {}) if isinstance(obj, dict) else {}).get("generation")

