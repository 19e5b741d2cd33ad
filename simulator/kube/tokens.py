"""ServiceAccount tokens: what ``TokenRequest`` (``serviceaccounts/<name>/token``) issues and what the
fake accepts as a bearer token.

Tokens are JWTs with the claims the API server puts in them (``iss``, ``sub``
``system:serviceaccount:<ns>:<name>``, ``aud``, ``exp``, ``iat``, ``nbf``, ``jti`` and the
``kubernetes.io`` claim naming the namespace and the ServiceAccount's name and uid), signed with
HS256 under a key each issuer draws at random: a signing key is a secret, not simulation
randomness, and tokens never reach traces. A token is valid while it has not expired (on the fake's
clock) and its ServiceAccount still exists with the same uid, as for bound tokens.

Legacy token Secrets (type ``kubernetes.io/service-account-token``) are filled as the token controller
fills them (``fill_token_secret``); their tokens never expire and stay valid while the Secret holds them.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import secrets
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from haptic.k8s.api import JSON, NotFound

from . import field_errors
from .clock import timestamp
from .field_errors import invalid_value
from .rbac import SA_PREFIX, UserInfo
from .validation import bad_request

if TYPE_CHECKING:
    from .store import FakeKubeAPI

ISSUER = "https://kubernetes.default.svc.cluster.local"
DEFAULT_AUDIENCES = (ISSUER, "k8s", "kubernetes")
DEFAULT_EXPIRATION = 3600
MIN_EXPIRATION = 600
LEGACY_ISSUER = "kubernetes/serviceaccount"
TOKEN_SECRET_TYPE = "kubernetes.io/service-account-token"
_LEGACY = "kubernetes.io/serviceaccount"
_SA_NAME_ANNOTATION = "kubernetes.io/service-account.name"
_SA_UID_ANNOTATION = "kubernetes.io/service-account.uid"


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def service_account_user(namespace: str, name: str, uid: str = "") -> UserInfo:
    groups = ("system:serviceaccounts", f"system:serviceaccounts:{namespace}", "system:authenticated")
    return UserInfo(f"{SA_PREFIX}{namespace}:{name}", groups, uid)


class TokenIssuer:
    """Signs and verifies ServiceAccount tokens for one fake API."""

    def __init__(self, api: FakeKubeAPI, ca_pem: bytes = b"") -> None:
        self.api = api
        self.ca_pem = ca_pem  # what token Secrets carry as ca.crt (the HTTPS server's certificate, if any)
        self._key = secrets.token_bytes(32)

    def _sign(self, payload: JSON) -> str:
        header = _b64(json.dumps({"alg": "HS256", "kid": "haptic-sim"}, separators=(",", ":")).encode())
        body = _b64(json.dumps(payload, separators=(",", ":"), sort_keys=True).encode())
        signature = hmac.new(self._key, f"{header}.{body}".encode(), hashlib.sha256).digest()
        return f"{header}.{body}.{_b64(signature)}"

    def request(self, namespace: str, name: str, body: Any) -> JSON:
        """Answers a TokenRequest for ServiceAccount ``namespace/name`` (404 if it does not exist)."""
        sa = self.api.get(self.api.resolve("v1", "serviceaccounts"), namespace, name)
        spec = (body or {}).get("spec") or {} if isinstance(body, dict) else {}
        seconds = spec.get("expirationSeconds", DEFAULT_EXPIRATION)
        if not isinstance(seconds, int) or isinstance(seconds, bool):
            raise bad_request("TokenRequest in version \"v1\" cannot be handled as a TokenRequest: "
                              "spec.expirationSeconds must be an integer")
        if seconds < MIN_EXPIRATION:
            raise field_errors.invalid("TokenRequest", "authentication.k8s.io", name, [invalid_value(
                "spec.expirationSeconds", seconds, "may not specify a duration less than 10 minutes")])
        audiences = list(spec.get("audiences") or DEFAULT_AUDIENCES)
        now = self.api.now().replace(microsecond=0)
        expires = now + timedelta(seconds=seconds)
        uid = str(sa["metadata"].get("uid", ""))
        payload = {
            "aud": audiences, "iss": ISSUER, "sub": f"{SA_PREFIX}{namespace}:{name}",
            "iat": int(now.timestamp()), "nbf": int(now.timestamp()), "exp": int(expires.timestamp()),
            "jti": self.api.new_uid(),
            "kubernetes.io": {"namespace": namespace, "serviceaccount": {"name": name, "uid": uid}},
        }
        meta: JSON = {"name": name, "namespace": namespace, "creationTimestamp": None}
        answer_spec: JSON = {"audiences": audiences, "expirationSeconds": seconds}
        if spec.get("boundObjectRef"):
            answer_spec["boundObjectRef"] = spec["boundObjectRef"]
        return {
            "kind": "TokenRequest", "apiVersion": "authentication.k8s.io/v1", "metadata": meta, "spec": answer_spec,
            "status": {"token": self._sign(payload), "expirationTimestamp": timestamp(expires)},
        }

    def fill_token_secret(self, secret: JSON) -> JSON | None:
        """What the token controller makes of a ``kubernetes.io/service-account-token`` Secret naming an
        existing ServiceAccount: ``data.token`` (a non-expiring token bound to the Secret), ``ca.crt`` and
        ``namespace``, and the ServiceAccount's uid annotation. None when there is nothing to fill."""
        meta = secret.get("metadata") or {}
        annotations = meta.get("annotations") or {}
        name = annotations.get(_SA_NAME_ANNOTATION)
        if secret.get("type") != TOKEN_SECRET_TYPE or not name or (secret.get("data") or {}).get("token"):
            return None
        namespace = str(meta.get("namespace", ""))
        try:
            sa = self.api.get(self.api.resolve("v1", "serviceaccounts"), namespace, str(name))
        except NotFound:
            return None  # the controller leaves it (and eventually deletes it)
        uid = str(sa["metadata"].get("uid", ""))
        token = self._sign({"iss": LEGACY_ISSUER, "sub": f"{SA_PREFIX}{namespace}:{name}",
                            f"{_LEGACY}/namespace": namespace, f"{_LEGACY}/secret.name": meta.get("name", ""),
                            f"{_LEGACY}/service-account.name": name, f"{_LEGACY}/service-account.uid": uid})
        data = {**(secret.get("data") or {}), "token": base64.b64encode(token.encode()).decode(),
                "namespace": base64.b64encode(namespace.encode()).decode(),
                "ca.crt": base64.b64encode(self.ca_pem).decode()}
        return {**secret, "data": data,
                "metadata": {**meta, "annotations": {**annotations, _SA_UID_ANNOTATION: uid}}}

    def _verify_legacy(self, claims: JSON, token: str) -> tuple[UserInfo | None, str]:
        namespace = str(claims.get(f"{_LEGACY}/namespace", ""))
        name = str(claims.get(f"{_LEGACY}/service-account.name", ""))
        secret_name = str(claims.get(f"{_LEGACY}/secret.name", ""))
        try:
            secret = self.api.get(self.api.resolve("v1", "secrets"), namespace, secret_name)
            sa = self.api.get(self.api.resolve("v1", "serviceaccounts"), namespace, name)
        except NotFound as exc:
            return None, f"invalid bearer token, {exc.message}"
        stored = (secret.get("data") or {}).get("token", "")
        if stored != base64.b64encode(token.encode()).decode():
            return None, "invalid bearer token, the token's Secret holds another token"
        if sa["metadata"].get("uid") != claims.get(f"{_LEGACY}/service-account.uid"):
            return None, "invalid bearer token, the ServiceAccount was deleted and created again"
        return service_account_user(namespace, name, str(sa["metadata"].get("uid", ""))), ""

    def verify(self, token: str, audiences: list[str] | None = None) -> tuple[UserInfo | None, str]:
        """The ServiceAccount a token authenticates, or None and why not."""
        parts = token.split(".")
        if len(parts) != 3:
            return None, "invalid bearer token"
        expected = hmac.new(self._key, f"{parts[0]}.{parts[1]}".encode(), hashlib.sha256).digest()
        try:
            signature = _unb64(parts[2])
            claims = json.loads(_unb64(parts[1]))
        except (binascii.Error, ValueError):
            return None, "invalid bearer token"
        if not hmac.compare_digest(signature, expected) or not isinstance(claims, dict):
            return None, "invalid bearer token, square/go-jose: error in cryptographic primitive"
        if claims.get("iss") == LEGACY_ISSUER:
            return self._verify_legacy(claims, token)
        if int(claims.get("exp", 0)) <= int(self.api.now().timestamp()):
            return None, "invalid bearer token, service account token has expired"
        wanted = audiences or list(DEFAULT_AUDIENCES)
        if not set(wanted) & set(claims.get("aud") or []):
            return None, "invalid bearer token, token audiences don't match"
        info = claims.get("kubernetes.io") or {}
        namespace = str(info.get("namespace", ""))
        account = info.get("serviceaccount") or {}
        try:
            sa = self.api.get(self.api.resolve("v1", "serviceaccounts"), namespace, str(account.get("name", "")))
        except NotFound:
            return None, (f'invalid bearer token, serviceaccounts "{account.get("name", "")}" not found')
        if sa["metadata"].get("uid") != account.get("uid"):
            return None, "invalid bearer token, the ServiceAccount was deleted and created again"
        return service_account_user(namespace, str(account["name"]), str(account.get("uid", ""))), ""
