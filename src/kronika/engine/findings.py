"""What ``kronika doctor`` reports: one :class:`Finding` per thing found."""

from __future__ import annotations

from dataclasses import dataclass

PROBLEM = "problem"
"""Something is wrong: memory may be lost, wrong or unreadable."""
WARNING = "warning"
"""Nothing is lost, but something should change (access by other users, say)."""


@dataclass(frozen=True, slots=True)
class Finding:
    """One thing the doctor found: which check, how bad, where, what, and the fix.

    ``repair`` names what :func:`repair` does about it (``None``: a person must act);
    ``fixed`` says whether it was done.
    """

    check: str
    severity: str
    where: str
    what: str
    fix: str
    repair: str | None = None
    fixed: bool = False
