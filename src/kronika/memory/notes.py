"""Notes retained in the daily log (``memory/YYYY-MM-DD.md``, ``## Retain``), for the
audience the write names (:meth:`~kronika.memory.base.MemoryContext.audience`)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from kronika.core import checks
from kronika.core.entities import extract_entities
from kronika.core.model import (
    Layer,
    MemoryItem,
    Provenance,
    Reader,
    RetainKind,
    Scope,
    Tier,
    note_type,
)
from kronika.engine.changes import AppendNote
from kronika.engine.write import USER, WriteReceipt
from kronika.errors import InvalidInput
from kronika.memory.base import MAX_VALUE_CHARS, MemoryContext, _clean, _new_id


class Notes:
    """Retain notes in the daily log."""

    def __init__(self, ctx: MemoryContext) -> None:
        self._ctx = ctx

    def note(
        self,
        text: str,
        *,
        agent: str | None = None,
        at: datetime | None = None,
        source_agent: str = USER,
        kind: RetainKind | str | None = None,
        confidence: float | None = None,
        scope: Scope | str | None = None,
        user: str | None = None,
        channel: str | None = None,
        team: str | None = None,
        reader: Reader | None = None,
        tags: Sequence[str] = (),
    ) -> WriteReceipt:
        """Retain a note in today's daily log (``memory/YYYY-MM-DD.md``, ``## Retain``),
        for the audience :meth:`Memory.remember` would give it.

        ``kind`` types it (SPEC M6): ``W`` world (semantic memory), ``B`` experience
        (first person), ``O`` opinion — with ``confidence`` from 0 to 1 —, ``S``
        observation. ``@Name`` mentions in the text are its entities. ``tags`` are kept
        with the note (consolidation tags a world note ``session:<id>``, the conversation
        it was learned in).
        """
        ctx = self._ctx
        clean = _clean(text, what="the note", limit=MAX_VALUE_CHARS)
        at = checks.moment(at, what="at")
        retain = checks.retain_kind(kind)
        if confidence is not None:
            if retain is not RetainKind.OPINION:
                raise InvalidInput("a confidence belongs to an opinion: give kind O with it")
            confidence = checks.fraction(confidence, what="the confidence")
        name = ctx.agent_to_write(agent)  # checked again under the lock
        owners = ctx.audience(name, scope, user, channel, team, reader)
        now = at or ctx.clock.now()
        item = MemoryItem(
            id=_new_id("n"),
            agent=name,
            content=clean,
            type=note_type(retain),
            layer=Layer.LONG_TERM,
            tier=Tier.MID,
            created_at=now,
            updated_at=now,
            provenance=Provenance(path=f"memory/{now.date().isoformat()}.md"),
            tenant=ctx.workspace.tenant_of(name),
            **owners.fields(),
            section="Retain",
            importance=ctx.settings.importance_auto,
            entities=extract_entities(clean),
            kind=retain,
            confidence=confidence,
            tags=tuple(checks.texts(tags, what="tags")),
        )
        # indexed once the store of record holds it (team mode: the next writer of the
        # agent goes on meanwhile), before this returns
        with ctx.lock.for_agent(name), ctx.indexed_after_release(name) as notes:
            ctx.workspace.require_agent(name)  # removed by another worker meanwhile?
            receipt = ctx.writer.memory_write(name, "Retain", AppendNote(item), source_agent)
        return receipt.noted(notes)
