"""``memory.lessons``: lessons from outcomes (SPEC F2, F3), :mod:`kronika.engine.learning`
on the facade."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING

from kronika.core.lessons import Evaluation, Lesson
from kronika.core.model import Reader, RecallHit, Scope
from kronika.core.visibility import only_visible
from kronika.engine import learning
from kronika.engine.write import USER
from kronika.errors import InvalidInput
from kronika.memory.base import MemoryContext
from kronika.stores.markdown.lessons import LESSONS_FILE

if TYPE_CHECKING:
    from kronika.ports import LLM


class Lessons:
    """Record outcomes and learn from them, find and list lessons; calling the part
    lists them (what ``memory.lessons()`` did before the part was there).

    Learning reads and writes through the memory's own verbs (recall, note, link, the
    write path): it is given the memory (:class:`kronika.engine.learning.Memory`)."""

    def __init__(self, ctx: MemoryContext, memory: learning.Memory) -> None:
        self._ctx = ctx
        self._memory = memory

    def __call__(
        self,
        *,
        agent: str | None = None,
        include_retired: bool = False,
        reader: Reader | None = None,
    ) -> list[Lesson]:
        """:meth:`list`."""
        return self.list(agent=agent, include_retired=include_retired, reader=reader)

    def record_outcome(
        self,
        task: str,
        action: str,
        evaluation: Evaluation | None = None,
        *,
        ok: bool | None = None,
        reasons: Sequence[str] = (),
        agent: str | None = None,
        served: Sequence[str] | None = None,
        llm: LLM | None = None,
        source_agent: str = USER,
        at: datetime | None = None,
        scope: Scope | str | None = None,
        user: str | None = None,
        channel: str | None = None,
        team: str | None = None,
        reader: Reader | None = None,
    ) -> learning.OutcomeReport:
        """Keep what the agent did for ``task`` and how it went, and learn from it.

        Give an ``evaluation`` (e.g. ``kronika.core.lessons.exit_code(2, stderr)``) or
        ``ok`` with ``reasons``. ``served``: the ids of the lessons the agent followed
        (default: the active lessons matching the task). ``llm`` writes the reflection;
        without one kronika writes it from the reasons.

        The outcome and what is learned from it are for the audience ``scope``,
        ``user``, ``channel``, ``team`` and ``reader`` name, as for :meth:`Memory.note`: a
        lesson from a user's private outcome is theirs alone, one from a team's outcome
        the team's (docs/lessons.md). Only lessons the reader may see are credited.
        """
        if evaluation is not None and not isinstance(evaluation, Evaluation):
            raise InvalidInput(
                "the evaluation must be an Evaluation (kronika.core.lessons.exit_code(…) and"
                f" the other evaluators make one), not {type(evaluation).__name__};"
                " or give ok=True/False with reasons"
            )
        if evaluation is None:
            if ok is None:
                raise InvalidInput("give an evaluation, or ok=True/False with reasons")
            evaluation = Evaluation(bool(ok), 1.0 if ok else 0.0, tuple(reasons), "given")
        return learning.record_outcome(
            self._memory,
            task,
            action,
            evaluation,
            agent=agent,
            served=served,
            llm=llm,
            source_agent=source_agent,
            at=at,
            scope=scope,
            user=user,
            channel=channel,
            team=team,
            reader=reader,
        )

    def for_task(
        self, task: str, *, agent: str | None = None, k: int = 5, reader: Reader | None = None
    ) -> list[RecallHit]:
        """The active lessons (reflections, strategies) the reader may see that best
        match ``task`` (``memory.lessons_for``)."""
        return learning.lessons_for(self._memory, task, agent=agent, k=k, reader=reader)

    # named `list`, this method comes last: an annotation below it would read `list` as it
    def list(
        self,
        *,
        agent: str | None = None,
        include_retired: bool = False,
        reader: Reader | None = None,
    ) -> list[Lesson]:
        """Every lesson of the agent the reader may see, with its score and evidence.

        A lesson is an item like any other (layer 4): it is listed only to a reader
        who may see its item (:func:`kronika.core.visibility.visible`)."""
        ctx = self._ctx
        name = ctx.agent(agent)
        found = ctx.workspace.read_lessons(name)
        seen = ctx.reading(reader)
        if seen is not None and found:
            items = ctx.workspace.parse_source(name, LESSONS_FILE).items
            shown = {item.id for item in only_visible(items, seen)}
            found = [x for x in found if x.id in shown]
        return found if include_retired else [x for x in found if x.active]
