"""Background jobs the server starts (distillation): answered at once, run in order.

A job is ``queued`` until the one worker thread takes it, then ``running``, then

* ``done``: everything it had to do is done;
* ``waiting``: it did what it could without a language model and the rest waits,
  stored in the workspace (ended sessions stay queued there), for the next run;
* ``failed``: it met an error, named in ``message``.

Jobs are kept in this process only: a restart forgets the job records, never the
memory (what a job did is in the Markdown and the audit trail; what it did not do
stays queued in the workspace).
"""

from __future__ import annotations

import queue
import secrets
import threading
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from kronika.errors import KronikaError, NotFound

MAX_KEPT = 1000


@dataclass(frozen=True, slots=True)
class Job:
    id: str
    kind: str
    tenant: str
    agent: str
    params: dict[str, Any]
    status: str = "queued"
    created_at: str = ""
    started_at: str | None = None
    finished_at: str | None = None
    message: str = ""
    result: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind,
            "agent": self.agent,
            "params": dict(self.params),
            "status": self.status,
            "created_at": self.created_at,
            "started_at": self.started_at,
            "finished_at": self.finished_at,
            "message": self.message,
            "result": self.result,
        }


Work = Callable[[], tuple[str, str, dict[str, Any]]]
"""A job's body: returns (status, message, result)."""


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class JobBook:
    """The jobs of one server process and the thread that runs them, oldest first."""

    def __init__(self) -> None:
        self._jobs: dict[str, Job] = {}
        self._lock = threading.Lock()
        self._queue: queue.Queue[tuple[str, Work]] = queue.Queue()
        self._thread: threading.Thread | None = None

    def submit(self, kind: str, tenant: str, agent: str, params: dict[str, Any], work: Work) -> Job:
        job = Job(
            id=f"job-{secrets.token_hex(6)}",
            kind=kind,
            tenant=tenant,
            agent=agent,
            params=params,
            created_at=_now(),
        )
        with self._lock:
            self._jobs[job.id] = job
            while len(self._jobs) > MAX_KEPT:  # forget the oldest records, never a queued one
                oldest = next(iter(self._jobs))
                if self._jobs[oldest].status in ("queued", "running"):
                    break
                del self._jobs[oldest]
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="kronika-jobs", daemon=True)
                self._thread.start()
        self._queue.put((job.id, work))
        return job

    def get(self, job_id: str, tenant: str, agents: list[str] | None) -> Job:
        """The job, when it belongs to ``tenant`` (and one of ``agents`` unless None)."""
        with self._lock:
            job = self._jobs.get(job_id)
        if job is None or job.tenant != tenant or (agents is not None and job.agent not in agents):
            raise NotFound(f"no job {job_id!r}")
        return job

    def list(self, tenant: str, agents: list[str] | None) -> list[Job]:
        with self._lock:
            jobs = list(self._jobs.values())
        mine = [j for j in reversed(jobs) if j.tenant == tenant]
        return [j for j in mine if agents is None or j.agent in agents]

    def wait(self, timeout: float = 30.0) -> bool:
        """Until every job submitted so far has finished (False: ``timeout`` came first)."""
        with self._lock:
            if self._thread is None:
                return True
        done = threading.Event()

        def mark() -> tuple[str, str, dict[str, Any]]:
            done.set()
            return "", "", {}

        self._queue.put(("", mark))
        return done.wait(timeout)

    def _update(self, job_id: str, **changes: Any) -> None:
        with self._lock:
            if job_id in self._jobs:
                self._jobs[job_id] = replace(self._jobs[job_id], **changes)

    def _run(self) -> None:
        while True:
            job_id, work = self._queue.get()
            if not job_id:
                work()
                continue
            self._update(job_id, status="running", started_at=_now())
            try:
                status, message, result = work()
            except KronikaError as exc:
                status, message, result = "failed", str(exc), {}
            except Exception as exc:  # a bug must not stop the worker for every later job
                status, message, result = "failed", f"unexpected {type(exc).__name__}: {exc}", {}
            self._update(job_id, status=status, message=message, result=result, finished_at=_now())
