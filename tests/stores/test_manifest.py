"""A working copy's manifest (``record.json`` and its log): a save costs the documents
it changed, not every document of the tenant, and a read gives the manifest as it
stood after some save, never a mix of two."""

from __future__ import annotations

import shutil
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from kronika.stores.manifest import COMPACT_LINES, Documents, Entry, Key, Manifest, Saved


def _files(n: int, version: int = 0) -> dict[Key, Entry]:
    return {
        ("default", f"sessions/s{i:05d}.md"): Entry(1_000 + i, 10 * i + version, f"{i:064x}")
        for i in range(n)
    }


def _state(saved: Saved | None) -> tuple[int, dict[Key, Entry]] | None:
    return None if saved is None else (saved.change, saved.files)


def test_a_save_of_a_few_documents_leaves_the_whole_as_it_was(tmp_path: Path) -> None:
    path = tmp_path / "record.json"
    manifest = Manifest(path)
    files = _files(3_000)
    manifest.write(Saved(1, files, "boot-1", frozenset()), durable=False)
    whole = path.read_bytes()
    for change in range(2, 12):  # ten writes, each of one session and the Brain
        files[("default", f"sessions/s{change:05d}.md")] = Entry(9, change, "a" * 64)
        files[("default", "brain.md")] = Entry(change, change, "b" * 64)
        manifest.write(Saved(change, files, "boot-1", frozenset()), durable=False)
    assert path.read_bytes() == whole
    log = path.with_name("record.json.log").read_bytes()
    assert log.count(b"\n") == 10 and len(log) < len(whole) / 50
    # another reader (a process sharing the folder) sees the last save
    again = Manifest(path).read()
    assert again is not None and again.change == 11 and again.files == files
    assert again.boot == "boot-1" and again.fold == frozenset()


def test_the_whole_is_written_again_once_the_log_is_long(tmp_path: Path) -> None:
    path = tmp_path / "record.json"
    manifest = Manifest(path)
    files = _files(10)
    manifest.write(Saved(1, files, None, frozenset()), durable=False)
    for change in range(2, COMPACT_LINES + 3):
        files[("default", "brain.md")] = Entry(change, change, "b" * 64)
        manifest.write(Saved(change, files, None, frozenset()), durable=False)
    log = path.with_name("record.json.log")
    assert not log.exists() or log.read_bytes().count(b"\n") < COMPACT_LINES
    assert _state(Manifest(path).read()) == (COMPACT_LINES + 2, files)


def test_a_new_boot_agents_to_fold_or_a_durable_save_write_the_whole(tmp_path: Path) -> None:
    path = tmp_path / "record.json"
    manifest = Manifest(path)
    files = _files(5)
    manifest.write(Saved(1, files, "boot-1", frozenset()), durable=False)
    log = path.with_name("record.json.log")
    for change, boot, fold, durable in (
        (2, "boot-2", frozenset(), False),
        (3, "boot-2", frozenset({"default"}), False),
        (4, "boot-2", frozenset({"default"}), True),
    ):
        files[("default", "brain.md")] = Entry(change, change, "b" * 64)
        manifest.write(Saved(change, files, boot, fold), durable=durable)
        assert not log.exists()  # all of it in the whole
        read = Manifest(path).read()
        assert read is not None and (read.change, read.boot, read.fold) == (change, boot, fold)


def test_a_document_gone_is_named_nowhere_in_the_manifest(tmp_path: Path) -> None:
    path = tmp_path / "record.json"
    manifest = Manifest(path)
    files = _files(5)
    manifest.write(Saved(1, files, None, frozenset()), durable=False)
    gone = ("default", "sessions/s00003.md")
    files[gone] = Entry(7, 7, "d" * 64)  # a line of the log names its new version
    manifest.write(Saved(2, files, None, frozenset()), durable=False)
    assert b"d" * 64 in path.with_name("record.json.log").read_bytes()
    del files[gone]  # forgotten
    manifest.write(Saved(3, files, None, frozenset()), durable=False)
    assert not path.with_name("record.json.log").exists()
    assert b"s00003" not in path.read_bytes() and b"d" * 64 not in path.read_bytes()
    assert _state(Manifest(path).read()) == (3, files)


def test_a_save_after_another_process_wrote_writes_the_whole(tmp_path: Path) -> None:
    path = tmp_path / "record.json"
    mine, theirs = Manifest(path), Manifest(path)
    files = _files(5)
    mine.write(Saved(1, files, None, frozenset()), durable=False)
    assert theirs.read() is not None
    newer = {**files, ("default", "brain.md"): Entry(2, 2, "c" * 64)}
    theirs.write(Saved(2, newer, None, frozenset()), durable=False)
    # this process's view is older: what it saves is its own state, whole, as a save
    # always was, not a line on top of the other's
    mine.write(Saved(3, files, None, frozenset()), durable=False)
    assert _state(Manifest(path).read()) == (3, files)


def test_lines_of_an_earlier_whole_left_by_a_kill_are_passed_over(tmp_path: Path) -> None:
    path, log = tmp_path / "record.json", tmp_path / "record.json.log"
    manifest = Manifest(path)
    files = _files(5)
    manifest.write(Saved(1, files, None, frozenset()), durable=False)
    files[("default", "brain.md")] = Entry(2, 2, "b" * 64)
    manifest.write(Saved(2, files, None, frozenset()), durable=False)
    left = tmp_path / "left.log"
    shutil.copy2(log, left)
    manifest.write(Saved(3, files, "boot-2", frozenset()), durable=False)  # the whole again
    shutil.copy2(left, log)  # killed before the log was removed
    read = Manifest(path).read()
    assert read is not None and (read.change, read.files, read.boot) == (3, files, "boot-2")


saves = st.lists(
    st.tuples(
        st.dictionaries(st.integers(0, 40), st.integers(0, 5), max_size=6),  # set
        st.lists(st.integers(0, 40), max_size=3),  # removed
        st.booleans(),  # a durable save
    ),
    min_size=1,
    max_size=30,
)


@settings(max_examples=150, deadline=None)
@given(saves=saves, cut=st.floats(0.0, 1.0))
def test_a_log_cut_anywhere_reads_as_the_manifest_after_one_of_the_saves(
    tmp_path_factory: object, saves: list[tuple[dict[int, int], list[int], bool]], cut: float
) -> None:
    folder = tmp_path_factory.mktemp("manifest")  # type: ignore[attr-defined]
    path, log = folder / "record.json", folder / "record.json.log"
    manifest = Manifest(path)
    files = Documents()  # as a working copy keeps them: each save compares those touched
    states: list[tuple[int, dict[Key, Entry]]] = []
    for change, (changed, removed, durable) in enumerate(saves, 1):
        for n, version in changed.items():
            files[("a", f"f{n}.md")] = Entry(n, version, f"{n:x}")
        for n in removed:
            files.pop(("a", f"f{n}.md"), None)
        manifest.write(Saved(change, files, "boot", frozenset()), durable=durable)
        states.append((change, dict(files)))
    assert _state(Manifest(path).read()) == states[-1]
    if log.exists():  # a kill (or a crash of the machine) cut the log short
        raw = log.read_bytes()
        log.write_bytes(raw[: int(len(raw) * cut)])
    assert _state(Manifest(path).read()) in states


def test_documents_read_and_changed_in_place_save_what_changed_alone(tmp_path: Path) -> None:
    path = tmp_path / "record.json"
    Manifest(path).write(Saved(1, _files(400), None, frozenset()), durable=False)
    manifest = Manifest(path)
    saved = manifest.read()
    assert saved is not None and isinstance(saved.files, Documents)
    files = saved.files
    files[("default", "sessions/s00003.md")] = Entry(9, 9, "new")  # a push's document
    files[("default", "sessions/s00004.md")] = files[("default", "sessions/s00004.md")]
    manifest.write(Saved(2, files, None, frozenset()), durable=False)
    lines = path.with_name("record.json.log").read_text().splitlines()
    assert len(lines) == 1 and "s00003.md" in lines[0] and "s00004.md" not in lines[0]
    assert files.touched == set()
    files.update({("default", "sessions/s00005.md"): Entry(7, 7, "by update")})  # not noted
    assert files.touched is None
    manifest.write(Saved(3, files, None, frozenset()), durable=False)
    assert _state(Manifest(path).read()) == (3, dict(files))
