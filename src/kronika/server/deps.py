"""What every route depends on: the caller from the request's key and the server's
:class:`~kronika.server.service.Service`, and the parameters' shapes.

The route modules of :mod:`kronika.server.routes` (one per resource) import these;
:func:`kronika.server.routes.include` adds their routers to the app.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Path, Query, Request
from fastapi.security import APIKeyHeader, HTTPAuthorizationCredentials, HTTPBearer

from kronika.server.access import Caller, Unauthenticated, caller_for
from kronika.server.limits import RateLimited
from kronika.server.service import Service

_bearer = HTTPBearer(auto_error=False, description="Authorization: Bearer kro_…")
_header = APIKeyHeader(name="X-API-Key", auto_error=False, description="X-API-Key: kro_…")
Name = Annotated[str, Path(min_length=1, max_length=100)]
Id = Annotated[str, Path(min_length=1, max_length=200)]
Limit = Annotated[int, Query(ge=1, le=1000)]
"""How many items a list answers with."""


async def caller(
    request: Request,
    bearer: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
    header: Annotated[str | None, Depends(_header)],
) -> Caller:
    """The request's key, checked against the key store, and its reading context
    (``X-Kronika-User``, ``X-Kronika-Channel``)."""
    token = bearer.credentials if bearer is not None else header
    key = request.app.state.keys.verify(token) if token else None
    if key is None:
        raise Unauthenticated("a valid API key is needed (Authorization: Bearer … or X-API-Key)")
    if not request.app.state.rate.allow(key.id):
        raise RateLimited("too many requests for this API key; slow down")
    user = request.headers.get("x-kronika-user") or None
    channel = request.headers.get("x-kronika-channel") or None
    return caller_for(key, user, channel)


Who = Annotated[Caller, Depends(caller)]


async def service(request: Request) -> Service:
    found: Service = request.app.state.service
    return found


Svc = Annotated[Service, Depends(service)]
