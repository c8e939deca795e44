"""The command line's earlier spellings, kept for one release.

Each still works, unlisted in ``--help``, and says on stderr, in one line, what to
write instead (standard output, ``--json`` included, is unchanged). The next release
but one drops them: this module and the two places that read it
(:meth:`kronika.cli.commands.Commands.expand` and ``recall``'s ``--k``).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

RENAMED = {
    "approve": "proposals approve",
    "reject": "proposals reject",
    "link": "links add",
    "outcome": "lessons record",
    "consolidate": "jobs consolidate",
    "purge": "policies purge",
    "reindex": "index rebuild",
    "sync": "index sync",
    "stats": "index stats",
    "audit": "logs audit",
    "recalls": "logs recalls",
    "usage": "logs usage",
}
"""An earlier command -> the command that does it now."""


AS_JSON = [False]
"""Whether the command line asked for ``--json``: then the notice is a JSON line too,
as every line kronika writes on stderr is (set by :func:`kronika.cli.main.main`)."""


def warn(old: str, new: str) -> None:
    """Say on stderr, in one line, that ``old`` is an earlier spelling of ``new``."""
    if AS_JSON[0]:
        import json

        said = json.dumps({"deprecated": old, "use": new}, ensure_ascii=False)
    else:
        said = f"kronika: `{old}` is deprecated and goes in a later release; use `{new}`"
    print(said, file=sys.stderr)


class RenamedOption(argparse.Action):
    """A hidden earlier spelling of an option (``recall --k``): it stores its value
    where the current option does, and says which that is."""

    def __init__(self, option_strings: Sequence[str], dest: str, *, new: str, **kw: Any) -> None:
        super().__init__(option_strings, dest, help=argparse.SUPPRESS, **kw)
        self.new = new

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        warn(f"{parser.prog} {option_string}", f"{parser.prog} {self.new}")
        setattr(namespace, self.dest, values)
