"""``memory.links``: links between items (SPEC S3, F2): an event and the reflection
drawn from it, an error or a reflection and the strategy that answers it, two related
items.

Links live in the store of record beside the items (``links.md`` of each agent in the
Markdown workspace, :mod:`kronika.stores.markdown.links`); forgetting an item removes
its links, and an export carries them with the rest of the agent's files.
"""

from __future__ import annotations

from kronika.core import checks
from kronika.core.model import ItemLink, LinkKind, Reader
from kronika.core.visibility import only_visible
from kronika.engine.turn_ids import turn_named
from kronika.engine.write import USER
from kronika.errors import InvalidInput, NotFound
from kronika.memory.base import MemoryContext
from kronika.ports import AuditEntry, acting
from kronika.stores.markdown.links import format_link


class Links:
    """Link two items, list the links; calling the part lists them (what
    ``memory.links(item_id)`` did before the part was there)."""

    def __init__(self, ctx: MemoryContext) -> None:
        self._ctx = ctx

    def __call__(
        self, item_id: str | None = None, *, agent: str | None = None, reader: Reader | None = None
    ) -> list[ItemLink]:
        """:meth:`list`."""
        return self.list(item_id, agent=agent, reader=reader)

    def add(
        self,
        from_id: str,
        to_id: str,
        kind: LinkKind | str = LinkKind.RELATED,
        *,
        agent: str | None = None,
        source_agent: str = USER,
    ) -> ItemLink:
        """Link two items of one agent (``from_id -> to_id``; ``related`` both ways).

        Both must be in memory; linking them again changes nothing. Audited as ``link``
        (``memory.link``).
        """
        ctx = self._ctx
        try:
            chosen = LinkKind(kind)
        except ValueError as exc:
            kinds = ", ".join(k.value for k in LinkKind)
            raise InvalidInput(f"no link kind {kind!r}; the kinds are {kinds}") from exc
        from_id, to_id = (checks.text(i, what="the item id") for i in (from_id, to_id))
        if from_id == to_id:
            raise InvalidInput("an item cannot be linked to itself")
        name = ctx.agent(agent)
        with ctx.lock:
            ctx.indexer.sync_agent(name)
            found = {it.id for it in ctx.index.get_items([from_id, to_id]) if it.agent == name}
            ends = [
                given if given in found else self._turn_item(name, given)
                for given in (from_id, to_id)
            ]
            for given, end in zip((from_id, to_id), ends, strict=True):
                if end is None:
                    raise NotFound(f"no item {given!r} in the memory of agent {name!r}")
            from_id, to_id = (end or "" for end in ends)
            if from_id == to_id:
                raise InvalidInput("an item cannot be linked to itself")
            made = ItemLink(from_id, to_id, chosen, ctx.clock.now()).normalised()
            for link in ctx.link_store.links(name, from_id):
                if link.identity == made.identity:
                    return link
            if ctx.link_store.add_links(name, [made]):
                ctx.audit_log.append(
                    AuditEntry(
                        at=made.created_at or ctx.clock.now(),
                        action="link",
                        target_agent=name,
                        source_agent=source_agent,
                        section="links",
                        item_id=made.from_id,
                        summary=format_link(ItemLink(made.from_id, made.to_id, made.kind))[2:],
                        outcome="applied",
                        **acting(),
                    )
                )
                return made
        return made

    def _turn_item(self, agent: str, turn_id: str) -> str | None:
        """The item id of the turn whose turn id (what ``save_turn`` returned) is
        ``turn_id``; None when no session holds one."""
        ctx = self._ctx
        found = turn_named(ctx.workspace, ctx.index, agent, turn_id, lambda item: True)
        return found[0].id if found else None

    # named `list`, this method comes last: an annotation below it would read `list` as it
    def list(
        self, item_id: str | None = None, *, agent: str | None = None, reader: Reader | None = None
    ) -> list[ItemLink]:
        """The agent's links in the order they were made (only those touching
        ``item_id``, at either end, when it is given); a reader's, only those between
        items they may see."""
        ctx = self._ctx
        item_id = checks.optional_text(item_id, what="the item id")
        name = ctx.agent(agent)
        if item_id is not None and not ctx.index.get_items([item_id]):
            item_id = self._turn_item(name, item_id) or item_id  # a turn by its turn id
        found = ctx.link_store.links(name, item_id)
        who = ctx.reading(reader)
        if who is None or not found:
            return found
        ctx.fresh(name)
        ids = {end for link in found for end in (link.from_id, link.to_id)}
        seen = {item.id for item in only_visible(ctx.index.get_items(sorted(ids)), who)}
        return [link for link in found if link.from_id in seen and link.to_id in seen]
