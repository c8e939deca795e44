"""The command line run in process, as the CLI tests use it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from kronika.cli import main


@pytest.fixture
def run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> Callable[..., str]:
    """``run(*argv, code=0)``: ``kronika argv`` on a workspace of this test (the hashing
    embedder); asserts the exit code and returns standard output (standard error when
    the code is not 0)."""
    monkeypatch.setenv("KRONIKA_HOME", str(tmp_path / "ws"))
    monkeypatch.setenv("KRONIKA_EMBEDDER", "hashing")

    def _run(*argv: str, code: int = 0) -> str:
        got = main(list(argv))
        captured = capsys.readouterr()
        assert got == code, captured.err
        return captured.out if code == 0 else captured.err

    return _run
