"""Every memory type and layer of SPEC M4 has a producer, over a real workspace and the
scripted OpenAI-compatible server: a conversation's turns are the working layer, its
distillation writes profile facts (who the user is), plain facts, semantic world notes
and an episodic summary; observations are sensory, lessons reflective. Recall and
lists filter by them, and ``kronika stats`` counts them."""

from __future__ import annotations

import json

import pytest

from kronika import build_memory
from kronika.app import build_llm
from kronika.cli import main
from kronika.settings import Settings
from kronika.testing import FrozenClock, ScriptedChatServer
from kronika.workflows.jobs import run_job
from kronika.workflows.session import Session

EXTRACTION = json.dumps(
    {
        "facts": [
            {"tag": "CORE", "key": "name", "value": "The user's name is Ana."},
            {"tag": "PREFERENCE", "key": "drink", "value": "Ana drinks green tea."},
            {"tag": "DECISION", "key": "reviews", "value": "Code reviews happen on Fridays."},
            {
                "tag": "WORLD",
                "key": "deploys",
                "value": "The billing service deploys only from the main branch.",
            },
        ],
        "summary": "Ana introduced herself and explained how billing deploys.",
    }
)
LATER = json.dumps({"facts": [], "summary": "Ana asked about the weather."})
L1 = json.dumps({"summary": "On 22 November Ana introduced herself and described deploys."})


def test_each_type_and_layer_has_a_producer_and_filters_find_them(
    settings: Settings,
    clock: FrozenClock,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    with ScriptedChatServer([EXTRACTION, LATER, L1]) as server:
        model = settings.with_overrides(llm_base_url=server.base_url, llm_model="m", l1_every=2)
        with build_memory(model, create=True, clock=clock) as memory:
            talk = Session(memory, llm=None)
            talk.user("I'm Ana; green tea for me. Reviews are on Fridays.")
            talk.assistant("Noted.")
            talk.user("Billing deploys only from main, by the way.")
            working = memory.items(types=["message"])
            assert [(m.layer.value, m.tier.value) for m in working] == [(2, "short")] * 3
            sid = talk.session_id
            talk.close()
            clock.advance(minutes=1)
            later = Session(memory, llm=None)
            later.user("Will it rain tomorrow?")
            later.close()
            clock.advance(minutes=1)
            report = run_job(memory, "distill", llm=build_llm(model, minion=True, clock=clock))
            assert report.waiting == [] and server.remaining == 0

            def contents(kind: str) -> list[str]:
                return sorted(it.content for it in memory.items(types=[kind]))

            assert contents("profile") == [
                "drink: Ana drinks green tea.",
                "name: The user's name is Ana.",
            ]
            assert contents("semantic") == [
                "The billing service deploys only from the main branch."
            ]
            [episode] = memory.items(types=["episodic"])
            assert episode.content.startswith("On 22 November Ana introduced herself")
            assert episode.provenance.path == "summaries/L1/L1_001.md"
            # a filter on a kind of record takes the long-term types that refine it
            assert len(memory.items(types=["fact"])) == 3
            assert contents("summary") == sorted([episode.content, "Ana asked about the weather."])
            [world] = memory.items(types=["semantic"])
            assert world.kind is not None and world.kind.value == "W"
            assert f"session:{sid}" in world.tags  # explain traces it to its conversation

            memory.observe("CI run 812 took 14 minutes", ttl_seconds=3600)
            memory.record_outcome("deploy billing", "make deploy", ok=False, reasons=["no main"])
            memory.record_outcome("deploy billing", "git switch main && make deploy", ok=True)

            hits = memory.recall("what does Ana drink", types=["profile"], k=5).hits
            assert [h.item.key for h in hits][:1] == ["drink"]
            assert {h.item.type.value for h in hits} == {"profile"}
            found = memory.recall("billing deploys main branch", types=["semantic"], k=5).hits
            assert [h.item.id for h in found] == [world.id]
            stats = memory.stats()

        by_type = stats["items_by_type"]
        every = {"sensory", "episodic", "semantic", "profile", "reflection", "strategy"}
        every |= {"fact", "summary", "message", "note"}
        assert set(by_type) == every, by_type
        assert list(stats["items_by_layer"]) == [
            "1 sensory",
            "2 working",
            "3 long-term",
            "4 reflective",
        ]

        for name, value in (("HOME", str(model.home)), ("EMBEDDER", "hashing")):
            monkeypatch.setenv(f"KRONIKA_{name}", value)
        capsys.readouterr()
        assert main(["index", "stats", "--json"]) == 0
        shown = json.loads(capsys.readouterr().out)
        assert shown["items_by_type"]["profile"] == 2
        assert shown["items_by_layer"]["2 working"] == 4
        assert main(["recall", "green tea", "--type", "profile", "--json"]) == 0
        hits_json = json.loads(capsys.readouterr().out)["hits"]
        assert [h["kind"] for h in hits_json][:1] == ["profile"]
        assert {h["kind"] for h in hits_json} == {"profile"}
