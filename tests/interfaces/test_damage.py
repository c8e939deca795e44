"""Damaged files met by the real command line: healed or reported, never a traceback.

Each case damages a real workspace on disk (bytes overwritten inside ``index.sqlite``,
a Brain truncated, a torn audit line) and runs ``python -m kronika`` in a subprocess,
as a person would.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from kronika import build_memory, load_settings

FACTS = [f"I like thing {n} very much, tea {n}" for n in range(6)]
FACT_KINDS = ("fact", "profile")  # a liking is a profile fact


def kronika(home: Path, *args: str, code: int | None = 0) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KRONIKA_")}
    env["KRONIKA_EMBEDDER"] = "hashing"
    done = subprocess.run(
        [sys.executable, "-m", "kronika", *args, "--home", str(home)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "Traceback" not in done.stderr, done.stderr
    if code is not None:
        assert done.returncode == code, f"kronika {args}: {done.stderr}"
    return done


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A workspace with six facts and a note, made once (through the Python API: the
    CLI would take a second per fact) and copied for each test."""
    home = tmp_path_factory.mktemp("made") / "ws"
    settings = load_settings(home, environ={}, embedder="hashing")
    with build_memory(settings, create=True) as memory:
        for n, fact in enumerate(FACTS):
            memory.remember(fact, key=f"like{n}")
        memory.note("today we discussed the plan")
    return home


@pytest.fixture
def home(made: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(made, tmp_path / "ws"))


def _pages(home: Path) -> dict[str, int]:
    """Where each table's first page starts in the file."""
    with sqlite3.connect(home / "index.sqlite") as conn:
        size = conn.execute("PRAGMA page_size").fetchone()[0]
        roots = dict(conn.execute("SELECT name, rootpage FROM sqlite_master WHERE rootpage > 0"))
    conn.close()
    return {name: (root - 1) * size for name, root in roots.items()}


def _damage(path: Path, offsets: list[int]) -> None:
    with path.open("r+b") as handle:
        for offset in offsets:
            handle.seek(offset)
            handle.write(b"\xde\xad\xbe\xef\x01\x02\x03\x04")


DAMAGE = {
    "header": lambda pages, size: [16, 40],
    "schema": lambda pages, size: [108, 300, 2000],
    "items b-tree": lambda pages, size: [pages["items"] + o for o in (0, 8, 100)],
    "fts pages": lambda pages, size: [pages["items_fts_data"] + o for o in (0, 8, 200)],
    "fts index": lambda pages, size: [pages["items_fts_idx"] + o for o in (0, 8, 200)],
    "end": lambda pages, size: [size - 50, size - 500, size - 3000],
}


@pytest.mark.parametrize("where", DAMAGE)
def test_reindex_always_cures_a_damaged_index(home: Path, where: str) -> None:
    index = home / "index.sqlite"
    _damage(index, DAMAGE[where](_pages(home), index.stat().st_size))
    kronika(home, "index", "rebuild")
    with sqlite3.connect(index) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    conn.close()
    hits = json.loads(kronika(home, "recall", "thing tea", "--json", "--limit", "10").stdout)[
        "hits"
    ]
    assert len([h for h in hits if h["kind"] in FACT_KINDS]) == len(FACTS)


def test_garbled_schema_text_is_healed_not_a_traceback(home: Path) -> None:
    index = home / "index.sqlite"
    data = bytearray(index.read_bytes())
    at = data.index(b"CREATE INDEX items_type") + 7
    data[at : at + 2] = b"\xc4("  # not UTF-8: SQLite hands back text Python cannot read
    index.write_bytes(bytes(data))
    done = kronika(home, "list")
    assert "rebuilt from the Markdown" in " ".join(done.stderr.split())
    assert "thing 5" in done.stdout


def test_a_value_inside_a_row_that_cannot_be_read_is_healed(home: Path) -> None:
    with sqlite3.connect(home / "index.sqlite") as conn:  # well-formed pages, a wild time
        conn.execute("UPDATE items SET valid_from = 1e300 WHERE key IS NOT NULL")
    conn.close()
    done = kronika(home, "recall", "thing tea", "--json", "--limit", "10")
    data = json.loads(done.stdout)
    assert len([h for h in data["hits"] if h["kind"] in FACT_KINDS]) == len(FACTS)
    assert any("rebuilt from the Markdown" in note for note in data["notes"])


@pytest.mark.parametrize("where", ["items b-tree", "fts pages", "fts index", "schema"])
def test_any_command_heals_a_damaged_index_and_says_so(home: Path, where: str) -> None:
    index = home / "index.sqlite"
    _damage(index, DAMAGE[where](_pages(home), index.stat().st_size))
    done = kronika(home, "recall", "thing tea", "--json", "--limit", "10")
    data = json.loads(done.stdout)
    assert len([h for h in data["hits"] if h["kind"] in FACT_KINDS]) == len(FACTS)
    (note,) = [n for n in data["notes"] if "index" in n]
    assert "rebuilt from the Markdown" in note
    kept = list(home.glob("index.sqlite.corrupt-*"))
    assert kept and str(kept[0]) in note
    # healed for good: the next command has nothing to say
    again = kronika(home, "list", "--json")
    assert len(json.loads(again.stdout)) == len(FACTS) + 1 and not again.stderr.strip()


def test_a_truncated_brain_is_reported_and_its_facts_kept(home: Path) -> None:
    brain = home / "agents" / "default" / "brain.md"
    text = brain.read_bytes()
    brain.write_bytes(text[: text.index(b"like2")])  # cut inside the third fact's line
    done = kronika(home, "list", "--json")
    notes = json.loads(done.stderr.strip().splitlines()[-1])["notes"]
    lost = [n for n in notes if "lost" in n]
    assert lost and "truncated or emptied" in lost[0], notes
    copy = Path(lost[0].rsplit(" kept at ", 1)[1])
    assert all(fact in copy.read_text("utf-8") for fact in FACTS[2:])
    # doctor puts them back
    fixed = json.loads(kronika(home, "doctor", "--fix", "--json").stdout)
    assert fixed["healthy"], fixed
    facts = json.loads(kronika(home, "list", "--json").stdout)
    assert {f["value"] for f in facts if f["type"] in FACT_KINDS} >= set(FACTS[2:])


def test_an_emptied_brain_is_reported_in_plain_output(home: Path) -> None:
    (home / "agents" / "default" / "brain.md").write_bytes(b"")
    done = kronika(home, "recall", "tea")
    assert "note:" in done.stderr and f"lost {len(FACTS)} of its {len(FACTS)} facts" in (
        " ".join(done.stderr.split())
    )


def test_a_torn_metadata_comment_never_becomes_fact_text(home: Path) -> None:
    brain = home / "agents" / "default" / "brain.md"
    lines = brain.read_text("utf-8").splitlines(keepends=True)
    last = max(i for i, line in enumerate(lines) if "<!--" in line)
    lines[last] = lines[last][: lines[last].index("created=") + 12] + "\n"
    brain.write_text("".join(lines), "utf-8")
    done = kronika(home, "list", "--json")
    facts = {f["id"]: f for f in json.loads(done.stdout) if f["type"] in FACT_KINDS}
    assert len(facts) == len(FACTS)
    assert not any("<!--" in f["content"] or "created" in f["content"] for f in facts.values())
    assert "cut off" in done.stderr
    report = json.loads(kronika(home, "doctor", "--json", code=11).stdout)
    assert any("cut off" in f["what"] for f in report["findings"])
    kronika(home, "doctor", "--fix")
    assert brain.read_text("utf-8").splitlines()[last].endswith("-->")
    assert kronika(home, "doctor").returncode == 0


def test_invalid_bytes_are_reported_by_any_command(home: Path) -> None:
    brain = home / "agents" / "default" / "brain.md"
    brain.write_bytes(brain.read_bytes().replace(b"thing 3", b"thing \xff\xfe3"))
    done = kronika(home, "history", "like1")
    assert "invalid UTF-8" in done.stderr and ".corrupt" in done.stderr


def test_a_torn_audit_line_does_not_swallow_the_next_entry(home: Path) -> None:
    audit = home / "audit.jsonl"
    audit.write_bytes(audit.read_bytes() + b'{"at": "2026-11-2')  # a torn last line
    kronika(home, "remember", "the sky is green", "--key", "sky")
    entries = json.loads(kronika(home, "logs", "audit", "--json", "--limit", "100").stdout)
    assert entries[-1]["action"] == "remember" and "sky" in (entries[-1]["summary"] or "")
    assert len(entries) == len(FACTS) + 2
    done = kronika(home, "logs", "audit", "--json")
    assert "unreadable line" in done.stderr
    kronika(home, "doctor", "--fix")
    assert kronika(home, "logs", "audit").stderr.strip() == ""
    assert list(home.glob("audit.jsonl.damaged-*"))


def test_export_refuses_to_overwrite_the_brain(home: Path) -> None:
    brain = home / "agents" / "default" / "brain.md"
    before = brain.read_bytes()
    done = kronika(home, "export", "-o", str(brain), code=2)
    assert "refusing" in done.stderr
    assert brain.read_bytes() == before
    kronika(home, "export", "-o", str(home / "index.sqlite"), code=2)
    kronika(home, "export", "-o", str(home.parent / "backup.json"))


def test_doctor_on_a_healthy_workspace_exits_0(home: Path) -> None:
    for path in [home, *home.rglob("*")]:
        path.chmod(0o700 if path.is_dir() else 0o600)
    report = json.loads(kronika(home, "doctor", "--json").stdout)
    assert report["healthy"] and report["findings"] == []
    assert report["checked"]["files"] >= 2 and report["checked"]["audit_entries"] == 7


def test_doctor_reports_a_damaged_index_and_fix_rebuilds_it(home: Path) -> None:
    index = home / "index.sqlite"
    _damage(index, DAMAGE["items b-tree"](_pages(home), index.stat().st_size))
    report = json.loads(kronika(home, "doctor", "--json", code=None).stdout)
    # opening the memory may already have healed it; either way it is said
    said = [f["what"] for f in report["findings"]] + report.get("notes", [])
    assert any("damaged" in s for s in said), report
    fixed = json.loads(kronika(home, "doctor", "--fix", "--json", code=None).stdout)
    assert not [f for f in fixed["remaining"] if f["check"] == "index"]


def test_facts_moved_to_the_archive_by_hand_are_not_a_loss(home: Path) -> None:
    folder = home / "agents" / "default"
    lines = (folder / "brain.md").read_text("utf-8").splitlines(keepends=True)
    moved = [line for line in lines if "**like" in line][:4]
    (folder / "brain.md").write_text("".join(x for x in lines if x not in moved), "utf-8")
    (folder / "brain_archive.md").write_text("# Brain archive\n\n" + "".join(moved), "utf-8")
    done = kronika(home, "list", "--json")
    assert "lost" not in done.stderr and not list(folder.glob(".corrupt/*"))


def test_a_brain_cut_inside_a_value_keeps_one_current_value_after_fix(home: Path) -> None:
    brain = home / "agents" / "default" / "brain.md"
    text = brain.read_bytes()
    brain.write_bytes(text[: text.index(b"very much, tea 5")])  # inside the last value
    done = kronika(home, "list", "--json")
    assert "brain.md lost 1 of its" in " ".join(done.stderr.split())  # one fact: still said
    assert kronika(home, "doctor", code=11).returncode == 11
    assert kronika(home, "doctor", code=11).returncode == 11  # on every run until fixed
    kronika(home, "doctor", "--fix")
    facts = json.loads(kronika(home, "list", "--json").stdout)
    like5 = [f["value"] for f in facts if f.get("key") == "like5"]
    assert like5 == [FACTS[5]], like5
    assert kronika(home, "doctor").returncode == 0


@pytest.mark.parametrize(
    "first", [("recall", "thing tea"), ("index", "rebuild"), ("doctor", "--fix")]
)
def test_a_stored_value_that_is_not_utf8_is_healed_by_any_command(
    home: Path, first: tuple[str, ...]
) -> None:
    with sqlite3.connect(home / "index.sqlite") as conn:  # pages whole, one value not text
        conn.execute(
            "UPDATE items SET content = CAST(X'6869FFFE20746561' AS TEXT) WHERE key = 'like1'"
        )
    conn.close()
    done = kronika(home, *first)  # was: exit 7 until index.sqlite was deleted by hand
    assert "rebuilt from the Markdown" in " ".join(done.stderr.split())
    facts = json.loads(kronika(home, "list", "--json").stdout)
    assert {f["value"] for f in facts if f["type"] in FACT_KINDS} == set(FACTS)
    assert kronika(home, "doctor").returncode == 0


def test_a_forget_takes_its_subject_out_of_kept_copies_of_lost_turns(tmp_path: Path) -> None:
    """A session emptied by accident keeps its turns in a copy under .corrupt/ for
    doctor --fix; a later forget of a subject said there takes those turns out of the
    copy too, so --fix can never bring them back."""
    home = tmp_path / "ws"
    with build_memory(load_settings(home, environ={}, embedder="hashing"), create=True) as memory:
        memory.save_turn("s1", "user", "My ex-partner Dmytro Kovalenko lives at 12 Lipowa street.")
        memory.save_turn("s1", "user", "I like green tea in the morning.")
    session = next((home / "agents" / "default" / "sessions").glob("*.md"))
    session.write_text("", encoding="utf-8")
    kronika(home, "recall", "green tea")  # the next command finds the loss, keeps a copy
    copies = list((home / "agents" / "default" / ".corrupt").glob("*.lost.*"))
    assert copies and any("Kovalenko" in c.read_text(encoding="utf-8") for c in copies)
    kronika(home, "forget", "--topic", "Dmytro Kovalenko")
    left = [
        c
        for c in (home / "agents" / "default" / ".corrupt").glob("*")
        if b"Kovalenko" in c.read_bytes()
    ]
    assert left == []
    kronika(home, "doctor", "--fix", code=None)
    assert not any(b"Kovalenko" in p.read_bytes() for p in home.rglob("*") if p.is_file())
