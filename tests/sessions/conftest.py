"""Fixtures for the conversation tests: a model server speaking the OpenAI protocol."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from kronika import Memory
from kronika.app import build_llm
from kronika.ports import LLM
from kronika.settings import Settings
from kronika.testing import ScriptedChatServer


def system_text(body: dict[str, Any]) -> str:
    return str(body["messages"][0]["content"])


def transcript_of(body: dict[str, Any]) -> str:
    return str(body["messages"][-1]["content"])


class Brainy:
    """A scripted model: extraction replies from a queue, summaries, plain chat answers."""

    def __init__(self) -> None:
        self.extractions: list[Any] = []
        self.chat: list[Any] = []
        self.calls: list[str] = []

    def __call__(self, body: dict[str, Any]) -> Any:
        system = system_text(body)
        if "maintain the long-term memory" in system:
            self.calls.append("extraction")
            reply = self.extractions.pop(0)
            return reply if isinstance(reply, str) else json.dumps(reply)
        if "archive summary of" in system:
            self.calls.append("L1")
            return json.dumps({"summary": "Ana moved to Kraków and is launching kronika."})
        if "high-level summary" in system:
            self.calls.append("L2")
            return json.dumps({"summary": "A year of Ana's projects."})
        if "compress the older part" in system:
            self.calls.append("rolling")
            return json.dumps({"summary": "Earlier: the user talked about trains to Gdańsk."})
        self.calls.append("chat")
        return self.chat.pop(0) if self.chat else "Sure."


@pytest.fixture
def brainy() -> Brainy:
    return Brainy()


@pytest.fixture
def server(brainy: Brainy) -> Iterator[ScriptedChatServer]:
    with ScriptedChatServer(responder=brainy) as srv:
        yield srv


@pytest.fixture
def llm_settings(settings: Settings, server: ScriptedChatServer) -> Settings:
    return settings.with_overrides(
        llm_base_url=server.base_url, llm_model="main-model", minion_model="minion-model"
    )


@pytest.fixture
def llm(llm_settings: Settings) -> LLM:
    model = build_llm(llm_settings, minion=True)
    assert model is not None
    return model


MemoryFactory = Callable[[Settings], Memory]
