"""Keeps credentials out of anything the controller shows (debug endpoints, logs of objects).

Three nets, because each alone misses something:

1. **by key** — values under keys that name a secret (``password``, ``token``, ``tls.key`` ...) are
   replaced, whatever their type;
2. **by value** — every string is scrubbed of the secret values the controller currently knows (the
   Dataplane password from the credentials Secret, say), wherever they appear: inside an error
   message, a rendered config, a URL;
3. **URL user info** — ``scheme://user:password@host`` keeps the user and loses the password.

Secret values shorter than ``MIN_SECRET_LENGTH`` are not scrubbed by value (a one-letter "password"
would blank every such letter of the output); they are still caught by key.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["MASK", "MIN_SECRET_LENGTH", "Redactor", "is_sensitive_key"]

MASK = "***REDACTED***"
MIN_SECRET_LENGTH = 4

_SENSITIVE_KEY = re.compile(
    r"(pass(word|wd|phrase)?|secret|token|credential|api[-_]?key|private[-_]?key|authorization|bearer|"
    r"cookie|^key$|\.key$|_key$|-key$|tls\.key|client[-_]?key|ssh[-_]?key|pem$)",
    re.IGNORECASE,
)
# Keys that contain a sensitive word but hold no secret; the original's `has_dataplane_creds` flag.
_HARMLESS_KEY = re.compile(r"^(has_|is_|secret_?name$|secret_?ref$|secretname$|.*_count$|.*version$)", re.IGNORECASE)
_URL_USERINFO = re.compile(r"(?P<scheme>[a-zA-Z][a-zA-Z0-9+.-]*://)(?P<user>[^:/@\s]*):(?P<pw>[^@/\s]+)@")


def is_sensitive_key(key: str) -> bool:
    return bool(_SENSITIVE_KEY.search(key)) and not _HARMLESS_KEY.search(key)


class Redactor:
    """Redacts nested JSON-like data and text. ``secrets`` are values to scrub wherever they occur."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        # Longest first, so a secret that contains another is masked whole.
        unique = {s for s in secrets if isinstance(s, str) and len(s) >= MIN_SECRET_LENGTH}
        self._secrets = sorted(unique, key=lambda s: (-len(s), s))

    def text(self, value: str) -> str:
        for secret in self._secrets:
            if secret in value:
                value = value.replace(secret, MASK)
        return _URL_USERINFO.sub(lambda m: f"{m['scheme']}{m['user']}:{MASK}@", value)

    def data(self, value: Any) -> Any:
        """A redacted copy of JSON-like data (dicts, lists, tuples, scalars)."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, Mapping):
            out: dict[str, Any] = {}
            for key, item in value.items():
                name = str(key)
                if is_sensitive_key(name) and item not in (None, "", {}, []) and not isinstance(item, bool):
                    out[self.text(name)] = MASK
                else:
                    out[self.text(name)] = self.data(item)
            return out
        if isinstance(value, list | tuple):
            return [self.data(item) for item in value]
        return value
