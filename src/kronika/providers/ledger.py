"""Every model call counted, and a hard daily budget per agent (SPEC O1).

:class:`LedgeredLLM` wraps any :class:`~kronika.ports.LLM`: before a call it checks the
agent's budget for the day (``llm_daily_calls``, ``llm_daily_tokens``) and, when spent,
raises :class:`~kronika.errors.LLMBudgetExhausted` — a kind of
:class:`~kronika.errors.LLMUnavailable`, so every caller that already queues work when
no model answers (consolidation, summaries) queues it the same way and retries it later:
nothing is lost. After a call it appends a :class:`~kronika.core.usage.UsageEntry` to
the ledger.

What a call is for, and for which agent, comes from the code that makes it:
``with llm_task("extraction", agent):`` around the call (a context variable, so the
model port keeps its shape).
"""

from __future__ import annotations

import contextvars
import logging
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import timedelta
from typing import Any, Protocol

from kronika.core.usage import Budget, UsageEntry, spent
from kronika.errors import LLMBudgetExhausted, LLMError, WorkspaceError
from kronika.ports import LLM, ChatMessage, Clock, LLMReply, TokenCounter

log = logging.getLogger("kronika")

_TASK: contextvars.ContextVar[tuple[str, str]] = contextvars.ContextVar(
    "kronika_llm_task", default=("other", "-")
)


@contextmanager
def llm_task(purpose: str, agent: str) -> Iterator[None]:
    """Calls made inside are booked as ``purpose`` for ``agent``."""
    token = _TASK.set((purpose, agent))
    try:
        yield
    finally:
        _TASK.reset(token)


class UsageLedger(Protocol):
    def append(self, entry: UsageEntry) -> None: ...

    def read(self, since: Any = None) -> list[UsageEntry]: ...


class LedgeredLLM:
    """An :class:`~kronika.ports.LLM` that books every call and keeps the daily budget."""

    def __init__(
        self,
        inner: LLM,
        ledger: UsageLedger,
        clock: Clock,
        *,
        budget: Budget | None = None,
        tokens: TokenCounter | None = None,
    ) -> None:
        self.inner = inner
        self.ledger = ledger
        self.clock = clock
        self.budget = budget or Budget()
        self.tokens = tokens

    @property
    def model(self) -> str:
        return self.inner.model

    def chat(
        self,
        messages: Sequence[ChatMessage],
        *,
        json_output: bool = False,
        tools: Sequence[Mapping[str, Any]] = (),
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> LLMReply:
        purpose, agent = _TASK.get()
        now = self.clock.now()
        if self.budget.calls or self.budget.tokens:
            start_of_day = now.replace(hour=0, minute=0, second=0, microsecond=0)
            used = spent(
                self.ledger.read(since=start_of_day - timedelta(seconds=1)), agent, now.date()
            )
            why = self.budget.refusal(*used)
            if why is not None:
                self._book(purpose, agent, 0, 0, 0.0, "over budget", estimated=False)
                raise LLMBudgetExhausted(
                    f"{why} for agent {agent!r}; the work waits until tomorrow"
                )
        began = time.perf_counter()
        try:
            reply = self.inner.chat(
                messages,
                json_output=json_output,
                tools=tools,
                temperature=temperature,
                max_tokens=max_tokens,
            )
        except LLMError:
            self._book(purpose, agent, 0, 0, time.perf_counter() - began, "error", False)
            raise
        seconds = time.perf_counter() - began
        tokens_in, tokens_out = reply.prompt_tokens, reply.completion_tokens
        estimated = tokens_in is None or tokens_out is None
        if tokens_in is None:
            tokens_in = self._count(" ".join(m.content for m in messages))
        if tokens_out is None:
            tokens_out = self._count(reply.content)
        self._book(purpose, agent, tokens_in, tokens_out, seconds, "ok", estimated)
        return reply

    def _count(self, text: str) -> int:
        return self.tokens.count(text) if self.tokens is not None else len(text.split())

    def _book(
        self,
        purpose: str,
        agent: str,
        tokens_in: int,
        tokens_out: int,
        seconds: float,
        outcome: str,
        estimated: bool,
    ) -> None:
        entry = UsageEntry(
            at=self.clock.now(),
            purpose=purpose,
            agent=agent,
            model=self.inner.model,
            tokens_in=tokens_in,
            tokens_out=tokens_out,
            seconds=round(seconds, 4),
            outcome=outcome,
            estimated=estimated,
        )
        try:
            self.ledger.append(entry)
        except WorkspaceError as exc:  # the call happened: its answer must not be lost
            log.warning("%s", exc)
