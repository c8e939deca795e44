"""The Markdown workspace: the canonical, hand-editable store of every agent's memory.

``<home>/agents/<agent>/`` holds the files described in
:mod:`kronika.stores.markdown.layout`. This object is the only code that touches them:
it lists and parses the indexed files for the derived index, and applies every
change as a minimal line edit followed by an atomic write, so a hand-edited file
keeps everything the person wrote and a crash never leaves half a file.

Damaged files (invalid UTF-8, NUL bytes, a broken frontmatter header) never stop an
agent: the original bytes are copied to ``<agent>/.corrupt/<path>.<UTC time>``, the
problem is reported in the warnings, and the readable rest is used (bad bytes become
U+FFFD). The next write to such a file stores the repaired text.

The workspace is a small object holding named parts over one shared
:class:`~.state.WorkspaceState`, one module each, none inheriting from another:

- ``workspace.agent_files`` (:mod:`.agentfiles`): the agents' folders, listing, parsing
  by kind, line edits;
- ``workspace.fact_reads`` (:mod:`.facts.reads`): the fact files' kept parses, the
  facts of each, the parse of any indexed file;
- ``workspace.fact_writer`` (:mod:`.facts.write`): every write of a fact file, the
  Brain held through a batch;
- ``workspace.fact_files`` (:mod:`.facts.files`): facts added, changed, superseded,
  archived, and an item removed;
- ``workspace.note_files`` (:mod:`.notefiles`), ``workspace.session_files``
  (:mod:`.sessionfiles`), ``workspace.document_files`` (:mod:`.documentfiles`): notes,
  sessions, and identity, active context, summaries, lessons and proposals.

Every verb of a part also has its flat name on the workspace (``workspace.add_fact`` is
``workspace.fact_files.add_fact``): the table at the end of the class, one
:class:`~kronika.core.alias.Alias` a line.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from kronika.core.alias import Alias
from kronika.stores.markdown.agentfiles import (
    IDENTITY_TEMPLATE,
    AgentFiles,
    ParsedSource,
    SourceFile,
)
from kronika.stores.markdown.documentfiles import DocumentFiles
from kronika.stores.markdown.facts.files import FactFiles
from kronika.stores.markdown.facts.reads import FactReads
from kronika.stores.markdown.facts.write import FactWriter
from kronika.stores.markdown.notefiles import NoteFiles
from kronika.stores.markdown.sessionfiles import SessionFiles
from kronika.stores.markdown.state import WorkspaceState

__all__ = ["IDENTITY_TEMPLATE", "MarkdownWorkspace", "ParsedSource", "SourceFile"]


class MarkdownWorkspace:
    """Every agent's Markdown files under ``home/agents``; an agent's items carry its
    tenant: ``tenants[agent]``, else ``tenant`` (several tenants share one workspace,
    each agent belonging to one). Its parts: see the module docstring."""

    state: WorkspaceState
    """The options and what the parts share: damage notes, kept parses, held Brains."""
    agent_files: AgentFiles
    """The agents' folders, listing and parsing by kind, line edits."""
    fact_reads: FactReads
    """The fact files' kept parses and their facts; the parse of any indexed file."""
    fact_writer: FactWriter
    """Every write of a fact file; the Brain held in memory through a batch."""
    fact_files: FactFiles
    """Facts added, changed, superseded, archived and put back; items removed."""
    note_files: NoteFiles
    """Notes appended to a day's log and rewritten in place."""
    session_files: SessionFiles
    """Sessions written, turns appended, live sessions' headers."""
    document_files: DocumentFiles
    """Identity, active context, summaries, lessons and proposals."""

    def __init__(
        self,
        home: Path,
        *,
        tenant: str = "default",
        message_importance: float = 0.3,
        tenants: Mapping[str, str] | None = None,
    ) -> None:
        self.state = WorkspaceState(
            home, tenant=tenant, message_importance=message_importance, tenants=tenants
        )
        self.agent_files = AgentFiles(self.state)
        self.fact_reads = FactReads(self.state, self.agent_files)
        self.fact_writer = FactWriter(self.state, self.agent_files, self.fact_reads)
        self.fact_files = FactFiles(self.state, self.agent_files, self.fact_reads, self.fact_writer)
        self.note_files = NoteFiles(self.agent_files, self.fact_reads)
        self.session_files = SessionFiles(self.agent_files)
        self.document_files = DocumentFiles(self.state, self.agent_files)

    @property
    def home(self) -> Path:
        return self.state.home

    @property
    def tenant(self) -> str:
        return self.state.tenant

    @property
    def tenants(self) -> dict[str, str]:
        return self.state.tenants

    @property
    def message_importance(self) -> float:
        return self.state.message_importance

    @property
    def notes(self) -> list[str]:
        """Damage met while reading (see the module docstring)."""
        return self.state.notes

    @property
    def damaged(self) -> set[tuple[str, str]]:
        """Files found to have lost items at once (:mod:`kronika.engine.lost`): a working
        copy does not push them to its store of record (:mod:`kronika.stores.working_copy`)."""
        return self.state.damaged

    @property
    def removed(self) -> set[tuple[str, str]]:
        """Files a forget removed or rewrote (read by a working copy, as :attr:`damaged`)."""
        return self.state.removed

    @property
    def watched(self) -> bool:
        """Whether :meth:`changed_sources` can say what changed (a folder watch is set)."""
        return self.agent_files.watched

    # ------------------------------------------------ flat names of the parts' verbs
    tenant_of = Alias("state", WorkspaceState.tenant_of)
    exists = Alias("agent_files", AgentFiles.exists)
    initialize = Alias("agent_files", AgentFiles.initialize)
    agents = Alias("agent_files", AgentFiles.agents)
    agent_dir = Alias("agent_files", AgentFiles.agent_dir)
    has_agent = Alias("agent_files", AgentFiles.has_agent)
    require_agent = Alias("agent_files", AgentFiles.require_agent)
    create_agent = Alias("agent_files", AgentFiles.create_agent)
    list_sources = Alias("agent_files", AgentFiles.list_sources)
    changed_sources = Alias("agent_files", AgentFiles.changed_sources)
    sources_listed = Alias("agent_files", AgentFiles.sources_listed)
    forget_changes = Alias("agent_files", AgentFiles.forget_changes)
    close = Alias("agent_files", AgentFiles.close)
    source_file = Alias("agent_files", AgentFiles.source_file)
    cleanup_temp = Alias("agent_files", AgentFiles.cleanup_temp)
    parse_source = Alias("fact_reads", FactReads.parse_source)
    appended_facts = Alias("fact_reads", FactReads.appended_facts)
    rewritten_facts = Alias("fact_reads", FactReads.rewritten_facts)
    fact_ids = Alias("fact_reads", FactReads.ids)
    held_facts = Alias("fact_reads", FactReads.held)
    fact_file_hash = Alias("fact_reads", FactReads.fact_file_hash)
    spliced_facts = Alias("fact_reads", FactReads.spliced_facts)
    brain_facts = Alias("fact_reads", FactReads.brain_facts)
    archived_facts = Alias("fact_reads", FactReads.archived_facts)
    archived_facts_like = Alias("fact_reads", FactReads.archived_facts_like)
    fact_history = Alias("fact_reads", FactReads.fact_history)
    steady_facts = Alias("fact_writer", FactWriter.steady_facts)
    holding_brain = Alias("fact_writer", FactWriter.holding_brain)
    stamp_hand_facts = Alias("fact_writer", FactWriter.stamp_hand_facts)
    cut_torn_tail = Alias("fact_writer", FactWriter.cut_torn_tail)
    rewrite_facts = Alias("fact_writer", FactWriter.write)
    add_fact = Alias("fact_files", FactFiles.add_fact)
    update_fact = Alias("fact_files", FactFiles.update_fact)
    write_facts = Alias("fact_files", FactFiles.write_facts)
    supersede_fact = Alias("fact_files", FactFiles.supersede_fact)
    move_to_archive = Alias("fact_files", FactFiles.move_to_archive)
    keep_lost_facts = Alias("fact_files", FactFiles.keep_lost_facts)
    put_back_facts = Alias("fact_files", FactFiles.put_back_facts)
    settle_moves = Alias("fact_files", FactFiles.settle_moves)
    remove_item = Alias("fact_files", FactFiles.remove_item)
    append_note = Alias("note_files", NoteFiles.append_note)
    update_note = Alias("note_files", NoteFiles.update_note)
    write_session = Alias("session_files", SessionFiles.write_session)
    append_turn = Alias("session_files", SessionFiles.append_turn)
    session_headers = Alias("session_files", SessionFiles.session_headers)
    turn_item_ids = Alias("session_files", SessionFiles.turn_item_ids)
    set_session_fields = Alias("session_files", SessionFiles.set_session_fields)
    summary_headers = Alias("document_files", DocumentFiles.summary_headers)
    write_summary = Alias("document_files", DocumentFiles.write_summary)
    read_identity = Alias("document_files", DocumentFiles.read_identity)
    read_active_context = Alias("document_files", DocumentFiles.read_active_context)
    active_context_item = Alias("document_files", DocumentFiles.active_context_item)
    write_active_context = Alias("document_files", DocumentFiles.write_active_context)
    read_lessons = Alias("document_files", DocumentFiles.read_lessons)
    write_lessons = Alias("document_files", DocumentFiles.write_lessons)
    read_proposals = Alias("document_files", DocumentFiles.read_proposals)
    add_proposal = Alias("document_files", DocumentFiles.add_proposal)
    remove_proposal = Alias("document_files", DocumentFiles.remove_proposal)
