"""``kronika serve``: the REST API, the MCP server and their API keys.

Thin adapters over :class:`~kronika.memory.Memory` (see :mod:`kronika.server.service`):

* :mod:`~kronika.server.keys`: API keys per tenant, stored hashed (no extra needed);
* :mod:`~kronika.server.access`: what a key may touch, and HTTP statuses for errors;
* :mod:`~kronika.server.app` and :mod:`~kronika.server.routes` (one module per resource):
  FastAPI (``[server]``);
* :mod:`~kronika.server.mcp`: the MCP tools and resources, one module each (``[mcp]``);
* :mod:`~kronika.server.run`: building the server from settings and running it.

Nothing here is imported by ``import kronika``: the extras load only when used.
"""
