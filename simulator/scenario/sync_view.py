"""Auxiliary files as a pod stores them versus as the controller rendered them, on every backend.

A rendered map, general file, crt-list or certificate is stored by the Dataplane API under a
sanitized name (``sanitize_name``); maps compare as their entries (order and blank lines do not
matter to haproxy), other files as their stripped text. Where only certificate *names* are known
(the controller's ``/debug/vars/auxfiles`` never shows private keys), certificates compare by name.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from simulator.dataplane.storage import Storage, parse_map, sanitize_name

AuxView = dict[str, dict[str, object]]
_KINDS = ("maps", "general", "ssl_certificates")


def rendered_view(maps: Mapping[str, str], general: Mapping[str, str],
                  certificates: Mapping[str, str] | Iterable[str]) -> AuxView:
    """Rendered files as the Dataplane API stores them; ``certificates`` as contents, or names only."""
    if isinstance(certificates, Mapping):
        certs: dict[str, object] = {sanitize_name("ssl_certificates", n): c.strip() for n, c in certificates.items()}
    else:
        certs = {sanitize_name("ssl_certificates", n): None for n in certificates}
    return {
        "maps": {sanitize_name("maps", n): parse_map(c) for n, c in maps.items()},
        "general": {sanitize_name("general", n): c.strip() for n, c in general.items()},
        "ssl_certificates": certs,
    }


def stored_view(storage: Storage, *, certificate_contents: bool = True) -> AuxView:
    """What a pod's Dataplane storage holds, in the form ``rendered_view`` gives."""
    return {
        "maps": {n: parse_map(f.content) for n, f in storage.files["maps"].items()},
        "general": {n: f.content.strip() for n, f in storage.files["general"].items()},
        "ssl_certificates": {n: f.content.strip() if certificate_contents else None
                             for n, f in storage.files["ssl_certificates"].items()},
    }


def differing_files(wanted: AuxView, stored: AuxView) -> list[str]:
    """Names (sorted) of the files missing, extra or different on the pod."""
    names: list[str] = []
    for kind in _KINDS:
        want, have = wanted.get(kind, {}), stored.get(kind, {})
        names.extend(n for n in sorted(set(want) | set(have)) if n not in want or n not in have or want[n] != have[n])
    return names
