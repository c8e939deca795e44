"""Every error kronika raises on purpose.

::

    KronikaError
    ├── ConfigError              a setting has a bad value, or the config file cannot be read
    ├── WorkspaceError           the Markdown workspace cannot be used
    │   ├── WorkspaceNotFound    no workspace at that path (run `kronika init`)
    │   └── CorruptFileError     a Markdown file could not be parsed (a copy is kept aside)
    ├── AgentError
    │   ├── InvalidAgentName     an agent name that is not a safe folder name
    │   └── UnknownAgent         no agent by that name in this workspace
    ├── NotFound                 no memory item / fact with that id or key
    ├── PermissionDenied         the write path refused (autonomy level, cross-agent grant)
    ├── IndexError_              the derived index is unusable (`kronika index rebuild` rebuilds it)
    │   └── CorruptIndexError    the index file is damaged (kronika moves it aside and rebuilds)
    ├── EmbedderError            the embedding model could not be loaded or run
    ├── InvalidQuery             a recall filter or time expression could not be understood
    ├── InvalidInput             a value to remember is empty, too long or malformed
    ├── ImportFormatError        an import file is not in the format it claims
    └── LLMError                 a chat model could not be used
        ├── LLMUnavailable       no model configured, or the server cannot be reached
        ├── LLMRequestError      the server refused the request (bad key, unknown model…)
        └── LLMOutputError       the reply could not be turned into valid output

Foreign exceptions (``sqlite3.Error``, ``OSError``, ``json.JSONDecodeError``…) are
translated at the boundary with ``raise X from exc`` so callers only ever need to
catch :class:`KronikaError`. The CLI maps each class to an exit code in one table.
"""

from __future__ import annotations


class KronikaError(Exception):
    """Base class of every error kronika raises on purpose."""


class ConfigError(KronikaError):
    """A setting has a bad value, or the configuration file cannot be read."""


class WorkspaceError(KronikaError):
    """The Markdown workspace cannot be used."""


class WorkspaceNotFound(WorkspaceError):
    """No kronika workspace at the given path."""


class CorruptFileError(WorkspaceError):
    """A Markdown file could not be parsed.

    ``path`` is the file, ``backup`` where a copy of it was kept (if one was made).
    """

    def __init__(self, message: str, *, path: str, backup: str | None = None) -> None:
        super().__init__(message)
        self.path = path
        self.backup = backup


class AgentError(KronikaError):
    """A problem with the agent named in a call."""


class InvalidAgentName(AgentError):
    """An agent name that is not a safe folder name."""


class UnknownAgent(AgentError):
    """No agent by that name in this workspace."""

    def __init__(self, agent: str, known: list[str] | None, *, for_key: bool = False) -> None:
        """``known``: the agents there are; with ``for_key``, the agents a server key may
        use (all it is told: whether an agent it may not use exists stays unsaid)."""
        listing = ", ".join(known) if known else "none yet"
        if for_key:
            hint = (
                f"or not one this key may use; agents this key may use: {listing};"
                " an admin key adds one with POST /v1/agents"
            )
        else:
            hint = f"agents in this workspace: {listing}; `kronika agents create NAME` adds one"
        super().__init__(f"unknown agent {agent!r} ({hint})")
        self.agent = agent
        self.known = known or []


class NotFound(KronikaError):
    """No memory item or fact with that id or key."""


class Conflict(KronikaError):
    """The name or thing asked for is taken (an agent that already exists)."""


class PermissionDenied(KronikaError):
    """The single write path refused a change (autonomy level or cross-agent grant)."""


class IndexError_(KronikaError):  # noqa: N801 - the builtin IndexError must stay usable
    """The derived index is unusable; it can always be rebuilt with ``kronika index rebuild``."""


class CorruptIndexError(IndexError_):
    """The index file is damaged. It is derived, so the cure is always the same: move
    it aside and rebuild it from the Markdown (``Memory.heal_index``)."""


class EmbedderError(KronikaError):
    """The embedding model could not be loaded or run."""


class InvalidQuery(KronikaError):
    """A recall filter or time expression could not be understood."""


class InvalidInput(KronikaError):
    """A value to remember is empty, too long or malformed."""


class ImportFormatError(KronikaError):
    """An import file is not in the format it claims."""


class LLMError(KronikaError):
    """A chat model could not be used."""


class LLMUnavailable(LLMError):
    """No model is configured, or the server could not be reached.

    Raised for refused connections, DNS failures and timeouts, and for HTTP 429 and
    5xx answers that persisted through every retry.
    """


class LLMBudgetExhausted(LLMUnavailable):
    """The agent spent its model calls or tokens for today (``llm_daily_calls``,
    ``llm_daily_tokens``): the work waits in the queue, like when no model answers."""


class LLMRequestError(LLMError):
    """The server refused the request (HTTP 400, 401, 403, 404…).

    ``status`` is the HTTP status. The message carries the server's own explanation;
    it never contains the API key.
    """

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class LLMOutputError(LLMError):
    """The model's reply could not be turned into valid output (not JSON, wrong shape…)."""


class RerankerError(KronikaError):
    """A reranker could not be used: the server refused the request or its answer was
    malformed. Recall then keeps its own order and says so in the result's notes."""


class RerankerUnavailable(RerankerError):
    """The reranker could not be reached, or kept failing, through every retry."""


class StoreError(KronikaError):
    """The store of record (PostgreSQL) cannot be reached or used, its schema is newer
    than this kronika, or the extra it needs is not installed."""


class StaleAppend(StoreError):
    """A document written to the store of record as an append (its added text alone)
    does not follow the body the record holds, or adds an item it already holds; the
    working copy then writes it whole. Never reaches a caller."""
