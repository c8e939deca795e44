"""The installed version of a package, without importing :mod:`importlib.metadata`.

Every command names its embedding model (whose id holds the model package's version)
and offers ``--version``; :func:`importlib.metadata.version` imports the metadata
machinery and the email parser behind it and parses the package's ``METADATA``, some
15 ms of each command's start. An installed wheel's folder ``<name>-<version>.dist-info``
already says the version, so the folders on :data:`sys.path` are read first, in the
order Python searches them; any other layout (an ``.egg-info``, a zip) falls back to
:mod:`importlib.metadata`.
"""

from __future__ import annotations

import os
import re
import sys

_SEPARATORS = re.compile(r"[-_.]+")


def installed_version(distribution: str) -> str | None:
    """The version of ``distribution`` the import system would find, or ``None``."""
    wanted = _SEPARATORS.sub("_", distribution).lower()
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for name in names:
            if not name.endswith(".dist-info"):
                continue
            project, _, version = name[: -len(".dist-info")].partition("-")
            if version and _SEPARATORS.sub("_", project).lower() == wanted:
                return version
    from importlib import metadata

    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None
