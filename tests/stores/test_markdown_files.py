"""Reading a workspace file that may be damaged: control characters are found in its
bytes as in its text, whatever else the bytes hold."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kronika.stores.markdown.files import CONTROL, decode, holds_control

# bytes that make every case: control bytes, NUL, DEL, ASCII, the lead and continuation
# bytes of multi-byte UTF-8 (whole, cut short, or stray), and bytes UTF-8 never holds
_PIECES = st.sampled_from(
    [b"\x01", b"\x07", b"\x1b", b"\x1f", b"\x7f", b"\x00", b"a", b"\n", b"\t", b"\r"]
    + ["ó".encode(), "ї".encode(), "€".encode(), "🙂".encode(), b"\xc3", b"\xe2\x82", b"\x80"]
    + [b"\xf0\x9f", b"\xff", b"\xfe"]
)


@given(st.lists(_PIECES, max_size=40))
@settings(max_examples=500, deadline=None)
def test_a_control_character_is_found_in_the_bytes_as_in_the_text(pieces: list[bytes]) -> None:
    raw = b"".join(pieces)
    text = raw.decode("utf-8", errors="replace")
    assert holds_control(raw) == (CONTROL.search(text) is not None)
    read, problem = decode(raw)
    assert CONTROL.search(read) is None and "\x00" not in read
    if CONTROL.search(text.replace("\x00", "")) is not None:
        assert problem is not None
        assert read.count("\ufffd") > text.count("\ufffd")  # each became U+FFFD


def test_a_file_without_damage_reads_as_its_text() -> None:
    raw = "# Notes\n\n- tab\there, Kraków, Київ 🙂\r\n".encode()
    assert decode(raw) == (raw.decode(), None)
    assert not holds_control(raw)
