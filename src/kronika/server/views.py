"""The server's own JSON: what every route answers with (:data:`Json`) and an API
key as its holder sees it. Every other result object is put into JSON by
:mod:`kronika.wire`, for the REST API, MCP and the command line's ``--json`` alike."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

Json = dict[str, Any]
"""A JSON object as :mod:`kronika.wire` makes it (a route names its shape with
``response_model``, a model of :mod:`kronika.server.responses`)."""

if TYPE_CHECKING:
    from kronika.server.keys import ApiKey


def api_key(key: ApiKey) -> dict[str, Any]:
    """What a key is (never its secret); a bound key's user, channels and teams too."""
    bound = {"user": key.user, "channels": list(key.channels), "teams": key.teams}
    return {
        "id": key.id,
        "tenant": key.tenant,
        "role": key.role.value,
        "agent": key.agent,
        "bound": key.bound,
        **(bound if key.bound else {}),
    }
