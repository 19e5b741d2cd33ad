"""Every error ``haptic.core`` raises, under one base, ``CoreError``.

Each also keeps the builtin base callers may catch (``ValueError``, ``RuntimeError``). The modules that
raise them re-export them (``haptic.core.bus.SubscriptionClosed`` ...), as does ``haptic.core``.
"""

from __future__ import annotations

__all__ = ["CoreError", "DependencyError", "StartError", "SubscriptionClosed"]


class CoreError(Exception):
    """Base of every error of ``haptic.core``."""


class SubscriptionClosed(CoreError):
    """Raised by ``Subscription.get`` once the subscription is closed and drained."""


class DependencyError(CoreError, ValueError):
    """Unknown dependency, a cycle, or an all-replica component depending on a leader-only one."""


class StartError(CoreError, RuntimeError):
    """A component failed to start; the components depending on it were not started."""
