"""A document of the team's store of record as it is read back
(:mod:`kronika.stores.postgres.record`): its body and the parts made since (text added
at its end, or put over a span of it), assembled in order; and the statements that
read them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kronika.ports import RecordAppend, RecordDocument

_PARTS = (
    "(SELECT array_agg(p.{0} ORDER BY p.change) FROM record_document_parts p"
    " WHERE p.tenant = d.tenant AND p.agent = d.agent AND p.path = d.path)"
)
WHOLE = ", ".join(["d.body", *(_PARTS.format(column) for column in ("text", "at", "cut"))])
"""A document's whole text, as its body and the texts, places and spans of the parts
made since, in order (:func:`assembled`)."""
CHANGES = (
    "SELECT d.agent, d.path, d.modified_ns, d.change, d.sha256, n.bases, n.texts, n.ats,"
    " n.cuts, CASE WHEN n.bases IS NULL THEN d.body END,"
    + ", ".join(
        f" CASE WHEN n.bases IS NULL THEN {_PARTS.format(column)} END"
        for column in ("text", "at", "cut")
    )
    + " FROM record_documents d LEFT JOIN LATERAL (SELECT CASE WHEN"
    " bool_and(p.base_sha256 IS NOT NULL) THEN array_agg(p.base_sha256 ORDER BY p.change)"
    " END AS bases,"
    " array_agg(p.text ORDER BY p.change) AS texts,"
    " array_agg(p.at ORDER BY p.change) AS ats, array_agg(p.cut ORDER BY p.change) AS cuts"
    " FROM record_document_parts p WHERE p.tenant = d.tenant AND p.agent = d.agent"
    " AND p.path = d.path AND p.change > %(since)s AND d.body_change <= %(since)s) n"
    " ON %(grown)s WHERE d.tenant = %(tenant)s AND d.change > %(since)s"
    " AND (%(before)s::bigint IS NULL OR d.change < %(before)s) ORDER BY d.change"
)
"""Every document changed after change ``since``; with ``grown``, one whose body was
written by then (``body_change``) and that only had parts made since, as those parts
(each with the SHA-256 the document had before it); any other whole (:data:`WHOLE`),
one with a part older than migration ``0104`` (which has no such digest) too.
The parts after a change are found by the primary key: a pull of a grown session reads
its new parts, not its body."""
DOCUMENT = (
    f"SELECT d.agent, d.path, d.modified_ns, d.change, {WHOLE} FROM record_documents d"
    " WHERE d.tenant = %(tenant)s AND d.agent = %(agent)s AND d.path = %(path)s"
)


def documents(rows: Sequence[Any]) -> list[RecordDocument]:
    """The documents of rows of :data:`CHANGES`: a document written whole, or the
    parts made since as documents of their own, in order (:func:`parts`)."""
    found: list[RecordDocument] = []
    for a, p, m, c, sha, bases, texts, ats, cuts, body, all_texts, all_ats, all_cuts in rows:
        if bases is None:
            whole = assembled(body, all_texts, all_ats, all_cuts)
            found.append(RecordDocument(a, p, whole, int(m), int(c)))
        else:
            found.extend(parts(a, p, int(m), int(c), sha, bases, texts, ats, cuts))
    return found


def parts(
    agent: str,
    path: str,
    modified_ns: int,
    change: int,
    sha256: str,
    bases: Sequence[str],
    texts: Sequence[str],
    ats: Sequence[int | None],
    cuts: Sequence[int | None],
) -> list[RecordDocument]:
    """The parts of a document made since a pull, each the text that went in with the
    SHA-256 the document had before it and after it (the next part's before, the
    document's own after the last); parts added at the end one after the other come as
    one. Each carries the document's time and change."""
    found: list[RecordDocument] = []
    afters = [*bases[1:], sha256]
    n = 0
    while n < len(texts):
        stop = n + 1
        if ats[n] is None:
            while stop < len(texts) and ats[stop] is None:
                stop += 1
        splice = RecordAppend(bases[n], afters[stop - 1], ats[n], cuts[n] or 0)
        text = "".join(texts[n:stop])
        found.append(RecordDocument(agent, path, text, modified_ns, change, appends=splice))
        n = stop
    return found


def assembled(
    body: str | None,
    texts: Sequence[str] | None,
    ats: Sequence[int | None] | None,
    cuts: Sequence[int | None] | None,
) -> str | None:
    """A document's text: its ``body`` with its parts put in, in order (each at the
    end, or over the span it replaces); ``None`` for a removed document."""
    if body is None or not texts:
        return body
    if ats is None or all(at is None for at in ats):
        return body + "".join(texts)
    text = body
    for part, at, cut in zip(texts, ats, cuts or [None] * len(texts), strict=True):
        text = text + part if at is None else text[:at] + part + text[at + (cut or 0) :]
    return text
