"""A batch of writes put back whole, said in the audit trail.

The audit trail is a log of what was asked: a batch's writes are entered as they are
made, and a batch a kill cut short (or one that raised) is put back whole afterwards
(:mod:`kronika.stores.batch`). So that the trail does not leave those entries as if
they had happened, the batch's putting back is entered too: one ``batch undone``
entry (outcome ``undone``) for each agent whose files it had changed, saying when it
began.
"""

from __future__ import annotations

from collections.abc import Callable

from kronika.ports import AuditEntry, AuditLog, Clock, UndoneBatch, acting

ACTION = "batch undone"
OUTCOME = "undone"


def undone_entries(undone: UndoneBatch, clock: Clock) -> list[AuditEntry]:
    """The audit entries saying that ``undone`` was put back, one per agent."""
    began = "" if undone.began is None else f" begun {undone.began:%Y-%m-%d %H:%M:%S} UTC"
    summary = (
        f"a batch of writes{began} was put back whole ({undone.files} files): "
        "the entries of its writes did not happen"
    )
    now = clock.now()
    return [
        AuditEntry(
            at=now,
            action=ACTION,
            target_agent=agent,
            source_agent="system",
            section="",
            item_id=None,
            summary=summary,
            outcome=OUTCOME,
            **acting(),
        )
        for agent in undone.agents
    ]


def auditing_undone(audit: AuditLog, clock: Clock) -> Callable[[UndoneBatch], None]:
    """What a write lock calls for each batch it puts back
    (:meth:`~kronika.ports.WriteLock.on_undone`): enter it in ``audit``."""

    def report(undone: UndoneBatch) -> None:
        for entry in undone_entries(undone, clock):
            audit.append(entry)

    return report
