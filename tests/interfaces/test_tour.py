"""The README tour, end to end: the installed console script, the real local embedder,
a real workspace, no network."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

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


ROOT = Path(__file__).parents[2]


def tour_commands() -> list[str]:
    """The command lines of the README's tour block, exactly as written there."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    tour = readme[readme.index("## A 5-minute tour") :]
    block = re.search(r"```bash\n(.*?)```", tour, re.S)
    assert block is not None, "the README's tour has no bash block"
    return [line for line in block.group(1).splitlines() if line.strip()]


def test_readme_tour_runs_as_written_in_an_empty_folder(tmp_path: Path) -> None:
    """Each line of the tour, through a shell, in a folder holding nothing else: the
    installed console script, the real local embedder, no network, no KRONIKA_ settings."""
    guard = tmp_path / "guard"
    guard.mkdir()
    (guard / "sitecustomize.py").write_text(NO_NETWORK)
    folder = tmp_path / "new-user"
    folder.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("KRONIKA_")}
    env["PYTHONPATH"] = str(guard)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    said: dict[str, str] = {}
    for line in tour_commands():
        done = subprocess.run(
            ["bash", "-e", "-o", "pipefail", "-c", line],
            env=env,
            cwd=folder,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, f"README tour: {line}\n{done.stderr}"
        assert "Traceback" not in done.stderr, line
        said[line.split("#")[0].strip()] = done.stdout
    assert set(os.listdir(folder)) == {".kronika", "backup.json"}

    def output(start: str) -> str:
        return next(out for line, out in said.items() if line.startswith(start))

    assert "prefiere TypeScript" in output('kronika recall "what language')
    assert "Lucas" in output("kronika show brain")
    cello = output('kronika recall "when did Maja start the cello?"')
    first_hit = cello[cello.index("│ 1 ") : cello.index("│ 2 ")]
    assert "signed up for cello" in " ".join(first_hit.replace("│", " ").split())
    assert "2025-04" not in cello and "2025-05" not in cello  # --since/--until March
    assert "planner" in said["kronika agents"]
    backup = json.loads((folder / "backup.json").read_text())
    assert set(backup["agents"]) == {"default", "planner"}
    brain = backup["agents"]["default"]["files"]["brain.md"]
    assert "Lucas" in brain and "TypeScript" not in brain  # forgotten before the export
    assert "the launch moved to Friday" in backup["agents"]["planner"]["files"]["brain.md"]
    sessions = backup["agents"]["default"]["files"]
    assert any("Pixel" in text for name, text in sessions.items() if name.startswith("sessions/"))


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
