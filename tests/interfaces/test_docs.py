"""Generated documentation stays current."""

from __future__ import annotations

from pathlib import Path

from kronika.settings import SETTINGS_TABLE, settings_markdown

ROOT = Path(__file__).parents[2]


def test_settings_doc_is_generated_from_the_table() -> None:
    assert (ROOT / "docs" / "settings.md").read_text() == settings_markdown(), (
        "docs/settings.md is stale: run scripts/gen-docs"
    )
    assert all(f"`{spec.name}`" in settings_markdown() for spec in SETTINGS_TABLE)


def test_readme_has_the_two_commands_and_ci_runs_the_test_one() -> None:
    readme = (ROOT / "README.md").read_text()
    assert "scripts/test" in readme
    assert "kronika init" in readme
    assert "scripts/test" in (ROOT / ".ci" / "run").read_text()


def test_settings_table_and_dataclass_agree() -> None:
    from dataclasses import fields

    from kronika.settings import GROUPS, Settings

    names = [f.name for _, _, group in GROUPS for f in fields(group)]
    assert sorted(names) == sorted(spec.name for spec in SETTINGS_TABLE)
    # one section per group, in the groups' order, each setting under its group's heading
    shown = settings_markdown()
    headings = [line[3:] for line in shown.splitlines() if line.startswith("## ")]
    assert headings[: len(GROUPS)] == [heading for heading, _, _ in GROUPS]
    for heading, _, group in GROUPS:
        section = shown.split(f"## {heading}\n", 1)[1].split("\n## ", 1)[0]
        rows = [line.split("`")[1] for line in section.splitlines() if line.startswith("| `")]
        assert rows == [f.name for f in fields(group)], heading
    # each default is written once, on its group's field, and the docs show that one
    shown = settings_markdown()
    defaults = Settings()
    for spec in SETTINGS_TABLE:
        assert f"| `{spec.name}` | `{getattr(defaults, spec.name)}` |" in shown, spec.name


def test_readme_python_example_runs(tmp_path: Path, monkeypatch: object) -> None:
    import re

    import pytest

    mp: pytest.MonkeyPatch = monkeypatch  # type: ignore[assignment]
    mp.chdir(tmp_path)
    mp.setenv("KRONIKA_EMBEDDER", "hashing")
    readme = (ROOT / "README.md").read_text()
    block = re.search(r"```python\n(.*?)```", readme, re.S)
    assert block is not None
    exec(compile(block.group(1), "README.md", "exec"), {})
    assert (tmp_path / ".kronika" / "agents" / "default" / "brain.md").is_file()


def test_every_doc_the_readme_links_exists() -> None:
    import re

    readme = (ROOT / "README.md").read_text()
    for target in re.findall(r"\]\((docs/[^)]+)\)", readme):
        path, _, anchor = target.partition("#")
        assert (ROOT / path).is_file(), target
        if anchor:  # a heading of that page, as GitHub makes its anchors
            headings = re.findall(r"^#+ (.+)$", (ROOT / path).read_text(), flags=re.M)
            anchors = {
                re.sub(r"[^\w\- ]", "", h).strip().lower().replace(" ", "-") for h in headings
            }
            assert anchor in anchors, target


def _anchors(page: Path) -> set[str]:
    """The anchors GitHub makes of a page's headings (a repeated heading gets -1, -2…)."""
    import re

    seen: dict[str, int] = {}
    out: set[str] = set()
    text = re.sub(r"```.*?```", "", page.read_text(), flags=re.S)
    for heading in re.findall(r"^#+ (.+)$", text, flags=re.M):
        slug = re.sub(r"[^\w\- ]", "", heading).strip().lower().replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        out.add(slug if n == 0 else f"{slug}-{n}")
    return out


def test_every_link_between_the_docs_finds_its_page_and_heading() -> None:
    import re

    broken = []
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        text = re.sub(r"```.*?```", "", page.read_text(), flags=re.S)
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target):
                continue  # a web address
            path, _, anchor = target.partition("#")
            linked = (page.parent / path) if path else page
            if path and not path.endswith(".md"):
                found = linked.exists()  # an image or a folder
            else:
                found = linked.is_file() and (not anchor or anchor in _anchors(linked))
            if not found:
                broken.append(f"{page.name}: {target}")
    assert not broken, "links to no page or heading:\n" + "\n".join(broken)


def test_prompts_doc_is_generated_from_the_prompt_modules() -> None:
    from kronika.prompts import ALL, prompts_markdown

    assert (ROOT / "docs" / "prompts.md").read_text() == prompts_markdown(), (
        "docs/prompts.md is stale: run scripts/gen-docs"
    )
    assert all(f"## {prompt.id}" in prompts_markdown() for prompt in ALL)


def test_python_api_settings_example_runs(tmp_path: Path) -> None:
    import re

    from kronika.settings import Settings, load_settings

    page = (ROOT / "docs" / "python-api.md").read_text(encoding="utf-8")
    blocks = [b for b in re.findall(r"```python\n(.*?)```", page, re.S) if "RecallGroup(" in b]
    assert len(blocks) == 1
    names: dict[str, object] = {"settings": load_settings(tmp_path, environ={})}
    exec(compile(blocks[0], "python-api.md", "exec"), names)  # warnings are errors here
    assert names["tuned"] == load_settings(tmp_path, environ={}, recall_k=5)
    assert names["built"] == Settings().with_overrides(recall_k=5)
