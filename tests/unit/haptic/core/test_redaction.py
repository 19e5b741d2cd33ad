"""The redaction helper: by key, by known value, and URL user info."""

from __future__ import annotations

from haptic.core.redaction import MASK, Redactor, is_sensitive_key


def test_sensitive_keys() -> None:
    for key in ("password", "dataplanePassword", "DATAPLANE_PASSWORD", "token", "tls.key", "api_key", "secret",
                "Authorization", "privateKey", "credentials"):
        assert is_sensitive_key(key), key
    for key in ("has_dataplane_creds", "secretName", "username", "version", "keys_count", "name", "monkey"):
        assert not is_sensitive_key(key), key


def test_redacts_nested_data_by_key_value_and_url() -> None:
    pw = "hunter2-xyz"
    data = {
        "credentials": {"username": "admin", "password": pw},
        "endpoints": [{"url": "http://admin:otherpass@10.0.0.1:5555/v3", "user": "admin"}],
        "error": f"login failed with {pw} for admin",
        "has_dataplane_creds": True,
        "tls": {"tls.key": "-----BEGIN PRIVATE KEY-----", "tls.crt": "CERT"},
        "empty_password": "",
        "numbers": (1, 2),
    }
    out = Redactor([pw, "ab"]).data(data)
    assert out["credentials"] == MASK
    assert out["endpoints"][0]["url"] == f"http://admin:{MASK}@10.0.0.1:5555/v3"
    assert out["error"] == f"login failed with {MASK} for admin"
    assert out["has_dataplane_creds"] is True
    assert out["tls"] == {"tls.key": MASK, "tls.crt": "CERT"}
    assert out["empty_password"] == ""
    assert out["numbers"] == [1, 2]
    assert data["credentials"]["password"] == pw  # the input is untouched
    assert "ab" in Redactor(["ab"]).text("about")  # too short to scrub by value


def test_longer_secret_wins_over_its_prefix() -> None:
    assert Redactor(["abcd", "abcdefgh"]).text("x abcdefgh y") == f"x {MASK} y"
