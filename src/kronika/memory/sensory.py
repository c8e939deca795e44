"""Sensory memory (SPEC M4, layer 1): raw events kept for a short while.

``memory.observe("the build log says: 3 warnings", ttl_seconds=3600)`` keeps a raw
event — a tool's output, a sensor reading, a page the agent saw — in
``sensory/YYYY-MM-DD.md`` as a layer-1 ``sensory`` item of the short tier, with the
moment it expires (``to=`` in its metadata). Until then it is recalled like any item;
the decay job (``kronika jobs run decay``) forgets it once expired, through the one
forget path, so it is gone everywhere.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from kronika.core import checks
from kronika.core.entities import extract_entities
from kronika.core.model import ItemType, Layer, MemoryItem, Provenance, Reader, Scope, Tier
from kronika.engine.changes import AppendNote
from kronika.engine.write import USER, WriteReceipt
from kronika.errors import InvalidInput
from kronika.memory.base import MemoryContext, _new_id

MAX_OBSERVATION = 20_000
MAX_TTL = 366 * 86400


class Sensory:
    """Keep raw events for a short while."""

    def __init__(self, ctx: MemoryContext) -> None:
        self._ctx = ctx

    def observe(
        self,
        text: str,
        *,
        ttl_seconds: float = 3600,
        agent: str | None = None,
        at: datetime | None = None,
        source_agent: str = USER,
        scope: Scope | str | None = None,
        user: str | None = None,
        channel: str | None = None,
        team: str | None = None,
        reader: Reader | None = None,
    ) -> WriteReceipt:
        """Keep a raw event for ``ttl_seconds`` (1 s to a year); see the module docstring."""
        ctx = self._ctx
        if not isinstance(text, str) or not text.strip():
            raise InvalidInput("the observation must be non-empty text")
        if len(text) > MAX_OBSERVATION:
            raise InvalidInput(f"the observation is over {MAX_OBSERVATION} characters")
        if isinstance(ttl_seconds, bool) or not isinstance(ttl_seconds, int | float):
            raise InvalidInput("ttl_seconds must be a number")
        if not 1 <= ttl_seconds <= MAX_TTL:
            raise InvalidInput(f"ttl_seconds must be from 1 to {MAX_TTL}")
        at = checks.moment(at, what="at")
        name = ctx.agent(agent)
        owners = ctx.audience(name, scope, user, channel, team, reader)
        now = at or ctx.clock.now()
        clean = text.strip()
        item = MemoryItem(
            id=_new_id("o"),
            agent=name,
            content=clean,
            type=ItemType.SENSORY,
            layer=Layer.SENSORY,
            tier=Tier.SHORT,
            created_at=now,
            updated_at=now,
            valid_to=now + timedelta(seconds=ttl_seconds),
            provenance=Provenance(path=f"sensory/{now.date().isoformat()}.md"),
            tenant=ctx.workspace.tenant_of(name),
            **owners.fields(),
            section="Retain",
            importance=0.2,
            entities=extract_entities(clean),
        )
        with ctx.lock:
            return ctx.writer.memory_write(name, "sensory", AppendNote(item), source_agent)
