"""The single write path (SPEC C5, C6).

Every change to memory — a remembered fact, a forgotten item, a stored turn, an
imported session — is a :data:`Change` checked by :meth:`MemoryWriter.check` and
applied by :meth:`MemoryWriter.memory_write`, which checks the autonomy level and the
cross-agent grant, applies the change to the Markdown workspace, appends to the audit
trail and tells the indexer which files changed. Nothing else writes to the
workspace. Remembered facts enter through :meth:`MemoryWriter.remember_facts` (one or
many), which decides the change each becomes (add, supersede or refresh:
:mod:`kronika.engine.remember`) for every caller, checks each the same way, and writes
a batch's facts together.

The caller holds the workspace lock (:class:`kronika.stores.lock.WorkspaceLock`), so
times read here, and the facts a change is decided from, are those of the moment the
change is made. A change that touches Brain facts first deletes what a move cut short
by a crash left behind (:mod:`kronika.stores.markdown.facts.moves`). Once a change is
applied it is durable: the audit entry and the index update that follow never turn it
into an error, they report in :attr:`WriteReceipt.notes`.

Who may write (``source_agent``):

* ``"user"`` (the person, through the CLI or the API) and ``"system"`` (maintenance such
  as keeping the Brain under budget) are never held back by autonomy;
* an agent writing to itself follows its autonomy level: 0 read-only (denied),
  1 suggest (the change waits as a proposal for the user's approval, see
  :mod:`kronika.engine.proposals`), 2 auto (applied),
  3 full (also may archive and reorganise);
* an agent writing to *another* agent needs that agent's ``writers`` grant.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path, PurePosixPath

from kronika.core.model import MemoryItem
from kronika.core.redaction import phrase_pattern, redact
from kronika.core.screening import (
    screen_fields,
    screen_item,
    screen_name,
    screen_session,
    screen_text,
    screen_turn,
    screen_words,
)
from kronika.engine import forget_journal
from kronika.engine.changes import (
    AddFact,
    AppendNote,
    AppendTurn,
    ArchiveFacts,
    Change,
    ForgetItems,
    RemoveItem,
    RestoreFile,
    SetActiveContext,
    SupersedeFact,
    TouchFact,
    UpdateNote,
    UpdateSession,
    WriteEntityPage,
    WriteLessons,
    WriteSession,
    WriteSummary,
)
from kronika.engine.policy_gate import Refused, gate_change
from kronika.engine.redacting import ForgetPlan, apply_forget
from kronika.engine.remember import FactPlacer, fact_step, is_fact_change
from kronika.errors import InvalidInput, PermissionDenied
from kronika.ports import AuditEntry, AuditLog, Clock, acting
from kronika.settings import Settings
from kronika.stores.markdown.appending import append_turn_in_place
from kronika.stores.markdown.atomic import atomic_write_text
from kronika.stores.markdown.facts.brain import FACT_FILES
from kronika.stores.markdown.files import write_text
from kronika.stores.markdown.layout import SourceKind, classify
from kronika.stores.markdown.lessons import LESSONS_FILE
from kronika.stores.markdown.sessions import session_filename
from kronika.stores.markdown.workspace import MarkdownWorkspace

USER = "user"
SYSTEM = "system"
FACT_PATHS = frozenset(spec.path for spec in FACT_FILES)


@dataclass(frozen=True, slots=True)
class WriteReceipt:
    """What happened to a change: ``applied``, ``proposed`` (waiting for the user,
    as proposal ``proposal`` when the writer keeps proposals) or ``refused`` by a
    storage policy (``policy`` says why). An applied change is durable once this is
    returned, whatever ``notes`` says."""

    outcome: str
    change: Change
    item: MemoryItem | None
    paths: tuple[str, ...]
    proposal: str | None = None
    notes: tuple[str, ...] = ()
    """Steps after the change was stored that did not finish (the audit entry, the
    index): the change itself is kept; ``kronika index sync`` brings the index up to date."""
    policy: str | None = None
    """What a storage policy did (``docs/policies.md``): why the change was ``refused``
    (then nothing was stored), or why it was kept in a shorter tier than asked."""

    def noted(self, notes: Sequence[str]) -> WriteReceipt:
        """This receipt with ``notes`` added to its own (itself when there are none)."""
        return replace(self, notes=(*self.notes, *notes)) if notes else self


class SavedTurn(str):
    """The id of a turn given to ``save_turn`` (a ``str``, as it always was) and what
    happened to it: ``outcome`` is ``applied`` (the turn is in the session's file),
    ``proposed`` (an agent at autonomy 1 saved it: it waits as proposal ``proposal``,
    and the session holds it once the proposal is approved) or ``refused`` by a storage
    policy (``policy`` says why; nothing was stored). The id is the one the turn has,
    or would have had, in its session."""

    outcome: str
    proposal: str | None
    policy: str | None

    def __new__(
        cls,
        turn_id: str,
        outcome: str = "applied",
        proposal: str | None = None,
        policy: str | None = None,
    ) -> SavedTurn:
        made = super().__new__(cls, turn_id)
        made.outcome, made.proposal, made.policy = outcome, proposal, policy
        return made

    def __getnewargs__(self) -> tuple[str, str, str | None, str | None]:  # type: ignore[override]
        return str(self), self.outcome, self.proposal, self.policy

    @property
    def turn_id(self) -> str:
        return str(self)


@dataclass(frozen=True, slots=True)
class Checked:
    """What :meth:`MemoryWriter.check` decided of a change before anything is written:
    ``outcome`` (``applied``, ``proposed``, ``denied`` or ``refused`` by a storage
    policy), the change as it would be written (screened, perhaps shortened), the
    audit entry it gets, and what a storage policy said (``policy``)."""

    outcome: str
    change: Change
    entry: AuditEntry
    policy: str | None = None

    def receipt(self) -> WriteReceipt:
        """The receipt of a change that was not written (``refused`` or ``proposed``)."""
        return WriteReceipt(self.outcome, self.change, None, (), policy=self.policy)


def describe_change(change: Change) -> tuple[str, str | None, str]:
    """(action, item id, one-line summary) for the audit trail."""
    match change:
        case AddFact(item):
            return "remember", item.id, item.content
        case TouchFact(item):
            return "refresh", item.id, item.content
        case SupersedeFact(old_id, new):
            return "supersede", new.id, f"{new.content} (replaces {old_id})"
        case ArchiveFacts(ids):
            return "archive", None, ", ".join(ids)
        case RemoveItem(item):
            return "forget", item.id, f"{item.type.value} from {item.provenance.path}"
        case ForgetItems(items, _):
            return "forget", items[0].id if len(items) == 1 else None, forget_summary(items, ())
        case AppendNote(item):
            return "note", item.id, item.content
        case AppendTurn(session_id, turn, _, _):
            return "save_turn", None, f"{session_id}/{turn.turn_id} {turn.speaker}"
        case UpdateSession(session_id, fields):
            shown = ", ".join(f"{k}={v}" for k, v in fields if k != "summary")
            return "session", None, f"{session_id}: {shown}"
        case WriteSummary(path, text, _):
            return "summary", None, f"{path} ({len(text)} characters)"
        case WriteSession(session):
            return "import_session", None, f"{session.session_id} ({len(session.turns)} turns)"
        case SetActiveContext(text):
            return "active_context", None, text[:80]
        case RestoreFile(path, text):
            return "restore_file", None, f"{path} ({len(text)} characters)"
        case WriteLessons(lessons, what):
            first = lessons[0].id if len(lessons) == 1 else None
            return "lesson", first, f"{what}: {', '.join(x.id for x in lessons)}"
        case WriteEntityPage(path, text):
            return "entity_page", None, f"{path} ({len(text)} characters)"
        case UpdateNote(item):
            return "update_note", item.id, item.content


def screen_change(change: Change, mode: str) -> Change:
    """``change`` with every text it would write screened for secrets (the ``secrets``
    setting, :mod:`kronika.core.screening`): before the audit, a proposal or a file."""
    match change:
        case AddFact(item):
            return AddFact(screen_item(item, mode))
        case TouchFact(item):
            return TouchFact(screen_item(item, mode))
        case SupersedeFact(old_id, new):
            return SupersedeFact(old_id, screen_item(new, mode))
        case AppendNote(item):
            return AppendNote(screen_item(item, mode))
        case AppendTurn(session_id, turn, _, header):
            screen_name(session_id, mode, "the session id")
            kept = tuple((name, value or "") for name, value in screen_fields(header, mode))
            return replace(change, turn=screen_turn(turn, mode), header=kept)
        case UpdateSession(session_id, fields):
            screen_name(session_id, mode, "the session id")
            return replace(change, fields=screen_fields(fields, mode))
        case WriteSummary(_, text, fields):
            kept = tuple((name, screen_text(value, mode)) for name, value in fields)
            return replace(change, text=screen_text(text, mode), fields=kept)
        case WriteSession(session):
            return WriteSession(screen_session(session, mode))
        case SetActiveContext(text):
            return replace(change, text=screen_text(text, mode))
        case RestoreFile(_, text):
            return replace(change, text=screen_text(text, mode))
        case WriteLessons(lessons, _):
            screened = tuple(
                replace(x, text=screen_text(x.text, mode), tags=screen_words(x.tags, mode))
                for x in lessons
            )
            return replace(change, lessons=screened)
        case WriteEntityPage(_, text):
            return replace(change, text=screen_text(text, mode))
        case UpdateNote(item):
            return UpdateNote(screen_item(item, mode))
        case ArchiveFacts() | RemoveItem() | ForgetItems():
            return change  # nothing new is written (a forget only takes text out)


class MemoryWriter:
    """Applies :data:`Change` values to the workspace; the only code that writes memory.

    Unlike the other engine parts it is given the whole :class:`Settings`: besides two
    settings (``secrets``, ``near_duplicate_similarity``) it enforces the agents' write
    policies and the storage policies, which :class:`Settings` holds beside its groups
    (and :meth:`use_settings` swaps while running)."""

    def __init__(
        self,
        *,
        workspace: MarkdownWorkspace,
        audit: AuditLog,
        settings: Settings,
        clock: Clock,
        on_written: Callable[[str, Sequence[str]], None],
        on_proposed: Callable[[AuditEntry, Change], str] | None = None,
        on_facts: Callable[[str], object] | None = None,
    ) -> None:
        """``on_proposed`` keeps a proposed change (its audit entry and the change) and
        returns the proposal's id; without it a proposed change is only audited.
        ``on_facts(agent)`` runs before a change rewrites the agent's fact files (the
        index reads a fact file changed outside kronika first, so damage to it is
        found and its facts kept before the write makes the loss look intended)."""
        self._workspace = workspace
        self._audit = audit
        self._settings = settings
        self._clock = clock
        self._on_written = on_written
        self._on_proposed = on_proposed
        self._on_facts = on_facts

    def use_settings(self, settings: Settings) -> None:
        """Write under ``settings`` from now on (storage policies edited while running)."""
        self._settings = settings

    def remember_fact(
        self,
        target_agent: str,
        section: str,
        item: MemoryItem,
        now: datetime,
        source_agent: str = USER,
    ) -> WriteReceipt:
        """Remember ``item`` in ``target_agent``'s memory: :meth:`remember_facts` of one."""
        return self.remember_facts(target_agent, [(section, item, now)], source_agent)[0]

    def remember_facts(
        self,
        target_agent: str,
        facts: Sequence[tuple[str, MemoryItem, datetime]],
        source_agent: str = USER,
    ) -> list[WriteReceipt]:
        """Remember each ``(section, item, now)`` in ``target_agent``'s memory, in order:
        screened for secrets, placed against the stored facts of its audience and the
        earlier ones (add, supersede or refresh, :class:`~kronika.engine.remember.FactPlacer`),
        checked as :meth:`check` checks a change, then written together (one rewrite
        of the Brain, :meth:`~kronika.stores.markdown.facts.files.FactFiles.write_facts`),
        audited and indexed as :meth:`memory_write` does each change. The one way a
        remembered fact is stored; the caller has read the fact files moments ago (hand
        edits are picked up before the facts are compared). A denied write raises
        before anything is written."""
        settings = self._settings
        placer = FactPlacer(
            self._workspace,
            target_agent,
            secrets=settings.workspace.secrets,
            near=settings.sessions.near_duplicate_similarity,
        )
        receipts: list[WriteReceipt | None] = []
        entries: list[AuditEntry] = []  # in the facts' order, appended once they are written
        applied: list[tuple[int, Checked]] = []
        for section, item, now in facts:
            checked = self.check(target_agent, section, placer.place(item, now), source_agent)
            if checked.outcome != "applied":
                receipt, entry = self._not_applied(target_agent, checked, source_agent)
                receipts.append(receipt)
                entries.append(entry)
                continue
            if is_fact_change(checked.change):
                placer.take(checked.change)
            applied.append((len(receipts), checked))
            receipts.append(None)
            entries.append(checked.entry)
        if not applied:
            for entry in entries:
                self._audit.append(entry)
            return [receipt for receipt in receipts if receipt is not None]
        written, settled = self._write_facts(target_agent, [c for _, c in applied])
        notes, _ = self._after_write(
            target_agent, entries, [*settled, *(path for _, paths in written for path in paths)]
        )
        for (at, checked), (stored, paths) in zip(applied, written, strict=True):
            receipts[at] = WriteReceipt(
                "applied", checked.change, stored, paths, notes=notes, policy=checked.policy
            )
        return [receipt for receipt in receipts if receipt is not None]

    def _write_facts(
        self, target_agent: str, checked: Sequence[Checked]
    ) -> tuple[list[tuple[MemoryItem | None, tuple[str, ...]]], tuple[str, ...]]:
        """Apply the changes :meth:`remember_facts` let through: the facts' together
        (:meth:`~kronika.stores.markdown.facts.files.FactFiles.write_facts`), then any a
        storage policy made something else (a note), each as :meth:`memory_write` would.
        Returns each change's stored item and files, and the files the leftovers of an
        interrupted move were deleted from."""
        steps = [fact_step(c.change) for c in checked if is_fact_change(c.change)]
        settled: tuple[str, ...] = ()
        stored: list[tuple[MemoryItem, tuple[str, ...]]] = []
        if steps:
            if self._on_facts is not None:
                self._on_facts(target_agent)
            settled = self._workspace.settle_moves(target_agent)
            stored = self._workspace.write_facts(target_agent, steps)
        facts = iter(stored)
        written: list[tuple[MemoryItem | None, tuple[str, ...]]] = []
        for change in (c.change for c in checked):
            written.append(
                next(facts) if is_fact_change(change) else self._apply(target_agent, change)
            )
        return written, settled

    def memory_write(
        self,
        target_agent: str,
        section: str,
        content: Change,
        source_agent: str = USER,
        *,
        planned: ForgetPlan | None = None,
    ) -> WriteReceipt:
        """Screen ``content`` for secrets, check permissions, apply it to
        ``target_agent``'s memory, audit it. ``planned``: for a forget, the plan its
        caller made of it under the same lock (:func:`~kronika.engine.redacting.
        plan_forget`'s ``reuse``: the files unchanged since are not looked through
        again)."""
        checked = self.check(target_agent, section, content, source_agent)
        if checked.outcome != "applied":
            receipt, entry = self._not_applied(target_agent, checked, source_agent)
            self._audit.append(entry)
            return receipt
        content, entry = checked.change, checked.entry
        moves = _moves_facts(content)
        if moves and self._on_facts is not None:
            self._on_facts(target_agent)
        settled = self._workspace.settle_moves(target_agent) if moves else ()
        item, paths = self._apply(target_agent, content, planned)
        if isinstance(content, ForgetItems):
            said = forget_summary(content.items, paths)
            pattern = phrase_pattern(content.phrases)  # a key or a file named after it
            said = said if pattern is None else redact(said, pattern)[0]
            entry = replace(entry, summary=said[:200])
        notes, indexed = self._after_write(target_agent, [entry], (*settled, *paths))
        if indexed and isinstance(content, ForgetItems):  # done, and the index knows it
            forget_journal.finish(self._workspace.agent_dir(target_agent))
        return WriteReceipt("applied", content, item, paths, notes=notes, policy=checked.policy)

    def _not_applied(
        self, target_agent: str, checked: Checked, source_agent: str
    ) -> tuple[WriteReceipt, AuditEntry]:
        """The receipt and audit entry of a change ``check`` did not let through: refused
        by a storage policy (nothing is stored, the audit trail says why) or proposed
        (kept as a proposal first, when the writer keeps them: the audit trail never
        names a lost one). A denied one is audited and raises :class:`PermissionDenied`."""
        if checked.outcome == "denied":
            self._audit.append(checked.entry)
            raise PermissionDenied(self.denial_reason(target_agent, source_agent))
        if checked.outcome == "refused":
            return checked.receipt(), checked.entry
        entry, proposal = checked.entry, None
        if self._on_proposed is not None:
            proposal = self._on_proposed(entry, checked.change)
            entry = replace(entry, summary=f"[{proposal}] {entry.summary}"[:200])
        return WriteReceipt("proposed", checked.change, None, (), proposal), entry

    def _after_write(
        self, target_agent: str, entries: Sequence[AuditEntry], paths: Sequence[str]
    ) -> tuple[tuple[str, ...], bool]:
        """Audit ``entries`` and tell the index ``paths`` changed; returns the notes of
        what failed and whether the index was told. The change is on disk: what fails
        here must not make it look failed (the caller would retry it, or report a loss
        that is none), so failures come back as notes."""
        notes: list[str] = []
        try:
            for entry in entries:
                self._audit.append(entry)
        except Exception as exc:
            notes.append(f"the change was stored but not added to the audit trail: {exc}")
        try:
            self._on_written(target_agent, tuple(dict.fromkeys(paths)))
        except Exception as exc:
            notes.append(
                f"the change was stored but the index was not updated ({exc}); "
                "`kronika index sync` or `kronika index rebuild` catches up"
            )
            return tuple(notes), False
        return tuple(notes), True

    def check(
        self, target_agent: str, section: str, content: Change, source_agent: str = USER
    ) -> Checked:
        """What :meth:`memory_write` decides of ``content`` before it writes anything:
        screened for secrets (:class:`InvalidInput` for one ``secrets = "refuse"``
        keeps out), let through or refused by the storage policies, then ``applied``,
        ``proposed`` or ``denied`` by the writer's autonomy; with the audit entry it
        gets. Nothing is written (a batch checks every change before it writes one)."""
        content = screen_change(content, self._settings.workspace.secrets)
        self._workspace.require_agent(target_agent)
        gated = self._storage_policies(target_agent, section, content, source_agent)
        if isinstance(gated, Checked):
            return gated
        content, policy = gated
        action, item_id, summary = describe_change(content)
        outcome = self._decide(target_agent, content, source_agent)
        entry = AuditEntry(
            at=self._clock.now(),
            action=action,
            target_agent=target_agent,
            source_agent=source_agent,
            section=section,
            item_id=item_id,
            summary=summary[:200],
            outcome=outcome,
            **acting(),
        )
        return Checked(outcome, content, entry, policy)

    def _storage_policies(
        self, target: str, section: str, change: Change, source: str
    ) -> tuple[Change, str | None] | Checked:
        """``change`` as the storage policies let it be stored (and why it was shortened),
        or its refusal, with the audit entry that says so without the refused text."""
        if self._settings.storage.empty:  # the common case costs one attribute read
            return change, None
        policies = self._settings.storage_policies

        now = self._clock.now()
        gated = gate_change(change, target, self._workspace.tenant_of(target), policies, now)
        if not isinstance(gated, Refused):
            return gated.change, gated.reason
        action, item_id, _ = describe_change(change)
        entry = AuditEntry(
            now, action, target, source, section, item_id, gated.reason[:200], "refused",
            **acting(),
        )  # fmt: skip
        return Checked("refused", change, entry, gated.reason)

    def _decide(self, target: str, change: Change, source: str) -> str:
        if source in (USER, SYSTEM):
            return "applied"
        policy = self._settings.policy(target)
        if source != target and source not in policy.writers:
            return "denied"
        if policy.autonomy == 0:
            return "denied"
        if isinstance(change, ArchiveFacts) and policy.autonomy < 3:
            return "denied"
        if policy.autonomy == 1:
            return "proposed"
        return "applied"

    def denial_reason(self, target: str, source: str) -> str:
        """Why ``source`` may not write into ``target``'s memory (a ``denied`` check)."""
        policy = self._settings.policy(target)
        if source != target and source not in policy.writers:
            return (
                f"agent {source!r} may read {target!r}'s memory but not write to it; "
                f"grant it with writers = [{source!r}] under [agents.{target}] in kronika.toml"
            )
        if policy.autonomy == 0:
            return f"agent {target!r} has autonomy 0 (read-only): its memory cannot be changed"
        return f"agent {target!r} needs autonomy 3 (full) to reorganise or archive its memory"

    def _apply(
        self, agent: str, change: Change, planned: ForgetPlan | None = None
    ) -> tuple[MemoryItem | None, tuple[str, ...]]:
        ws = self._workspace
        match change:
            case AddFact() | TouchFact() | SupersedeFact():
                ((stored, files),) = ws.write_facts(agent, [fact_step(change)])
                return stored, files
            case ArchiveFacts(ids):
                ws.move_to_archive(agent, ids)
                return None, ("brain.md", "brain_archive.md")
            case RemoveItem(item):
                ws.remove_item(agent, item)
                return None, (item.provenance.path,)
            case ForgetItems(items, phrases, keep):
                return None, apply_forget(
                    ws, self._audit, agent, items, phrases, write_text, frozenset(keep), planned
                )
            case AppendNote(item):
                stored = ws.append_note(agent, item)
                return stored, (stored.provenance.path,)
            case AppendTurn(session_id, turn, started_at, header):
                # in place when the file is there and sound: cost independent of its length
                path = session_filename(session_id)
                repaired = append_turn_in_place(ws.require_agent(agent), path, turn)
                if repaired is None:
                    path = ws.append_turn(
                        agent, session_id, turn, started_at=started_at, header_fields=dict(header)
                    )
                else:
                    ws.notes.extend(repaired)
                return None, (path,)
            case UpdateSession(session_id, fields):
                return None, (ws.set_session_fields(agent, session_id, dict(fields)),)
            case WriteSummary(path, text, fields):
                return None, (ws.write_summary(agent, path, text, dict(fields)),)
            case WriteSession(session):
                path = ws.write_session(agent, session)
                return None, (path,)
            case SetActiveContext(text, owners):
                ws.write_active_context(agent, text, owners)
                return None, ("active_context.md",)
            case RestoreFile(path, text):
                atomic_write_text(safe_agent_path(ws.agent_dir(agent), path), text)
                return None, (path,)
            case WriteLessons(lessons, _):
                ws.write_lessons(agent, lessons)
                return None, (LESSONS_FILE,)
            case UpdateNote(item):
                stored = ws.update_note(agent, item)
                return stored, (stored.provenance.path,)
            case WriteEntityPage(path, text):
                if classify(path) not in (SourceKind.ENTITY, SourceKind.BANK):
                    raise InvalidInput(f"{path} is not a bank page (bank/…/<Name>.md)")
                atomic_write_text(safe_agent_path(ws.agent_dir(agent), path), text)
                return None, (path,)


def forget_summary(items: Sequence[MemoryItem], paths: Sequence[str]) -> str:
    """What the audit trail says of a forget: how many items, their ids and keys, the
    files touched — never the forgotten text."""
    keys = sorted({it.key for it in items if it.key})
    said = f"{len(items)} item(s) {', '.join(it.id for it in items)}"
    if keys:
        said += f"; key(s) {', '.join(keys)}"
    if paths:
        said += f"; {len(paths)} file(s) {', '.join(paths)}"
    return said


def _moves_facts(change: Change) -> bool:
    """True for the changes that read or move Brain facts: they first settle what an
    interrupted move left behind (see :mod:`kronika.stores.markdown.facts.moves`)."""
    match change:
        case AddFact() | TouchFact() | SupersedeFact() | ArchiveFacts():
            return True
        case RemoveItem(item):
            return item.provenance.path in FACT_PATHS
        case ForgetItems(items):
            return any(it.provenance.path in FACT_PATHS for it in items)
        case _:
            return False


def safe_agent_path(agent_dir: Path, relpath: str) -> Path:
    """``agent_dir / relpath`` for a Markdown file that stays inside the agent's folder."""
    rel = PurePosixPath(relpath)
    if (
        rel.is_absolute()
        or not rel.parts
        or any(part in ("", ".", "..") or part.startswith(".") for part in rel.parts)
        or rel.suffix != ".md"
    ):
        raise InvalidInput(f"refusing to write {relpath!r}: not a Markdown file inside the agent")
    return agent_dir.joinpath(*rel.parts)
