"""The REST routes, one module per resource, each with its own ``router``;
:func:`include` adds them all to the app, one line each.

Each route is a line or two over :class:`~kronika.server.service.Service` (or the pages
of :mod:`kronika.server.pages`); the caller comes from the request's key
(:func:`~kronika.server.deps.caller`). A route module imports what it depends on from
:mod:`kronika.server.deps`, its request bodies from :mod:`kronika.server.schemas`, and
names its answer's model (``response_model``, :mod:`kronika.server.responses`, or one
of its own for an answer only it gives). To add a resource: a module here with its
``router``, and one line in :func:`include`.

The routes call the memory in the server's pool of threads (plain ``def`` routes, or
``run_in_threadpool``), never on the event loop's thread: a call that takes long (a
big export, a recall over large items, a write waiting for the workspace lock) must
not stop ``/healthz`` or any other request from being answered meanwhile. Calls to one
memory still run one at a time (:class:`~kronika.server.service.Service` holds its
lock). Only a recall's query embedding stays on the loop, where it is batched with
the queries of the recalls that arrived with it (:mod:`kronika.server.batching`), and a
recall of a local workspace whose last recall since the last write was quick
(:mod:`kronika.server.loop_recalls`).
"""

from __future__ import annotations

from fastapi import FastAPI

from kronika.server.routes import (
    agents,
    audit,
    charts,
    compat_microdao,
    context,
    export,
    health,
    jobs,
    keys,
    lessons,
    memories,
    pages,
    policies,
    proposals,
    recall,
    sessions,
)

V1 = "/v1"


def include(app: FastAPI) -> None:
    """Every route of the REST API: ``/healthz``, the MicroDAO routes, then ``/v1``."""
    app.include_router(health.router)
    app.include_router(compat_microdao.router)
    app.include_router(keys.router, prefix=V1)
    app.include_router(agents.router, prefix=V1)
    app.include_router(memories.router, prefix=V1)
    app.include_router(recall.router, prefix=V1)
    app.include_router(context.router, prefix=V1)
    app.include_router(sessions.router, prefix=V1)
    app.include_router(proposals.router, prefix=V1)
    app.include_router(audit.router, prefix=V1)
    app.include_router(jobs.router, prefix=V1)
    app.include_router(export.router, prefix=V1)
    app.include_router(lessons.router, prefix=V1)
    app.include_router(charts.router, prefix=V1)
    app.include_router(policies.router, prefix=V1)
    app.include_router(pages.router, prefix=V1)
