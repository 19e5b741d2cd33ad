"""One definition of the characters that end a line or a command, used by the templates' safety checks,
the webhook, the Dataplane client and the fake Dataplane API."""

from __future__ import annotations

import sys
import unicodedata

from haptic.core.control_characters import first_control_character, has_control_characters
from haptic.dataplane.client import addressable
from haptic.templating.safety import is_haproxy_token
from simulator.dataplane.api_model import control_character


def test_the_set_is_unicode_categories_cc_zl_zp_and_every_line_break_python_knows() -> None:
    for code in range(sys.maxunicode + 1):
        char = chr(code)
        assert has_control_characters(char) == (unicodedata.category(char) in ("Cc", "Zl", "Zp")), hex(code)
    breaks = {char for code in range(sys.maxunicode + 1) if len(f"a{(char := chr(code))}b".splitlines()) > 1}
    assert all(has_control_characters(char) for char in breaks)


def test_every_user_reports_the_same_characters() -> None:
    for value in ("a\nb", "tab\there", "nel\x85", "sep\u2028", "del\x7f"):
        assert first_control_character(value) == control_character(value) is not None
        assert not addressable(value)
        assert not is_haproxy_token(value)
    assert first_control_character("plain é ü") is None and addressable("plain")
