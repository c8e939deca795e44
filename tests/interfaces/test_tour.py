"""The README tour, end to end: the installed console script, the real local embedder,
a real workspace, no network."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

LOCOMO_LIKE = [
    {
        "sample_id": "conv-26",
        "conversation": {
            "speaker_a": "Caroline",
            "speaker_b": "Melanie",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                {"speaker": "Caroline", "dia_id": "D1:1", "text": "Hey Mel! Good to see you!"},
                {"speaker": "Melanie", "dia_id": "D1:2", "text": "Hey Caroline! How are you?"},
                {
                    "speaker": "Caroline",
                    "dia_id": "D1:3",
                    "text": "I went to a LGBTQ support group yesterday and it was so powerful.",
                },
            ],
            "session_2_date_time": "1:14 pm on 25 May, 2023",
            "session_2": [
                {
                    "speaker": "Melanie",
                    "dia_id": "D2:1",
                    "text": "I ran a charity race for mental health last Saturday.",
                    "img_url": ["x"],
                    "blip_caption": "a photo of runners at a finish line",
                }
            ],
            "session_3_date_time": "10:00 am on 1 June, 2023",
        },
        "qa": [],
    }
]

# Any attempt to open a network connection fails the run.
NO_NETWORK = """
import socket
def _refuse(*args, **kwargs):
    raise RuntimeError("kronika tried to reach the network")
socket.socket.connect = _refuse
socket.create_connection = _refuse
"""


def _kronika() -> list[str]:
    exe = shutil.which("kronika", path=str(Path(sys.executable).parent))
    return [exe] if exe else [sys.executable, "-m", "kronika"]


def test_readme_tour_offline(tmp_path: Path) -> None:
    guard = tmp_path / "guard"
    guard.mkdir()
    (guard / "sitecustomize.py").write_text(NO_NETWORK)
    data = tmp_path / "locomo.json"
    data.write_text(json.dumps(LOCOMO_LIKE))
    env = {k: v for k, v in os.environ.items() if not k.startswith("KRONIKA_")}
    env["PYTHONPATH"] = str(guard) + os.pathsep + env.get("PYTHONPATH", "")
    env["KRONIKA_HOME"] = str(tmp_path / "ws")

    def k(*args: str) -> str:
        done = subprocess.run(
            [*_kronika(), *args],
            env=env,
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, f"kronika {args}: {done.stderr}"
        return done.stdout

    k("init")
    k("remember", "prefiere TypeScript", "--key", "preferencia")
    k("remember", "--key", "nombre", "Lucas")
    hits = json.loads(k("recall", "what language does he like?", "--k", "5", "--json"))["hits"]
    assert hits[0]["content"] == "preferencia: prefiere TypeScript"
    brain = k("show", "brain")
    assert "prefiere TypeScript" in brain and "Lucas" in brain
    k("forget", "--key", "preferencia")
    assert "TypeScript" not in k("show", "brain")
    k("import", "locomo", str(data))
    query = "when did Caroline go to the LGBTQ support group?"
    found = json.loads(k("recall", query, "--agent", "conv-26", "--since", "2023-05-01", "--json"))[
        "hits"
    ]
    assert found[0]["turn_ids"] == ["D1:3"]
    before = [h["id"] for h in found]
    k("reindex")
    again = json.loads(
        k("recall", query, "--agent", "conv-26", "--since", "2023-05-01", "--json", "--no-record")
    )["hits"]
    assert [h["id"] for h in again] == before
    exported = json.loads(k("export", "--format", "json"))
    assert "D2:1" in exported["agents"]["conv-26"]["files"]["sessions/conv-26-s2.md"]
    assert "finish line" in exported["agents"]["conv-26"]["files"]["sessions/conv-26-s2.md"]


@pytest.mark.parametrize("phrase, paraphrase", [("lubię zieloną herbatę", "I like green tea")])
def test_multilingual_recall_with_the_default_embedder(
    tmp_path: Path, phrase: str, paraphrase: str
) -> None:
    from kronika import build_memory, load_settings

    with build_memory(load_settings(tmp_path / "ws", environ={}), create=True) as memory:
        memory.remember(phrase)
        memory.remember("the deadline for the report is Friday")
        memory.remember("Lucas plays the guitar")
        hit = memory.recall(paraphrase, k=1, mode="vector").hits[0]
        assert hit.item.content == phrase
