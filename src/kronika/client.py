"""A Python client of ``kronika serve`` with the method names of :class:`kronika.Memory`.

Moving code from in-process memory to a server is one line::

    memory = build_memory(load_settings("./.kronika"))               # in process
    memory = Client("http://127.0.0.1:8765", api_key="kro_…")         # over HTTP

    memory.remember("prefiere TypeScript", key="preferencia")
    for hit in memory.recall("what language does he like?", k=5).hits:
        print(hit.score.total, hit.item.content, hit.citation)

Every method returns what the same method of Memory returns:
:class:`~kronika.core.model.MemoryItem`, :class:`~kronika.core.model.RecallResult`,
:class:`~kronika.engine.write.WriteReceipt`, :class:`~kronika.engine.forgetting.ForgetReceipt`,
:class:`~kronika.engine.proposals.Proposal`, :class:`~kronika.ports.AuditEntry`. Two
things stay on the server: a receipt's ``paths`` (files of the server's store) are
empty, and a forget receipt's ``phrases`` (the forgotten text) are not sent back. What
Memory takes from its caller and a server takes from the key (``source_agent``,
``reader``) is not a parameter here. The server's errors come back as
the same :class:`~kronika.errors.KronikaError` subclasses (a refused key as
:class:`ClientAuthError`, a server fault as :class:`ServerError`). Standard library
only: no extra to install.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any, Self, TypeVar

from kronika import errors, wire
from kronika.core.lessons import Evaluation
from kronika.core.model import MemoryItem, RecallResult
from kronika.core.query import Mode, RecallQuery
from kronika.engine import learning
from kronika.engine.forgetting import ForgetReceipt
from kronika.engine.proposals import Proposal
from kronika.engine.write import SavedTurn, WriteReceipt
from kronika.ports import AuditEntry

T = TypeVar("T")


class ClientAuthError(errors.PermissionDenied):
    """The server refused the API key (missing, unknown or revoked: HTTP 401)."""


class ServerError(errors.KronikaError):
    """The server could not answer (HTTP 5xx, 429, or it could not be reached)."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


_BY_STATUS: dict[int, type[errors.KronikaError]] = {
    401: ClientAuthError,
    403: errors.PermissionDenied,
    404: errors.NotFound,
    422: errors.InvalidInput,
}


def _error(status: int, body: dict[str, Any]) -> errors.KronikaError:
    name = str(body.get("error", ""))
    message = str(body.get("message", "")) or f"HTTP {status}"
    if status == 401:
        return ClientAuthError(message)
    if status >= 500 or status in (413, 429):
        return ServerError(message, status=status)
    found = getattr(errors, name, None)
    if (
        isinstance(found, type)
        and issubclass(found, errors.KronikaError)
        and found is not errors.UnknownAgent  # its constructor takes the agent list
        and found is not errors.CorruptFileError
    ):
        return found(message)
    if name == "UnknownAgent":
        return errors.AgentError(message)
    return _BY_STATUS.get(status, errors.KronikaError)(message)


def _clean(values: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in values.items() if v is not None}


def _turns_body(turns: Iterable[Mapping[str, Any] | Sequence[str]]) -> list[dict[str, Any]]:
    """The turns of :meth:`Client.save_turns` as the request carries them (a pair as its
    speaker and content, a time as ISO 8601 text); the server checks the rest."""
    if isinstance(turns, str | bytes | Mapping) or not isinstance(turns, Iterable):
        raise errors.InvalidInput(
            "save_turns takes a list of turns (mappings of speaker and content, or"
            f" (speaker, content) pairs), not one {type(turns).__name__}:"
            " save_turn() saves a single turn"
        )
    sent: list[dict[str, Any]] = []
    for turn in turns:
        if isinstance(turn, Mapping):
            fields = dict(turn)
        elif isinstance(turn, list | tuple) and len(turn) == 2:
            fields = {"speaker": turn[0], "content": turn[1]}
        else:
            raise errors.InvalidInput(
                f"turn {len(sent) + 1}: a turn is a mapping of speaker and content (and"
                f" optionally at, turn_id) or a (speaker, content) pair, not {type(turn).__name__}"
            )
        at = fields.get("at")
        if isinstance(at, datetime):
            fields["at"] = at.isoformat()
        sent.append(_clean(fields))
    return sent


def _read(read: Callable[[Any], T], data: Any) -> T:
    """``data`` read back by one of :mod:`kronika.wire`'s ``*_from_json`` functions; an
    answer that is not what the server sends is a :class:`ServerError`, not a KeyError."""
    try:
        return read(data)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ServerError(f"the server's answer cannot be read ({exc!r})") from exc


class Client:
    """One server, one API key; ``agent`` is used where a call names none (else the
    key's own agent, else ``default``)."""

    def __init__(
        self,
        base_url: str,
        api_key: str,
        *,
        agent: str | None = None,
        user: str | None = None,
        channel: str | None = None,
        timeout: float = 30.0,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self._headers = {"Authorization": f"Bearer {api_key}", "Accept": "application/json"}
        if user:
            self._headers["X-Kronika-User"] = user
        if channel:
            self._headers["X-Kronika-Channel"] = channel
        self._agent = agent

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Nothing to release (one connection per call); here so code written for
        :class:`~kronika.Memory` runs unchanged."""

    # ------------------------------------------------------------------ transport
    def _call(
        self,
        method: str,
        path: str,
        body: dict[str, Any] | None = None,
        query: dict[str, Any] | None = None,
    ) -> Any:
        url = self.base_url + path
        if query:
            url += "?" + urllib.parse.urlencode(_clean(query), doseq=True)
        data = json.dumps(body, default=str).encode("utf-8") if body is not None else None
        headers = dict(self._headers)
        if data is not None:
            headers["Content-Type"] = "application/json"
        request = urllib.request.Request(url, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                return json.loads(response.read() or b"null")
        except urllib.error.HTTPError as exc:
            with exc:
                raw = exc.read()
            try:
                answer = json.loads(raw)
            except ValueError:
                answer = {"message": raw.decode("utf-8", "replace")[:500]}
            raise _error(exc.code, answer if isinstance(answer, dict) else {}) from None
        except (urllib.error.URLError, OSError) as exc:
            raise ServerError(f"the server at {self.base_url} cannot be reached: {exc}") from exc

    def _name(self, agent: str | None) -> str:
        if agent:
            return urllib.parse.quote(agent, safe="")
        if self._agent is None:
            me = self._call("GET", "/v1/me")
            self._agent = str(me.get("agent") or "default")
        return urllib.parse.quote(self._agent, safe="")

    # --------------------------------------------------------------------- writes
    def remember(
        self,
        content: str | None = None,
        *,
        key: str | None = None,
        value: str | None = None,
        agent: str | None = None,
        section: str | None = None,
        source: str = "explicit",
        multi: bool = False,
        importance: float | None = None,
        entities: Sequence[str] = (),
        tags: Sequence[str] = (),
        scope: str | None = None,
        channel: str | None = None,
    ) -> WriteReceipt:
        body = _clean(
            {
                "content": content,
                "key": key,
                "value": value,
                "section": section,
                "source": str(source),
                "multi": multi,
                "importance": importance,
                "entities": list(entities),
                "tags": list(tags),
                "scope": str(scope) if scope else None,
                "channel": channel,
            }
        )
        path = f"/v1/agents/{self._name(agent)}/memories"
        return _read(wire.write_receipt_from_json, self._call("POST", path, body))

    def note(
        self,
        text: str,
        *,
        agent: str | None = None,
        kind: str | None = None,
        confidence: float | None = None,
        scope: str | None = None,
        channel: str | None = None,
        tags: Sequence[str] = (),
    ) -> WriteReceipt:
        body = _clean(
            {
                "text": text,
                "kind": str(kind) if kind else None,
                "confidence": confidence,
                "tags": list(tags),
                "scope": str(scope) if scope else None,
                "channel": channel,
            }
        )
        path = f"/v1/agents/{self._name(agent)}/notes"
        return _read(wire.write_receipt_from_json, self._call("POST", path, body))

    def record_outcome(
        self,
        task: str,
        action: str,
        evaluation: Evaluation | None = None,
        *,
        ok: bool | None = None,
        reasons: Sequence[str] = (),
        agent: str | None = None,
        served: Sequence[str] | None = None,
        scope: str | None = None,
        channel: str | None = None,
    ) -> learning.OutcomeReport:
        """How an action went; a failure becomes a lesson for the caller's audience.
        Judge it here (e.g. ``kronika.core.lessons.exit_code``) or give ``ok``."""
        body = _clean(
            {
                "task": task,
                "action": action,
                "evaluation": evaluation.as_dict() if evaluation is not None else None,
                "ok": ok,
                "reasons": list(reasons),
                "served": list(served) if served is not None else None,
                "scope": str(scope) if scope else None,
                "channel": channel,
            }
        )
        path = f"/v1/agents/{self._name(agent)}/outcomes"
        return _read(learning.OutcomeReport.from_dict, self._call("POST", path, body))

    def forget(
        self,
        item_id: str | None = None,
        *,
        key: str | None = None,
        value: str | None = None,
        topic: str | None = None,
        agent: str | None = None,
        dry_run: bool = False,
    ) -> ForgetReceipt:
        body = _clean({"id": item_id, "key": key, "value": value, "topic": topic})
        if dry_run:
            body["dry_run"] = True
        path = f"/v1/agents/{self._name(agent)}/forget"
        return _read(wire.forget_receipt_from_json, self._call("POST", path, body))

    def save_turn(
        self,
        session_id: str,
        speaker: str,
        content: str,
        *,
        agent: str | None = None,
        at: datetime | None = None,
        turn_id: str | None = None,
        scope: str | None = None,
        channel: str | None = None,
    ) -> SavedTurn:
        sid = urllib.parse.quote(session_id, safe="")
        body = _clean(
            {
                "speaker": speaker,
                "content": content,
                "at": at.isoformat() if at else None,
                "turn_id": turn_id,
                "scope": str(scope) if scope else None,
                "channel": channel,
            }
        )
        path = f"/v1/agents/{self._name(agent)}/sessions/{sid}/turns"
        return _read(wire.turn_receipt_from_json, self._call("POST", path, body))

    def save_turns(
        self,
        session_id: str,
        turns: Iterable[Mapping[str, Any] | Sequence[str]],
        *,
        agent: str | None = None,
        scope: str | None = None,
        channel: str | None = None,
    ) -> list[SavedTurn]:
        sid = urllib.parse.quote(session_id, safe="")
        body = _clean({"turns": _turns_body(turns), "scope": str(scope) if scope else None,
                       "channel": channel})  # fmt: skip
        path = f"/v1/agents/{self._name(agent)}/sessions/{sid}/turns/batch"
        return _read(wire.turn_receipts_from_json, self._call("POST", path, body))

    def approve(self, proposal_id: str, agent: str | None = None) -> WriteReceipt:
        pid = urllib.parse.quote(proposal_id, safe="")
        path = f"/v1/agents/{self._name(agent)}/proposals/{pid}/approve"
        return _read(
            lambda d: wire.write_receipt_from_json(d["approved"]), self._call("POST", path)
        )

    def reject(self, proposal_id: str, agent: str | None = None) -> Proposal:
        pid = urllib.parse.quote(proposal_id, safe="")
        path = f"/v1/agents/{self._name(agent)}/proposals/{pid}/reject"
        return _read(lambda d: wire.proposal_from_json(d["rejected"]), self._call("POST", path))

    def create_agent(self, agent: str) -> None:
        self._call("POST", "/v1/agents", {"name": agent})

    def import_export(self, document: dict[str, Any], *, replace: bool = False) -> dict[str, Any]:
        return dict(self._call("POST", "/v1/import", {"document": document, "replace": replace}))

    def distill(self, *, agent: str | None = None, days: int = 7) -> dict[str, Any]:
        """Start distilling the agent's sessions; returns the job (see :meth:`job`)."""
        return dict(self._call("POST", f"/v1/agents/{self._name(agent)}/distill", {"days": days}))

    def run_job(
        self,
        job: str,
        *,
        agent: str | None = None,
        days: int = 7,
        mode: str = "full",
        clear: bool | None = None,
    ) -> dict[str, Any]:
        """Start a memory job (decay, reflect, dream, summarize, distill), as ``kronika
        jobs run`` does; returns the job (see :meth:`job`)."""
        path = f"/v1/agents/{self._name(agent)}/jobs/{urllib.parse.quote(job, safe='')}"
        return dict(self._call("POST", path, _clean({"days": days, "mode": mode, "clear": clear})))

    # ---------------------------------------------------------------------- reads
    def recall(
        self,
        query: str | RecallQuery,
        *,
        agent: str | None = None,
        all_agents: bool = False,
        k: int | None = None,
        mode: Mode = "hybrid",
        since: str | datetime | None = None,
        until: str | datetime | None = None,
        as_of: str | datetime | None = None,
        types: Sequence[str] = (),
        keys: Sequence[str] = (),
        entities: Sequence[str] = (),
        speakers: Sequence[str] = (),
        scopes: Sequence[str] = (),
        channel: str | None = None,
        include_superseded: bool = False,
        budget_tokens: int | None = None,
        record_access: bool = True,
    ) -> RecallResult:
        """As :meth:`kronika.Memory.recall`: the text and its options as keywords, or a
        whole :class:`~kronika.core.query.RecallQuery` (checked here, before it is sent)."""
        asked = RecallQuery.from_call(query, locals())
        body = {**_clean(asked.as_json()), "explain": True}
        path = f"/v1/agents/{self._name(body.pop('agent', None))}/recall"  # named in the path
        return _read(wire.recall_from_json, self._call("POST", path, body))

    def get(self, item_id: str, *, agent: str | None = None) -> MemoryItem:
        iid = urllib.parse.quote(item_id, safe="")
        path = f"/v1/agents/{self._name(agent)}/memories/{iid}"
        return _read(wire.item_from_json, self._call("GET", path))

    def items(
        self,
        *,
        agent: str | None = None,
        types: Sequence[str] = (),
        include_superseded: bool = False,
        limit: int | None = None,
        offset: int = 0,
    ) -> list[MemoryItem]:
        query = {
            "type": [str(t) for t in types] or None,
            "include_superseded": str(include_superseded).lower(),
            "limit": limit or 1000,
            "offset": offset,
        }
        found = self._call("GET", f"/v1/agents/{self._name(agent)}/memories", query=query)
        return _read(lambda d: wire.items_from_json(d["items"]), found)

    def history(self, key: str, *, agent: str | None = None) -> list[MemoryItem]:
        path = f"/v1/agents/{self._name(agent)}/history"
        found = self._call("GET", path, query={"key": key})
        return _read(lambda d: wire.items_from_json(d["values"]), found)

    def facts(self, *, agent: str | None = None, include_archived: bool = True) -> list[MemoryItem]:
        query = {"include_archived": str(include_archived).lower()}
        found = self._call("GET", f"/v1/agents/{self._name(agent)}/facts", query=query)
        return _read(lambda d: wire.items_from_json(d["facts"]), found)

    def brain(self, *, agent: str | None = None) -> str:
        return str(self._call("GET", f"/v1/agents/{self._name(agent)}/brain")["brain"])

    def format_for_prompt(self, *, agent: str | None = None, query: str | None = None) -> str:
        path = f"/v1/agents/{self._name(agent)}/prompt"
        return str(self._call("GET", path, query={"query": query})["block"])

    def wake(self, *, agent: str | None = None) -> dict[str, Any]:
        """Identity, the ``<memory>`` block and the Active Context, within budgets."""
        return dict(self._call("GET", f"/v1/agents/{self._name(agent)}/wake"))

    def load_session(self, session_id: str, *, agent: str | None = None) -> list[MemoryItem]:
        sid = urllib.parse.quote(session_id, safe="")
        found = self._call("GET", f"/v1/agents/{self._name(agent)}/sessions/{sid}")
        return _read(lambda d: wire.items_from_json(d["turns"]), found)

    def proposals(self, agent: str | None = None) -> list[Proposal]:
        found = self._call("GET", f"/v1/agents/{self._name(agent)}/proposals")
        return _read(lambda d: [wire.proposal_from_json(p) for p in d["proposals"]], found)

    def audit(self, *, agent: str | None = None, limit: int | None = None) -> list[AuditEntry]:
        path = f"/v1/agents/{self._name(agent)}/audit" if agent else "/v1/audit"
        found = self._call("GET", path, query={"limit": limit})
        return _read(lambda d: wire.audit_from_json(d["entries"]), found)

    def agents(self) -> list[str]:
        return [str(a) for a in self._call("GET", "/v1/agents")["agents"]]

    def count(self, *, agent: str | None = None) -> int:
        name = urllib.parse.unquote(self._name(agent))
        return int(self.stats()["agents"].get(name, 0))

    def stats(self) -> dict[str, Any]:
        return dict(self._call("GET", "/v1/stats"))

    def export(self, agent: str | None = None) -> dict[str, Any]:
        return dict(self._call("GET", "/v1/export", query={"agent": agent}))

    def job(self, job_id: str) -> dict[str, Any]:
        return dict(self._call("GET", f"/v1/jobs/{urllib.parse.quote(job_id, safe='')}"))
