"""The real CLI with a secret in a field other than the text: a channel or a session id
(from an imported chat log) holding one is refused with a clear message, and no file
of the workspace — nor its name — holds it."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

KEY = "sk-proj-Q3x9vTz81LmNpR4sWuY7aBcD0eFgHiJk"


def everything(home: Path) -> bytes:
    names = "\n".join(str(p) for p in home.rglob("*")).encode()
    return names + b"".join(p.read_bytes() for p in sorted(home.rglob("*")) if p.is_file())


def test_a_secret_channel_or_session_id_is_refused(run: Callable[..., str], tmp_path: Path) -> None:
    run("init")
    err = run("remember", "likes", "tea", "--scope", "channel", "--channel", KEY, code=2)
    assert "channel name holds a secret (openai-key)" in err and KEY not in err
    log = tmp_path / "chat.jsonl"
    turns = [{"session": KEY, "role": "user", "content": "hi", "at": "2025-01-02T10:00:00Z"}]
    log.write_text("\n".join(json.dumps(t) for t in turns) + "\n", encoding="utf-8")
    err = run("import", "jsonl", str(log), code=2)
    assert "session id holds a secret (openai-key)" in err and KEY not in err
    assert "Traceback" not in err
    assert KEY.encode() not in everything(tmp_path / "ws")
