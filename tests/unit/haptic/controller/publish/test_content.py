"""Published content: zstd + base64 above the threshold; a large config as frames per block of backends, those of
unchanged blocks kept from the last publication; read back frame by frame."""

from __future__ import annotations

import base64
import shutil
import subprocess

import pytest
import zstandard

from haptic.controller.publish import content
from haptic.controller.publish.content import decode_content, encode_config, encode_content


def _config(backends: int, port: int = 80) -> str:
    return "global\n    maxconn 10\n" + "".join(
        f"\nbackend b{i}\n    server s1 10.0.{i // 250}.{i % 250}:{port if i == 600 else 80} check é"
        for i in range(backends))


def test_small_content_is_stored_as_is_and_large_content_comes_back_whole() -> None:
    assert encode_content("global\n", 100) == ("global\n", False)
    assert encode_config("global\n", 0) == ("global\n", False)
    text = _config(1000)
    stored, compressed = encode_content(text, 100)
    assert compressed and decode_content(stored, compressed) == text
    stored, compressed = encode_config(text, 100)
    assert compressed and decode_content(stored, compressed) == text
    assert len(base64.b64decode(stored)) < len(text.encode()) // 5


def test_a_config_publication_is_a_stream_of_frames_that_zstd_itself_reads() -> None:
    text = _config(2000)
    raw = base64.b64decode(encode_config(text, 100)[0])
    frames = 0
    while raw:
        decompressor = zstandard.ZstdDecompressor().decompressobj()
        decompressor.decompress(raw)
        frames, raw = frames + 1, decompressor.unused_data
    assert frames == 8  # 2,000 backends and the global section: blocks of 256 pieces
    tool = shutil.which("zstd")
    if tool is None:
        pytest.skip("the zstd command is not installed: the stream was read by python-zstandard only")
    out = subprocess.run([tool, "-d", "-c"], input=base64.b64decode(encode_config(text, 100)[0]),
                         capture_output=True, check=True)
    assert out.stdout.decode() == text


def test_an_endpoint_change_compresses_the_block_it_changed_only(monkeypatch: pytest.MonkeyPatch) -> None:
    # large enough (100 KB) to be cut from the text cut before it, as rendered configs of a change are
    before, after = _config(2000), _config(2000, port=81)
    encode_config(before, 100)
    compressed: list[str] = []
    frame = content._frame
    monkeypatch.setattr(content, "_frame", lambda text: compressed.append(text) or frame(text))
    stored, _ = encode_config(after, 100)
    assert decode_content(stored, True) == after
    assert len(compressed) == 1 and "10.0.2.100:81" in compressed[0]
    compressed.clear()
    stored, _ = encode_config(before, 100)  # and back: its block again, the others kept
    assert decode_content(stored, True) == before and len(compressed) == 1
    compressed.clear()
    stored, _ = encode_config(_config(2001), 100)  # one backend more, at the end: whole again from the change on
    assert decode_content(stored, True) == _config(2001) and compressed


def test_content_that_ends_inside_a_frame_is_refused() -> None:
    stored, _ = encode_content(_config(300), 10)
    cut_short = base64.b64encode(base64.b64decode(stored)[:-20]).decode()
    with pytest.raises(zstandard.ZstdError):
        decode_content(cut_short, True)


def test_blocks_holding_no_piece_cut_anew_are_kept_without_being_compared(monkeypatch: pytest.MonkeyPatch) -> None:
    """The pieces cut anew since the last publication (``changed_pieces``) name the blocks a change touched: the
    others are the last publication's blocks as they are, without a slice of 256 pieces compared for each."""
    before, after = _config(3000), _config(3000, port=81)
    encode_config(before, 100)
    compared: list[int] = []
    same = content.same_items
    monkeypatch.setattr(content, "same_items", lambda a, b: compared.append(len(b)) or same(a, b))
    stored, _ = encode_config(after, 100)
    assert decode_content(stored, True) == after
    assert len(compared) <= 1  # the touched block at most (12 blocks in all)
    fresh = content._CONFIGS  # and a publication from scratch gives the very same frames
    monkeypatch.setattr(content, "_CONFIGS", content._Frames())
    assert encode_config(after, 100)[0] == stored
    assert fresh is not content._CONFIGS
