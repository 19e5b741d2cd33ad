"""Names of the published auxiliary-file resources: valid object names that never collide."""

from __future__ import annotations

import re

from haptic.config.aux_resources import CRT_LIST_FILES, MAP_FILES, aux_resource_name

DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


def test_plain_names_keep_their_stem() -> None:
    assert aux_resource_name(MAP_FILES, "hosts.map") == "haproxy-map-hosts"
    assert aux_resource_name(CRT_LIST_FILES, "crt-list.txt") == "haproxy-crtlist-crt-list"


def test_names_that_lose_information_stay_apart_and_valid() -> None:
    names = {aux_resource_name(MAP_FILES, f) for f in ("a_b.map", "a.b.map", "A-B.map", "a-b.map")}
    assert len(names) == 4
    long = aux_resource_name(MAP_FILES, "X" * 400 + ".map")
    for name in [*names, long]:
        assert DNS_SUBDOMAIN.match(name) and len(name) <= 253, name
