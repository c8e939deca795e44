"""Many turns of one session written at once (``Memory.save_turns``).

Each turn is an :class:`~kronika.engine.changes.AppendTurn` that the caller has had
checked by the write path (:meth:`MemoryWriter.check
<kronika.engine.write.MemoryWriter.check>`: screened, let through or refused by the
storage policies, applied, proposed or denied by the writer's autonomy) before any is
written. :meth:`TurnBatchWriter.write` then stores what the checks decided, the way as
many calls of :meth:`~kronika.engine.write.MemoryWriter.memory_write` would, but with
one write of each file:

* a ``denied`` check: nothing is written; the audit trail gets the entries the calls
  would have made up to that one (refusals, then the denial) and
  :class:`~kronika.errors.PermissionDenied` is raised;
* the ``applied`` turns are appended to the session file in one write (created with
  the first one's header when missing), the ``proposed`` ones kept in one write of
  ``proposals.md`` (autonomy decides alike for every turn of a batch: never both);
* only then the audit trail gets every turn's entry, in order, in one write, and the
  index is told once which file changed. Once the file is written the turns are
  stored: a failure of the audit or of the index is said in each stored turn's
  receipt ``notes``.

So a failure before the one write of the file leaves nothing of the batch stored.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from kronika.engine.changes import AppendTurn
from kronika.engine.held_audit import append_all
from kronika.engine.proposals import ProposalBook
from kronika.engine.write import Checked, WriteReceipt, describe_change
from kronika.errors import PermissionDenied
from kronika.ports import AuditEntry, AuditLog
from kronika.stores.markdown.appending import append_turns_in_place
from kronika.stores.markdown.sessions import session_filename
from kronika.stores.markdown.workspace import MarkdownWorkspace


class TurnBatchWriter:
    """Stores the checked turns of one session with one write (module docstring)."""

    def __init__(
        self,
        *,
        workspace: MarkdownWorkspace,
        audit: AuditLog,
        proposals: ProposalBook,
        on_written: Callable[[str, Sequence[str]], None],
        denial_reason: Callable[[str, str], str],
    ) -> None:
        self._workspace = workspace
        self._audit = audit
        self._proposals = proposals
        self._on_written = on_written
        self._denial_reason = denial_reason

    def write(self, agent: str, checked: Sequence[Checked]) -> list[WriteReceipt]:
        """Store ``checked`` (each an ``AppendTurn`` of one session, in order, checked
        for ``agent``); a receipt per turn, in order. Called holding the write lock."""
        denied = next((n for n, c in enumerate(checked) if c.outcome == "denied"), None)
        if denied is not None:
            append_all(self._audit, [done.entry for done in checked[: denied + 1]])
            denial = checked[denied].entry
            raise PermissionDenied(self._denial_reason(agent, denial.source_agent))
        entries = [c.entry for c in checked]
        receipts = [c.receipt() for c in checked]
        proposed = [n for n, c in enumerate(checked) if c.outcome == "proposed"]
        applied = [n for n, c in enumerate(checked) if c.outcome == "applied"]
        paths: tuple[str, ...] = ()
        if proposed:  # kept first: the audit never names a lost one
            pairs = [(entries[n], checked[n].change) for n in proposed]
            for n, pid in zip(proposed, self._proposals.record_all(agent, pairs), strict=True):
                said = describe_change(checked[n].change)[2]
                entries[n] = replace(entries[n], summary=f"[{pid}] {said}"[:200])
                receipts[n] = replace(receipts[n], proposal=pid)
        if applied:
            paths = (self._append(agent, [_turn_change(checked[n]) for n in applied]),)
            for n in applied:
                receipts[n] = replace(receipts[n], paths=paths)
        # The turns are stored: what follows may fail, but must not make them look lost.
        stored = [*proposed, *applied]
        notes = self._audited(entries)
        if paths:
            try:
                self._on_written(agent, paths)
            except Exception as exc:
                notes.append(
                    f"the turns were stored but the index was not updated ({exc}); "
                    "`kronika index sync` or `kronika index rebuild` catches up"
                )
        for n in stored:
            receipts[n] = replace(receipts[n], notes=tuple(notes))
        return receipts

    def _append(self, agent: str, changes: Sequence[AppendTurn]) -> str:
        """Append the turns of ``changes`` to their session file in one write; its path.
        In place when the file is there and sound, else the file is written whole (made
        with the first turn's header)."""
        ws = self._workspace
        first = changes[0]
        path = session_filename(first.session_id)
        turns = [c.turn for c in changes]
        repaired = append_turns_in_place(ws.require_agent(agent), path, turns)
        if repaired is None:
            return ws.session_files.append_turns(
                agent,
                first.session_id,
                turns,
                started_at=first.started_at,
                header_fields=dict(first.header),
            )
        ws.notes.extend(repaired)
        return path

    def _audited(self, entries: Sequence[AuditEntry]) -> list[str]:
        """Append ``entries`` to the audit trail in one write; what did not go in, as
        notes."""
        try:
            append_all(self._audit, entries)
        except Exception as exc:
            return [f"the turns were stored but not added to the audit trail: {exc}"]
        return []


def _turn_change(checked: Checked) -> AppendTurn:
    change = checked.change
    if not isinstance(change, AppendTurn):
        raise TypeError(f"a turn batch holds turns, not a {type(change).__name__}")
    return change
