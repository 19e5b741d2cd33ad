"""The fake's storage keeps a file byte for byte, on disk as in memory, like the real dataplaneapi: an
errorfile is a whole HTTP response whose CRLF line ends must come back as stored (reading the file with
universal newlines turned them into LF, so the controller saw drift forever on the local tier)."""

from __future__ import annotations

from pathlib import Path

import pytest

from simulator.dataplane.storage import Storage

RESPONSE = "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 2\r\n\r\nno\r\nend\rlast\n"


@pytest.mark.parametrize("on_disk", [True, False], ids=["disk", "memory"])
def test_a_file_with_crlf_comes_back_as_stored(tmp_path: Path, on_disk: bool) -> None:
    storage = Storage(tmp_path if on_disk else None)
    storage.put("general", "error-503.http", RESPONSE)
    found = storage.get("general", "error-503.http")
    assert found is not None and found.content == RESPONSE
    if on_disk:
        assert Path(storage.path("general", "error-503.http")).read_bytes() == RESPONSE.encode()
