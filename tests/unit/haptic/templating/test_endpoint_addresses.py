"""Endpoint addresses are parsed as ``ipaddress`` parses them (the dotted-decimal fast path included)."""

from __future__ import annotations

import ipaddress
import random

from haptic.templating.context import _parse_ip


def reference(address: str) -> tuple[str, tuple[int, int]] | None:
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return None
    return str(ip), (ip.version, int(ip))


def test_addresses_parse_as_ipaddress_parses_them() -> None:
    rng = random.Random(19)
    pieces = ["0", "1", "9", "10", "01", "00", "255", "256", "999", "1000", "", "a", "٣", "²", " ", "+1", "-1"]
    samples = ["10.0.0.1", "192.168.001.1", "0.0.0.0", "255.255.255.255", "1.2.3", "1.2.3.4.5", "::1",
               "::ffff:10.0.0.1", "fe80::1", "2001:db8::1", "1.2.3.4 ", "01.2.3.4", "1.2.3.04"]
    for _ in range(4000):
        samples.append(".".join(rng.choice(pieces) for _ in range(rng.choice((3, 4, 4, 4, 5)))))
    for address in samples:
        assert _parse_ip.__wrapped__(address) == reference(address), address
    assert _parse_ip.__wrapped__("10.1.2.3") == ("10.1.2.3", (4, 0x0A010203))
