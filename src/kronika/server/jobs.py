"""Background jobs the server starts (distillation): answered at once, run in order.

A job is ``queued`` until the process's one job thread takes it, then ``running``,
then

* ``done``: everything it had to do is done;
* ``waiting``: it did what it could without a language model and the rest waits,
  stored in the workspace (ended sessions stay queued there), for the next run;
* ``failed``: it met an error, named in ``message``;
* ``interrupted``: the process that held it stopped (a crash, a restart) before it
  finished. What it did is kept (each step went through the write path) and what it
  did not do stays queued in the workspace: ``POST /v1/jobs/{id}/resume`` starts it
  again as a new job.

The records are stored (:mod:`kronika.server.jobstore`), so a job's status outlasts
the process and any worker process answers for any job. The process holding a job
renews its heartbeat every :data:`BEAT_S` seconds; a queued or running job whose
heartbeat is older than ``stale_after_s``, or whose process on this host is gone, is
read as interrupted.
"""

from __future__ import annotations

import os
import queue
import secrets
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from kronika.errors import KronikaError, NotFound
from kronika.server.jobstore import JobRecords, Record
from kronika.workflows.context import ReadingContext

MAX_KEPT = 1000
BEAT_S = 2.0
STALE_AFTER_S = 20.0
PENDING = ("queued", "running")


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

    @property
    def resumable(self) -> bool:
        return self.status == "interrupted"

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
            "resumable": self.resumable,
        }


Work = Callable[[], tuple[str, str, dict[str, Any]]]
"""A job's body: returns (status, message, result)."""


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")


class JobBook:
    """The jobs of a workspace or database (stored in ``records``); this process runs
    the ones submitted to it on one thread, oldest first."""

    def __init__(self, records: JobRecords, *, stale_after_s: float = STALE_AFTER_S) -> None:
        self.records = records
        self.owner = f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"
        self._stale_after_s = stale_after_s
        self._lock = threading.Lock()
        self._queue: queue.Queue[tuple[str, Work]] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._pending = 0

    def submit(self, kind: str, tenant: str, agent: str, params: dict[str, Any], work: Work) -> Job:
        job = Job(
            id=f"job-{secrets.token_hex(6)}",
            kind=kind,
            tenant=tenant,
            agent=agent,
            params=params,
            created_at=_now(),
        )
        self.records.insert(_fields(job), self.owner, time.time())
        self.records.prune(MAX_KEPT)
        with self._lock:
            self._pending += 1
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="kronika-jobs", daemon=True)
                self._thread.start()
                beats = threading.Thread(target=self._beat, name="kronika-job-beat", daemon=True)
                beats.start()
        self._queue.put((job.id, work))
        return job

    def get(self, job_id: str, context: ReadingContext) -> Job:
        """The job, when ``context`` may read it (:meth:`ReadingContext.own`: a job of its
        tenant, and of its key's agent when the key names one)."""
        record = self.records.get(job_id)
        found = context.own([self._seen(record)] if record is not None else [])
        if not found:
            raise NotFound(f"no job {job_id!r}")
        return found[0]

    def list(self, context: ReadingContext) -> list[Job]:
        """The jobs ``context`` may read, newest first."""
        return context.own(self._seen(r) for r in self.records.newest(context.tenant, MAX_KEPT))

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

    def close(self) -> None:
        self.records.close()

    def _seen(self, record: Record) -> Job:
        """The job as it stands: a pending job nobody holds any more is interrupted."""
        job = Job(**record.fields)
        if job.status not in PENDING or record.owner == self.owner or self._held(record):
            return job
        changes: dict[str, Any] = {
            "status": "interrupted",
            "finished_at": _now(),
            "message": f"the server process stopped while the job was {job.status}: what it"
            " did is kept, what it did not do stays queued in the workspace; resume it with"
            f" POST /v1/jobs/{job.id}/resume",
        }
        if self.records.update(job.id, changes, only_if=record.owner):
            return replace(job, **changes)
        again = self.records.get(job.id)  # it moved on meanwhile: read it as it is now
        return job if again is None else Job(**again.fields)

    def _held(self, record: Record) -> bool:
        if time.time() - record.heartbeat > self._stale_after_s:
            return False
        host, _, rest = record.owner.partition(":")
        pid = rest.partition(":")[0]
        if host != socket.gethostname() or not pid.isdigit():
            return True
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            return False
        except OSError:
            return True  # it exists, owned by someone else
        return True

    def _beat(self) -> None:
        while True:
            time.sleep(BEAT_S)
            with self._lock:
                pending = self._pending
            if pending:
                try:
                    self.records.beat(self.owner, time.time())
                except KronikaError:
                    continue  # the next beat tries again; readers allow several to fail

    def _update(self, job_id: str, **changes: Any) -> None:
        self.records.update(job_id, changes)

    def _run(self) -> None:
        while True:
            job_id, work = self._queue.get()
            if not job_id:
                work()
                continue
            try:
                self._update(job_id, status="running", started_at=_now())
                try:
                    status, message, result = work()
                except KronikaError as exc:
                    status, message, result = "failed", str(exc), {}
                except Exception as exc:  # a bug must not stop the worker for later jobs
                    status, message, result = (
                        "failed",
                        f"unexpected {type(exc).__name__}: {exc}",
                        {},
                    )
                self._update(
                    job_id, status=status, message=message, result=result, finished_at=_now()
                )
            except KronikaError:
                pass  # the records cannot be written: the job's status is what it was
            finally:
                with self._lock:
                    self._pending -= 1


def _fields(job: Job) -> dict[str, Any]:
    return {
        "id": job.id,
        "kind": job.kind,
        "tenant": job.tenant,
        "agent": job.agent,
        "params": job.params,
        "status": job.status,
        "created_at": job.created_at,
        "started_at": job.started_at,
        "finished_at": job.finished_at,
        "message": job.message,
        "result": job.result,
    }
