"""The reference agent loop: a :class:`Session` talking to a model (``kronika chat``).

Each user message goes through the session (memory commands are obeyed there, before
any model is asked); the payload goes to the model with the memory tools
(:mod:`kronika.workflows.tools`) when the server accepts tools; tool calls are run and
answered for up to ``max_tool_rounds`` rounds; the final answer is recorded. With no
model, or one that cannot be reached, the reply says so and the message is kept.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from kronika.core.secrets import redact_secrets
from kronika.errors import InvalidInput, LLMError, LLMRequestError, LLMUnavailable
from kronika.ports import LLM, ChatMessage, ToolCall
from kronika.providers.ledger import llm_task
from kronika.workflows.commands import reply
from kronika.workflows.session import Session, Turn
from kronika.workflows.tools import TOOLS, call_tool


@dataclass(frozen=True, slots=True)
class ToolUse:
    name: str
    arguments: str
    result: dict[str, Any]


@dataclass(frozen=True, slots=True)
class ChatReply:
    """The answer to one message, the session turn behind it, the tools the model used,
    and ``error`` when the model could not be asked."""

    text: str
    turn: Turn
    tools: tuple[ToolUse, ...] = ()
    error: str | None = None


def guess_language(text: str) -> str:
    """A rough guess among en/pl/es/uk from the letters used (for fallback replies)."""
    if re.search(r"[\u0400-\u04ff]", text):
        return "uk"
    if re.search(r"[ąćęłńśźżĄĆĘŁŃŚŹŻ]", text):
        return "pl"
    if re.search(r"[¿¡ñÑ]", text):
        return "es"
    return "en"


class ChatAgent:
    """A memory-backed chat agent; ``llm=None`` runs without a model."""

    def __init__(
        self,
        session: Session,
        llm: LLM | None,
        *,
        tools: bool = True,
        max_tool_rounds: int = 4,
    ) -> None:
        self.session = session
        self.llm = llm
        self.tools = tools
        self.max_tool_rounds = max_tool_rounds

    def send(self, text: str, *, at: datetime | None = None) -> ChatReply:
        try:
            turn = self.session.user(text, at=at)
        except InvalidInput as exc:  # a secret, with secrets = "refuse": neither kept nor sent
            return ChatReply(str(exc), Turn(self.session.session_id, (), 0), error=str(exc))
        if turn.command is not None:
            self.session.assistant(turn.command.reply)
            return ChatReply(turn.command.reply, turn)
        if self.llm is None:
            answer = reply("no_model", guess_language(text))
            return ChatReply(answer, turn, error="no language model is configured")
        try:
            with llm_task("chat", self.session.agent):
                answer, used = self._ask(list(turn.messages))
        except LLMError as exc:
            why = str(exc) if isinstance(exc, LLMUnavailable) else f"the model refused: {exc}"
            note = f"(No answer: {why}. Your message is saved; memory commands still work.)"
            return ChatReply(note, turn, error=str(exc))
        if self.session.settings.secrets != "allow":
            # shown as it is kept: a key the model repeats is not echoed (nor refused)
            answer = redact_secrets(answer)
        self.session.assistant(answer)
        return ChatReply(answer, turn, tuple(used))

    def _ask(self, messages: list[ChatMessage]) -> tuple[str, list[ToolUse]]:
        assert self.llm is not None
        used: list[ToolUse] = []
        for _ in range(self.max_tool_rounds + 1):
            try:
                result = self.llm.chat(messages, tools=TOOLS if self.tools else ())
            except LLMRequestError as exc:
                if not self.tools or "tool" not in str(exc).lower():
                    raise
                self.tools = False  # the server/model takes no tools: go on without
                result = self.llm.chat(messages)
            if not result.tool_calls:
                return result.content.strip(), used
            messages.append(
                ChatMessage(role="assistant", content=result.content, tool_calls=result.tool_calls)
            )
            for call in result.tool_calls:
                outcome = self._run_tool(call)
                if outcome.get("redacted"):
                    self.session.forgotten([str(p) for p in outcome["redacted"]])
                used.append(ToolUse(call.name, call.arguments, outcome))
                messages.append(
                    ChatMessage(
                        role="tool",
                        content=json.dumps(outcome, ensure_ascii=False),
                        tool_call_id=call.id,
                        name=call.name,
                    )
                )
        # the model kept calling tools: ask once more without them
        final = self.llm.chat(messages)
        return final.content.strip(), used

    def _run_tool(self, call: ToolCall) -> dict[str, Any]:
        return call_tool(self.session.memory, self.session.agent, call.name, call.arguments)


__all__ = ["ChatAgent", "ChatReply", "ToolUse", "guess_language"]
