"""Everything kept, out and back in: the export document (a backup for the tenant's
owner, the reader's view for anyone else), restoring a backup, and the Markdown files
of a whole export as a zip. Big documents are built in a pool thread."""

from __future__ import annotations

import re
from typing import Annotated

from fastapi import APIRouter, Query
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import Response

from kronika.server import pages, responses, schemas
from kronika.server.deps import Svc, Who
from kronika.server.views import Json

router = APIRouter(tags=["export"])
AgentQuery = Annotated[str | None, Query(min_length=1, max_length=100)]


@router.get(
    "/export",
    summary="Everything kept, as one JSON document",
    response_model=responses.Export,
    response_model_exclude_unset=True,
)
async def export(who: Who, svc: Svc, agent: AgentQuery = None) -> Json:
    return await run_in_threadpool(svc.export, who, agent)


@router.post(
    "/import",
    summary="Restore an export document",
    response_model=responses.Restored,
)
async def import_(body: schemas.ImportBody, who: Who, svc: Svc) -> Json:
    return await run_in_threadpool(svc.import_export, who, body.document, replace=body.replace)


@router.get(
    "/export/markdown",
    summary="The Markdown files of a whole export, as a zip",
    response_class=Response,
    responses={200: {"content": {"application/zip": {}}}},
)
async def export_markdown(who: Who, svc: Svc, agent: AgentQuery = None) -> Response:
    data = await run_in_threadpool(pages.markdown_zip, svc, who, agent)
    name = "kronika-" + re.sub(r"[^A-Za-z0-9._-]", "_", agent or who.tenant) + ".zip"
    return Response(
        data,
        media_type="application/zip",
        headers={"Content-Disposition": f'attachment; filename="{name}"'},
    )
