"""The Dataplane API credentials, read from a Kubernetes Secret's base64 ``data``.

The password is a ``pydantic.SecretStr``: ``repr``/``str`` of a ``Credentials`` never show it;
call ``password.get_secret_value()`` where it is really needed (the HTTP client).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SecretStr

from haptic.config.errors import ConfigError, FieldProblem

USERNAME_KEY = "dataplane_username"
PASSWORD_KEY = "dataplane_password"
DEFAULT_SECRET_NAME = "haproxy-credentials"


class Credentials(BaseModel):
    """Basic-auth credentials of the HAProxy Dataplane API."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    username: str = Field(min_length=1)
    password: SecretStr

    @classmethod
    def from_secret(cls, secret: Mapping[str, Any]) -> Credentials:
        return load_credentials(secret)


def _secret_name(secret: Mapping[str, Any]) -> str:
    metadata = secret.get("metadata") if isinstance(secret, Mapping) else None
    if isinstance(metadata, Mapping) and metadata.get("name"):
        ns = metadata.get("namespace")
        return f"Secret {ns}/{metadata['name']}" if ns else f"Secret {metadata['name']}"
    return "Secret"


def load_credentials(secret: Mapping[str, Any]) -> Credentials:
    """Reads ``data.dataplane_username`` / ``data.dataplane_password`` (base64); ``stringData`` also counts.

    Raises ``ConfigError`` naming the Secret and the key; the error never contains the values.
    """
    name = _secret_name(secret)
    data = secret.get("data") or {}
    string_data = secret.get("stringData") or {}
    if not isinstance(data, Mapping) or not isinstance(string_data, Mapping):
        raise ConfigError(name, [FieldProblem("data", "must be a mapping")])
    values: dict[str, str] = {}
    problems: list[FieldProblem] = []
    for key in (USERNAME_KEY, PASSWORD_KEY):
        if key in string_data:
            values[key] = str(string_data[key])
        elif key in data:
            try:
                values[key] = base64.b64decode(str(data[key]), validate=True).decode("utf-8")
            except (binascii.Error, UnicodeDecodeError):
                problems.append(FieldProblem(f"data.{key}", "is not valid base64-encoded UTF-8"))
                continue
        else:
            problems.append(FieldProblem(f"data.{key}", "is missing"))
            continue
        if not values[key]:
            problems.append(FieldProblem(f"data.{key}", "must not be empty"))
    if problems:
        raise ConfigError(name, problems)
    return Credentials(username=values[USERNAME_KEY], password=SecretStr(values[PASSWORD_KEY]))
