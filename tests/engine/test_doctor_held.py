"""What kronika records its small files held, and ``kronika doctor`` against it: a file
gone or emptied is found, not read as one never made; hand edits stay the person's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kronika import load_settings
from kronika.cli import main
from kronika.server.jobstore import SqliteJobRecords
from kronika.server.keys import KeyStore


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("KRONIKA_EMBEDDER", "hashing")
    monkeypatch.delenv("KRONIKA_HOME", raising=False)
    home = tmp_path / "ws"
    assert main(["init", "--home", str(home)]) == 0
    (home / "kronika.toml").write_text(POLICY, "utf-8")
    assert main(["remember", "tea is good", "--home", str(home)]) == 0
    return home


POLICY = '[agents.careful]\nautonomy = 1\nwriters = ["default"]\n'


def _doctor(home: Path, capsys: pytest.CaptureFixture[str], *fix: str) -> tuple[int, dict]:  # type: ignore[type-arg]
    capsys.readouterr()
    code = main(["doctor", *fix, "--json", "--home", str(home)])
    return code, json.loads(capsys.readouterr().out)


def _where(report: dict) -> list[str]:  # type: ignore[type-arg]
    return [f["where"] for f in report["findings"]]


def test_a_settings_file_deleted_is_said_by_any_command_and_fix_puts_it_back(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (home / "kronika.toml").unlink()
    capsys.readouterr()
    assert main(["recall", "tea", "--home", str(home)]) == 0
    assert "kronika.toml is missing: it held settings" in capsys.readouterr().err
    code, report = _doctor(home, capsys)
    assert code == 11 and "kronika.toml" in _where(report)
    code, report = _doctor(home, capsys, "--fix")
    assert code == 0, report
    assert (home / "kronika.toml").read_text("utf-8") == POLICY
    assert load_settings(home, environ={}).agents["careful"].autonomy == 1  # applies again


def test_settings_reset_on_purpose_with_a_comment_are_taken(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (home / "kronika.toml").write_text("# defaults\n", "utf-8")
    assert main(["recall", "tea", "--home", str(home)]) == 0
    (home / "kronika.toml").write_text("", "utf-8")  # the copy followed the edit
    code, report = _doctor(home, capsys)
    assert code == 0, report


def test_keys_deleted_then_a_new_key_made_are_still_found_and_fix_keeps_both(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    keys = KeyStore(home / "keys.sqlite")
    first = keys.create("default", label="first").token
    keys.close()
    (home / "keys.sqlite").unlink()
    keys = KeyStore(home / "keys.sqlite")
    second = keys.create("default", label="second").token  # on the new, empty file
    keys.close()
    code, report = _doctor(home, capsys)
    assert code == 11 and "keys.sqlite" in _where(report)
    said = next(f for f in report["findings"] if f["where"] == "keys.sqlite")
    assert "1 of them are not there" in said["what"], said
    code, report = _doctor(home, capsys, "--fix")
    assert code == 0, report
    keys = KeyStore(home / "keys.sqlite")
    try:
        assert keys.verify(first) is not None and keys.verify(second) is not None
    finally:
        keys.close()


def test_a_key_revoked_while_another_was_missing_stays_revoked_after_fix(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The copy is not refreshed while a recorded key is missing, so it still holds the
    revoked key as it was: the file's own, newer row must win when the copy goes back."""
    import sqlite3

    keys = KeyStore(home / "keys.sqlite")
    kept = keys.create("default", label="kept").token
    revoked = keys.create("default", label="revoked").token
    keys.close()
    conn = sqlite3.connect(home / "keys.sqlite")
    with conn:
        conn.execute("DELETE FROM api_keys WHERE label = 'kept'")  # damage: a row lost
    conn.close()
    keys = KeyStore(home / "keys.sqlite")
    keys.revoke(revoked.split("_")[1])
    keys.close()
    code, report = _doctor(home, capsys, "--fix")
    assert code == 0, report
    keys = KeyStore(home / "keys.sqlite")
    try:
        assert keys.verify(kept) is not None  # the lost key is back
        assert keys.verify(revoked) is None  # and the revoked one stays revoked
    finally:
        keys.close()


def test_an_emptied_audit_trail_stays_found_after_new_entries_until_fix(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for n in range(8):  # the record follows the trail as it grows
        assert main(["remember", f"coffee {n} is fine", "--home", str(home)]) == 0
    (home / "audit.jsonl").write_bytes(b"")
    assert main(["remember", "water is fine", "--home", str(home)]) == 0
    code, report = _doctor(home, capsys)
    assert code == 11 and "audit.jsonl" in _where(report)
    code, report = _doctor(home, capsys, "--fix")
    assert code == 0 and any("entries it lost are lost" in d for d in report["repaired"])
    assert _doctor(home, capsys)[0] == 0


def test_job_records_pruned_by_kronika_are_no_loss_but_a_deleted_file_is(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    jobs = SqliteJobRecords(home / "server-jobs.sqlite")
    for n in range(4):
        row = {"id": f"j-{n}", "kind": "reindex", "tenant": "default", "agent": "default"}
        row |= {"params": {}, "status": "done", "created_at": f"2026-11-2{n}", "result": {}}
        row["message"] = "done"
        jobs.insert(row, "w", 1.0)
    jobs.prune(2)
    jobs.close()
    assert _doctor(home, capsys)[0] == 0
    (home / "server-jobs.sqlite").unlink()
    code, report = _doctor(home, capsys)
    assert code == 11 and "server-jobs.sqlite" in _where(report)
    said = next(f for f in report["findings"] if f["where"] == "server-jobs.sqlite")
    assert "held 2 job records" in said["what"]


def test_proposals_kept_by_kronika_and_emptied_are_found(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KRONIKA_EMBEDDER", "hashing")
    home = tmp_path / "ws"
    assert main(["init", "--home", str(home)]) == 0
    (home / "kronika.toml").write_text(POLICY, "utf-8")
    settings = load_settings(home, environ={}, embedder="hashing")
    from kronika import build_memory

    with build_memory(settings, create=True) as memory:
        memory.create_agent("careful")
        memory.remember("maybe coffee", agent="careful", source_agent="careful")
    rel = "agents/careful/proposals.md"
    assert "maybe coffee" in (home / rel).read_text("utf-8")
    assert _doctor(home, capsys)[0] == 0
    (home / rel).write_bytes(b"")
    code, report = _doctor(home, capsys)
    assert code == 11 and rel in _where(report)
    assert "held 1 proposal(s)" in json.dumps(report)
    assert _doctor(home, capsys, "--fix")[0] == 0
    assert _doctor(home, capsys)[0] == 0
