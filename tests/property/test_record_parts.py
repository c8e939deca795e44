"""A document of the PostgreSQL record kept as a body and parts reads as the text the
writers made, whether it is read whole or pulled as its parts.

Each part either follows the text (an appended turn or fact) or goes over a span of it
(an archived fact's mark). Read whole, the parts are put into the body in order; pulled,
they come as documents of their own whose digests chain from the text before the first
to the text after the last, and putting each in its place gives the same text."""

from __future__ import annotations

import hashlib

from hypothesis import given
from hypothesis import strategies as st

from kronika.stores.postgres.record_text import assembled as _assembled
from kronika.stores.postgres.record_text import parts as _parts

_LINE = st.text(alphabet="abcé -<>!\u0436", max_size=12).map(lambda s: s + "\n")


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


@st.composite
def _documents(draw: st.DrawFn) -> tuple[str, list[tuple[str, int | None, int | None, str]]]:
    """A body and parts made one after the other against the text as it then was:
    ``(text, at, cut, digest before)``."""
    text = "".join(draw(st.lists(_LINE, max_size=6)))
    body, parts = text, []
    for _ in range(draw(st.integers(1, 6))):
        piece = "".join(draw(st.lists(_LINE, min_size=1, max_size=3)))
        before = _sha(text)
        if draw(st.booleans()):
            parts.append((piece, None, None, before))
            text += piece
        else:
            at = draw(st.integers(0, len(text)))
            cut = draw(st.integers(0, len(text) - at))
            parts.append((piece, at, cut, before))
            text = text[:at] + piece + text[at + cut :]
    return body, parts


@given(_documents())
def test_a_document_read_whole_or_pulled_part_by_part_is_the_text_made(
    document: tuple[str, list[tuple[str, int | None, int | None, str]]],
) -> None:
    body, parts = document
    texts = [p[0] for p in parts]
    ats = [p[1] for p in parts]
    cuts = [p[2] for p in parts]
    made = body
    for piece, at, cut, _ in parts:
        made = made + piece if at is None else made[:at] + piece + made[at + (cut or 0) :]
    assert _assembled(body, texts, ats, cuts) == made
    pulled = _parts("a", "p", 1, 9, _sha(made), [p[3] for p in parts], texts, ats, cuts)
    text = body
    for doc in pulled:
        grown = doc.appends
        assert grown is not None and doc.text is not None and _sha(text) == grown.base_sha256
        if grown.at is None:
            text += doc.text
        else:
            text = text[: grown.at] + doc.text + text[grown.at + grown.cut :]
        assert _sha(text) == grown.sha256
    assert text == made
    # parts added at the end one after the other come as one
    assert all(a.appends and b.appends for a, b in zip(pulled, pulled[1:], strict=False))
    assert not any(
        a.appends.at is None and b.appends.at is None  # type: ignore[union-attr]
        for a, b in zip(pulled, pulled[1:], strict=False)
    )
