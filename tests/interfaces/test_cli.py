"""The command line as a person uses it: tables, --json, exit codes (SPEC I2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kronika.cli import main
from kronika.cli.main import build_parser


def test_remember_recall_show_forget(run) -> None:  # type: ignore[no-untyped-def]
    run("init")
    assert "remembered" in run("remember", "prefiere TypeScript", "--key", "preferencia")
    run("remember", "--key", "nombre", "Lucas")
    out = run("recall", "what language does he like?", "--limit", "5")
    assert "prefiere TypeScript" in out and "brain.md#L" in out
    data = json.loads(run("recall", "TypeScript", "--json"))
    assert data["hits"][0]["key"] == "preferencia"
    assert data["hits"][0]["citation"].startswith("brain.md#L")
    brain = run("show", "brain")
    assert "Lucas" in brain and "TypeScript" in brain
    run("forget", "--key", "preferencia")
    assert "TypeScript" not in run("show", "brain")
    audit = json.loads(run("logs", "audit", "--json"))
    assert [a["action"] for a in audit] == ["remember", "remember", "forget"]


def test_errors_map_to_exit_codes(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    err = run("recall", "x", code=3)
    assert "kronika init" in err
    run("init")
    assert "unknown agent" in run("recall", "x", "--agent", "nobody", code=4)
    assert "invalid" in run("recall", "x", "--agent", "../etc", code=4).lower()
    assert "someday" in run("recall", "x", "--since", "someday", code=2)
    run("forget", "--key", "missing", code=5)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"session": "s1", "role": "user", "content": "hi"}\nnot json\n')
    assert "line 2" in run("import", "jsonl", str(bad), code=9)


def test_list_get_history_stats_reindex_export(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    run("init")
    run("remember", "--key", "city", "Kraków")
    run("remember", "--key", "city", "Warszawa")
    items = json.loads(run("list", "--json"))
    assert [i["value"] for i in items] == ["Warszawa"]
    one = json.loads(run("get", items[0]["id"], "--json"))
    assert one["key"] == "city"
    history = run("history", "city")
    assert history.index("Kraków") < history.index("Warszawa")
    stats = json.loads(run("index", "stats", "--json"))
    assert stats["embedding_model"].startswith("hashing")
    report = json.loads(run("index", "rebuild", "--json"))
    assert report["items_indexed"] >= 2
    exported = json.loads(run("export", "--format", "json"))
    assert "Warszawa" in exported["agents"]["default"]["files"]["brain.md"]
    backup = tmp_path / "backup.json"
    run("export", "-o", str(backup))
    run("--home", str(tmp_path / "other"), "init")
    run("--home", str(tmp_path / "other"), "import", "export", str(backup), "--replace")
    out = run("--home", str(tmp_path / "other"), "recall", "Warszawa", "--json")
    assert json.loads(out)["hits"][0]["content"] == "city: Warszawa"


def test_import_jsonl_and_recall_with_filters(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    chat = tmp_path / "chat.jsonl"
    lines = [
        {
            "session": "s1",
            "role": "user",
            "content": "I adopted a cat named Mruczek",
            "at": "2025-11-27T10:00:00Z",
        },
        {
            "session": "s1",
            "role": "assistant",
            "content": "Congratulations on Mruczek!",
            "at": "2025-11-27T10:00:05Z",
        },
        {
            "session": "s2",
            "role": "user",
            "content": "We moved to Valencia",
            "at": "2025-12-03T18:00:00Z",
        },
    ]
    chat.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    run("init")
    summary = json.loads(run("import", "jsonl", str(chat), "--agent", "pets", "--json"))
    assert summary["turns"] == 3
    hits = json.loads(
        run(
            "recall",
            "cat",
            "--agent",
            "pets",
            "--since",
            "2025-11-01",
            "--until",
            "2025-11-30",
            "--speaker",
            "user",
            "--json",
        )
    )["hits"]
    assert [h["content"] for h in hits] == ["I adopted a cat named Mruczek"]
    assert hits[0]["citation"].startswith("sessions/s1.md#L")


def test_every_command_is_documented() -> None:
    docs = (Path(__file__).parents[2] / "docs" / "cli.md").read_text()
    parser = build_parser()
    commands = parser._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    missing = [name for name in commands if f"kronika {name}" not in docs]
    assert not missing, f"undocumented commands: {missing}"


def test_bench_locomo_json_and_report(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    conversation = {
        "sample_id": "conv-1",
        "conversation": {
            "speaker_a": "Ana",
            "speaker_b": "Ben",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                {"speaker": "Ana", "dia_id": "D1:1", "text": "I adopted a grey cat named Mruczek."},
                {
                    "speaker": "Ben",
                    "dia_id": "D1:2",
                    "text": "Lovely! I started learning the cello.",
                },
                {
                    "speaker": "Ana",
                    "dia_id": "D1:3",
                    "text": "We will hike in the Tatra mountains.",
                },
            ],
        },
        "qa": [
            {
                "question": "What is the name of Ana's cat?",
                "answer": "Mruczek",
                "evidence": ["D1:1"],
                "category": 4,
            },
            {
                "question": "Which instrument did Ben start?",
                "answer": "cello",
                "evidence": ["D1:2; D9:9"],
                "category": 1,
            },
        ],
    }
    data = tmp_path / "locomo.json"
    data.write_text(json.dumps([conversation]))
    out = json.loads(
        run(
            "bench",
            "locomo",
            str(data),
            "--mode",
            "lexical",
            "--out",
            str(tmp_path / "r"),
            "--json",
        )
    )
    assert out["recall@5"] == 1.0
    assert out["lexical.recall@5"] == 1.0
    report = (tmp_path / "r" / "locomo.md").read_text()
    assert "recall@5" in report and "machine" in report
    assert (tmp_path / "r" / "locomo.json").is_file()


def test_global_options_work_before_and_after_the_command(tmp_path: Path) -> None:
    from kronika.cli.main import build_parser

    parser = build_parser()
    before = parser.parse_args(["--home", str(tmp_path), "--json", "recall", "x"])
    after = parser.parse_args(["recall", "x", "--home", str(tmp_path), "--json"])
    assert before.home == after.home == str(tmp_path)
    assert before.json is True and after.json is True


def test_recall_with_a_reranker_shows_its_scores_and_says_when_it_is_down(  # type: ignore[no-untyped-def]
    run, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from kronika.testing import ScriptedRerankServer

    run("init")
    run("remember", "I just finished Dune by Frank Herbert")
    run("remember", "I keep buying books about books")
    with ScriptedRerankServer(lambda query, doc: 7.0 if "Dune" in doc else 1.0) as server:
        monkeypatch.setenv("KRONIKA_RERANKER_BASE_URL", server.base_url)
        monkeypatch.setenv("KRONIKA_RERANKER_WEIGHT", "1")
        data = json.loads(run("recall", "which books?", "--json"))
        table = run("recall", "which books?", "--explain")
    assert data["notes"] == []
    assert data["hits"][0]["content"] == "I just finished Dune by Frank Herbert"
    assert [hit["rerank_score"] for hit in data["hits"]] == [7.0, 1.0]
    assert "rerank" in table and "7.000" in table
    # the server is gone now: the same recall still answers, and says why it is unranked
    monkeypatch.setenv("KRONIKA_RERANKER_RETRIES", "0")
    down = json.loads(run("recall", "which books?", "--json"))
    assert len(down["hits"]) == 2 and down["hits"][0]["rerank_score"] is None
    (note,) = down["notes"]
    assert "connection refused" in note
    main(["recall", "which books?"])
    shown = capsys.readouterr()
    assert "note:" in shown.err and "connection refused" in shown.err
    assert "Dune" in shown.out
