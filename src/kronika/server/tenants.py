"""The memories of a team server, by tenant, growing as API keys are made.

``kronika serve`` over a database serves the tenant of every active API key. A key
made for a new tenant while the server runs (``kronika keys create --tenant NEW``)
is served from its first request: its tenant's memory is built then, once, and kept.
Only a tenant that has an active key is built; any other name is simply not served.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import Any

from kronika.memory import Memory


class TenantMemories(dict[str, Memory]):
    """``{tenant: memory}`` that builds a missing tenant's memory with ``build`` (which
    returns None for a tenant not to serve) when it is looked up."""

    def __init__(self, memories: Mapping[str, Memory], build: Callable[[str], Memory | None]):
        super().__init__(memories)
        self._build = build
        self._growing = threading.Lock()

    def _grown(self, tenant: object) -> Memory | None:
        if not isinstance(tenant, str):
            return None
        found = dict.get(self, tenant)
        if found is not None:
            return found
        with self._growing:  # two first requests of one tenant build one memory
            found = dict.get(self, tenant)
            if found is None:
                found = self._build(tenant)
                if found is not None:
                    self[tenant] = found
        return found

    def get(self, tenant: str, default: Any = None) -> Any:
        found = self._grown(tenant)
        return default if found is None else found

    def __contains__(self, tenant: object) -> bool:
        return self._grown(tenant) is not None

    def __missing__(self, tenant: str) -> Memory:
        found = self._grown(tenant)
        if found is None:
            raise KeyError(tenant)
        return found
