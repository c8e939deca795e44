"""kronika — long-term memory for LLM agents.

Markdown files are the truth, a derived SQLite index makes recall fast, and
everything runs offline::

    from kronika import build_memory, load_settings

    with build_memory(load_settings("./.kronika"), create=True) as memory:
        memory.remember("prefiere TypeScript", key="preferencia")
        for hit in memory.recall("what language does he like?", k=5).hits:
            print(hit.score.total, hit.item.content, hit.citation)
"""

import sys
import warnings
from importlib import import_module
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from importlib.abc import Loader

    from kronika.app import build_llm, build_memory, init_workspace, read_usage
    from kronika.core.lessons import Evaluation, exit_code
    from kronika.core.model import (
        ItemType,
        Layer,
        MemoryItem,
        Provenance,
        RecallFilter,
        RecallHit,
        RecallResult,
        RetainKind,
        Scope,
        SessionRecord,
        Source,
        Status,
        Tier,
        TurnRecord,
    )
    from kronika.core.query import Mode, RecallQuery
    from kronika.engine.changes import WriteEntityPage, WriteSummary
    from kronika.engine.forgetting import ForgetReceipt
    from kronika.engine.learning import evaluate_with_model
    from kronika.engine.redacting import ForgetPlace
    from kronika.engine.write import WriteReceipt
    from kronika.errors import InvalidInput, KronikaError, LLMError, NotFound
    from kronika.memory import ImportReport, Memory
    from kronika.ports import LLM, Embedder, Vector
    from kronika.providers.embedders import build_embedder
    from kronika.settings import SETTINGS_TABLE, Settings, load_settings
    from kronika.workflows.charts import recall_entries
    from kronika.workflows.chat import ChatAgent
    from kronika.workflows.consolidate import Consolidator
    from kronika.workflows.jobs import run_job
    from kronika.workflows.portability import export_memory, import_export
    from kronika.workflows.session import Session, extract_from_conversation
    from kronika.workflows.tools import TOOLS, call_tool

_HOMES = {
    "build_llm": "kronika.app",
    "build_memory": "kronika.app",
    "init_workspace": "kronika.app",
    "read_usage": "kronika.app",
    "Evaluation": "kronika.core.lessons",
    "exit_code": "kronika.core.lessons",
    "ItemType": "kronika.core.model",
    "Layer": "kronika.core.model",
    "MemoryItem": "kronika.core.model",
    "Provenance": "kronika.core.model",
    "RecallFilter": "kronika.core.model",
    "RecallHit": "kronika.core.model",
    "RecallResult": "kronika.core.model",
    "RetainKind": "kronika.core.model",
    "Scope": "kronika.core.model",
    "SessionRecord": "kronika.core.model",
    "Source": "kronika.core.model",
    "Status": "kronika.core.model",
    "Tier": "kronika.core.model",
    "TurnRecord": "kronika.core.model",
    "Mode": "kronika.core.query",
    "RecallQuery": "kronika.core.query",
    "WriteEntityPage": "kronika.engine.changes",
    "WriteSummary": "kronika.engine.changes",
    "ForgetReceipt": "kronika.engine.forgetting",
    "evaluate_with_model": "kronika.engine.learning",
    "ForgetPlace": "kronika.engine.redacting",
    "WriteReceipt": "kronika.engine.write",
    "InvalidInput": "kronika.errors",
    "KronikaError": "kronika.errors",
    "LLMError": "kronika.errors",
    "NotFound": "kronika.errors",
    "ImportReport": "kronika.memory",
    "Memory": "kronika.memory",
    "Embedder": "kronika.ports",
    "LLM": "kronika.ports",
    "Vector": "kronika.ports",
    "build_embedder": "kronika.providers.embedders",
    "SETTINGS_TABLE": "kronika.settings",
    "Settings": "kronika.settings",
    "load_settings": "kronika.settings",
    "recall_entries": "kronika.workflows.charts",
    "ChatAgent": "kronika.workflows.chat",
    "Consolidator": "kronika.workflows.consolidate",
    "run_job": "kronika.workflows.jobs",
    "export_memory": "kronika.workflows.portability",
    "import_export": "kronika.workflows.portability",
    "Session": "kronika.workflows.session",
    "extract_from_conversation": "kronika.workflows.session",
    "TOOLS": "kronika.workflows.tools",
    "call_tool": "kronika.workflows.tools",
}
"""Where each public name lives. They load when first asked for, not with ``import
kronika``: a program that needs one submodule (the command line printing its help, a
server worker) does not pay for the rest."""


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'kronika' has no attribute {name!r}")
    value = getattr(import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_HOMES])


MOVED = {
    "kronika.engine.charts": "kronika.workflows.charts",
    "kronika.engine.chat": "kronika.workflows.chat",
    "kronika.engine.consolidate": "kronika.workflows.consolidate",
    "kronika.engine.portability": "kronika.workflows.portability",
    "kronika.engine.session": "kronika.workflows.session",
    "kronika.engine.sync": "kronika.engine.indexer",
    "kronika.engine.tools": "kronika.workflows.tools",
    "kronika.memory.context": "kronika.workflows.context",
    "kronika.stores.markdown.brain": "kronika.stores.markdown.facts.brain",
}
"""Old import paths the docs taught, of modules that moved (up to ``kronika.workflows``,
or into a package of their own: the indexer, the fact files):
for a release, importing one gives the module's names with a ``DeprecationWarning`` at
the importing line. No file stands at an old path (so no lower floor imports a higher
one): the finder below answers for them, after every other finder has passed."""


class _Moved:
    """Finder and loader of the :data:`MOVED` paths (the protocol of
    :mod:`importlib.abc`, without importing it: ``kronika --help`` loads nothing)."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname not in MOVED:
            return None
        from importlib.machinery import ModuleSpec

        return ModuleSpec(fullname, cast("Loader", self))

    def create_module(self, spec: Any) -> None:
        return None  # the default module, filled by exec_module

    def exec_module(self, module: Any) -> None:
        new = MOVED[module.__name__]
        moved = import_module(new)
        names = list(getattr(moved, "__all__", [n for n in vars(moved) if n[0] != "_"]))
        module.__dict__.update({name: getattr(moved, name) for name in names})
        module.__all__ = names
        module.__doc__ = f"Deprecated alias of :mod:`{new}`."
        warnings.warn(
            f"{module.__name__} is deprecated: import from {new}", DeprecationWarning, stacklevel=2
        )


if not any(isinstance(finder, _Moved) for finder in sys.meta_path):
    sys.meta_path.append(_Moved())


__all__ = [
    "ChatAgent",
    "Consolidator",
    "Embedder",
    "Evaluation",
    "ForgetPlace",
    "ForgetReceipt",
    "ImportReport",
    "InvalidInput",
    "ItemType",
    "KronikaError",
    "LLM",
    "LLMError",
    "Layer",
    "Memory",
    "MemoryItem",
    "Mode",
    "NotFound",
    "Provenance",
    "RecallFilter",
    "RecallHit",
    "RecallQuery",
    "RecallResult",
    "RetainKind",
    "SETTINGS_TABLE",
    "Scope",
    "Session",
    "SessionRecord",
    "Settings",
    "Source",
    "Status",
    "TOOLS",
    "Tier",
    "TurnRecord",
    "Vector",
    "WriteEntityPage",
    "WriteReceipt",
    "WriteSummary",
    "build_embedder",
    "build_llm",
    "build_memory",
    "call_tool",
    "evaluate_with_model",
    "exit_code",
    "export_memory",
    "extract_from_conversation",
    "import_export",
    "init_workspace",
    "load_settings",
    "read_usage",
    "recall_entries",
    "run_job",
]
