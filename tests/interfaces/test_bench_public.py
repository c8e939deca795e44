"""``kronika bench`` measures what a user gets: its modules reach kronika only through
the names ``kronika`` offers (its ``__all__``, see test_public_names.py), through
``kronika.testing`` (the part that measures an inner part on purpose,
:mod:`kronika.testing.parts`) and through bench's own modules.

Every import counts: at the top of a module, inside a function, under
``TYPE_CHECKING``, relative ones, and ``import kronika`` followed by
``kronika.<name>``.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import kronika
import kronika.testing

BENCH = Path(__file__).resolve().parents[2] / "src" / "kronika" / "bench"
PUBLIC = {"kronika": set(kronika.__all__), "kronika.testing": set(kronika.testing.__all__)}

STILL_INTERNAL: dict[tuple[str, str], str] = {
    ("kronika.bench.team_writes", "kronika.stores.markdown.facts.brain"): (
        "its measurement runs unchanged against another kronika tree (--before), which may"
        " predate kronika.testing.archive_document; it writes the archive file as setup"
    ),
    ("kronika.bench.team_writes", "kronika.stores.markdown.brain"): (
        "the same, for a tree from before the fact files had a package of their own"
    ),
}
"""``(bench module, imported module)`` pairs still reaching inside kronika, each with its
reason. The list may only shrink."""


@dataclass(frozen=True, slots=True)
class Use:
    """One thing a bench module takes from kronika: ``module`` and, for ``from … import``
    or ``kronika.<name>``, the ``name`` taken from it."""

    where: str
    line: int
    module: str
    name: str | None


def uses(source: str, module: str, *, package: bool = False) -> list[Use]:
    """Every use of ``kronika`` in ``source``, the text of module ``module``."""
    tree = ast.parse(source)
    home = module if package else module.rpartition(".")[0]
    found: list[Use] = []
    bound: set[str] = set()  # names `import kronika` made
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "kronika" or alias.name.startswith("kronika."):
                    found.append(Use(module, node.lineno, alias.name, None))
                    bound.add(alias.asname or alias.name.partition(".")[0])
        elif isinstance(node, ast.ImportFrom):
            origin = node.module or ""
            if node.level:
                base = home.split(".")[: len(home.split(".")) - node.level + 1]
                origin = ".".join(base + ([node.module] if node.module else []))
            if origin == "kronika" or origin.startswith("kronika."):
                for alias in node.names:
                    found.append(Use(module, node.lineno, origin, alias.name))
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in bound
        ):
            found.append(Use(module, node.lineno, "kronika", node.attr))
    return found


def problem(use: Use) -> str | None:
    """Why ``use`` reaches inside kronika (``None``: it does not)."""
    if use.module == "kronika.bench" or use.module.startswith("kronika.bench."):
        return None
    if use.module not in PUBLIC:
        return f"imports {use.module}, not kronika or kronika.testing"
    if use.name is None or use.name in ("bench", "testing"):
        return None  # the package itself, or kronika.bench / kronika.testing through it
    if use.name.startswith("__") and use.name.endswith("__"):
        return None  # the module's own attributes (kronika.__file__)
    if use.name not in PUBLIC[use.module]:
        return f"takes {use.name} from {use.module}, which does not offer it (__all__)"
    return None


def bench_uses() -> list[Use]:
    found: list[Use] = []
    for path in sorted(BENCH.rglob("*.py")):
        parts = path.relative_to(BENCH.parent.parent).with_suffix("").parts
        package = parts[-1] == "__init__"
        name = ".".join(parts[:-1] if package else parts)
        found += uses(path.read_text(encoding="utf-8"), name, package=package)
    return found


def test_the_check_reads_imports_of_every_kind() -> None:
    source = (
        "from typing import TYPE_CHECKING\n"
        "from kronika import Memory\n"
        "from . import metrics\n"
        "from .report import table\n"
        "import kronika\n"
        "if TYPE_CHECKING:\n"
        "    from kronika.engine.write import WriteReceipt\n"
        "def run():\n"
        "    from kronika.stores.sqlite import SqliteIndex\n"
        "    import kronika.app\n"
        "    from kronika.testing import _LocalServer, HashingEmbedder\n"
        "    return kronika.build_memory, kronika.app\n"
    )
    found = uses(source, "kronika.bench.sample")
    problems = sorted(f"{u.line}: {p}" for u in found if (p := problem(u)) is not None)
    assert problems == [
        "10: imports kronika.app, not kronika or kronika.testing",
        "11: takes _LocalServer from kronika.testing, which does not offer it (__all__)",
        "12: takes app from kronika, which does not offer it (__all__)",
        "7: imports kronika.engine.write, not kronika or kronika.testing",
        "9: imports kronika.stores.sqlite, not kronika or kronika.testing",
    ]
    relative = {u.module for u in found if u.line in (3, 4)}
    assert relative == {"kronika.bench", "kronika.bench.report"}


def test_every_bench_module_is_read() -> None:
    modules = {use.where for use in bench_uses()}
    assert {"kronika.bench.locomo", "kronika.bench.memdata", "kronika.bench.serve"} <= modules
    assert len(modules) >= 20


def test_bench_reaches_kronika_only_through_its_public_names() -> None:
    found = [
        (use.where, use.module, use.line, why)
        for use in bench_uses()
        if (why := problem(use)) is not None
    ]
    allowed = [f for f in found if (f[0], f[1]) in STILL_INTERNAL]
    unexplained = [f for f in found if (f[0], f[1]) not in STILL_INTERNAL]
    assert not unexplained, "bench reaches inside kronika:\n" + "\n".join(
        f"{where}:{line} {why}" for where, _, line, why in unexplained
    )
    gone = set(STILL_INTERNAL) - {(f[0], f[1]) for f in allowed}
    assert not gone, f"no longer imported, take them off STILL_INTERNAL: {sorted(gone)}"
    assert all(reason.strip() for reason in STILL_INTERNAL.values())


def test_each_inner_part_kronika_testing_reaches_is_documented() -> None:
    from kronika.testing import parts

    assert set(parts.__all__) <= set(kronika.testing.__all__)
    for name in parts.__all__:
        assert name in (kronika.testing.__doc__ or ""), f"kronika.testing's docstring: {name}"
        assert name in (parts.__doc__ or ""), f"kronika.testing.parts' docstring: {name}"
        assert (getattr(parts, name).__doc__ or "").strip(), name
