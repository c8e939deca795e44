"""Benchmark reports: ``<out>/<name>.json`` and ``<out>/<name>.md`` side by side.

Both carry the machine (CPU model, cores, RAM), the versions of Python, numpy,
SQLite and kronika, the embedding model, the settings, the date, and the tables a
benchmark put in ``results["tables"]`` (``{"title", "columns", "rows"}``).
"""

from __future__ import annotations

import json
import os
import platform
import sqlite3
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from kronika import KronikaError


def table(title: str, columns: list[str], rows: list[list[str]]) -> dict[str, Any]:
    """A results table: every cell is already formatted text."""
    return {"title": title, "columns": columns, "rows": rows}


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _ram_gib() -> float | None:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 1024**3
    except (ValueError, OSError, AttributeError):
        return None


def _version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def environment() -> dict[str, Any]:
    """The machine and the software versions a result was measured with."""
    ram = _ram_gib()
    return {
        "cpu": _cpu_model(),
        "cores": os.cpu_count(),
        "ram_gib": round(ram, 1) if ram is not None else None,
        "platform": platform.platform(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "sqlite": sqlite3.sqlite_version,
        "kronika": _version("kronika"),
    }


def headline(results: dict[str, Any]) -> dict[str, float]:
    """The benchmark's headline figures as flat keys (``"recall@5"``, ``"recall_all@10"``…)."""
    return {str(k): float(v) for k, v in results.get("headline", {}).items()}


def render_markdown(name: str, results: dict[str, Any]) -> str:
    """The Markdown report of one benchmark run."""
    env = results.get("environment") or environment()
    lines = [f"# {name}", ""]
    lines.append(f"- date: {results.get('date', '')}")
    lines.append(f"- dataset: `{results.get('dataset', 'synthetic')}`")
    lines.append(f"- embedder: `{results.get('embedder')}`")
    ram = f"{env['ram_gib']} GiB RAM" if env.get("ram_gib") is not None else "RAM unknown"
    lines.append(f"- machine: {env['cpu']}, {env['cores']} cores, {ram} ({env['platform']})")
    lines.append(
        f"- versions: Python {env['python']}, numpy {env['numpy']}, SQLite {env['sqlite']}, "
        f"kronika {env['kronika']}"
    )
    lines.append("")
    for tbl in results.get("tables", []):
        lines += [f"## {tbl['title']}", ""]
        lines.append("| " + " | ".join(tbl["columns"]) + " |")
        lines.append("| " + " | ".join("---" for _ in tbl["columns"]) + " |")
        lines += ["| " + " | ".join(row) + " |" for row in tbl["rows"]]
        lines.append("")
    flat = headline(results)
    if flat:
        lines += ["## Headline", ""]
        lines += [f"- `{key}` = {value:.3f}" for key, value in flat.items()]
        lines.append("")
    lines += ["## Settings", "", "```json", json.dumps(results.get("settings", {}), indent=2)]
    lines += ["```", ""]
    return "\n".join(lines)


def write_report(name: str, results: dict[str, Any], out_dir: str | Path) -> tuple[Path, Path]:
    """Write ``<out_dir>/<name>.json`` and ``.md``; returns both paths.

    The environment and the date are added to the results when they are missing.
    """
    out = Path(out_dir)
    full = dict(results)
    full.setdefault("environment", environment())
    full.setdefault("date", datetime.now(UTC).isoformat(timespec="seconds"))
    json_path, md_path = out / f"{name}.json", out / f"{name}.md"
    try:
        out.mkdir(parents=True, exist_ok=True)
        json_path.write_text(json.dumps(full, indent=2, default=str) + "\n", encoding="utf-8")
        md_path.write_text(render_markdown(name, full), encoding="utf-8")
    except OSError as exc:
        raise KronikaError(f"cannot write the report to {out}: {exc}") from exc
    return json_path, md_path
