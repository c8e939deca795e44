"""Lessons from outcomes (SPEC F2, F3) on the facade: :mod:`kronika.engine.learning`."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING

from kronika.core.lessons import Evaluation, Lesson
from kronika.core.model import RecallHit
from kronika.engine import learning
from kronika.engine.write import USER
from kronika.errors import InvalidInput
from kronika.memory.base import MemoryBase

if TYPE_CHECKING:
    from kronika.ports import LLM


class MemoryLessons(MemoryBase):
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
    ) -> learning.OutcomeReport:
        """Keep what the agent did for ``task`` and how it went, and learn from it.

        Give an ``evaluation`` (e.g. ``kronika.core.lessons.exit_code(2, stderr)``) or
        ``ok`` with ``reasons``. ``served``: the ids of the lessons the agent followed
        (default: the active lessons matching the task). ``llm`` writes the reflection;
        without one kronika writes it from the reasons.
        """
        if evaluation is None:
            if ok is None:
                raise InvalidInput("give an evaluation, or ok=True/False with reasons")
            evaluation = Evaluation(bool(ok), 1.0 if ok else 0.0, tuple(reasons), "given")
        return learning.record_outcome(
            self,  # type: ignore[arg-type]
            task,
            action,
            evaluation,
            agent=agent,
            served=served,
            llm=llm,
            source_agent=source_agent,
            at=at,
        )

    def lessons_for(self, task: str, *, agent: str | None = None, k: int = 5) -> list[RecallHit]:
        """The active lessons (reflections, strategies) that best match ``task``."""
        return learning.lessons_for(self, task, agent=agent, k=k)  # type: ignore[arg-type]

    def lessons(self, *, agent: str | None = None, include_retired: bool = False) -> list[Lesson]:
        """Every lesson of the agent, with its score and evidence."""
        found = self.workspace.read_lessons(self._agent(agent))
        return found if include_retired else [x for x in found if x.active]
