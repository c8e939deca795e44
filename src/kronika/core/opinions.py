"""How an opinion's confidence moves with evidence (SPEC F1): small steps, big ones only
on strong, repeated evidence.

For one opinion and one reflect run, with ``s`` new pieces of evidence that support it
and ``c`` that contradict it (as judged by the model, each piece once):

    net   = s − c
    step  = STEP × net, limited to ±SMALL_MOVE, or to ±BIG_MOVE when |net| ≥ STRONG
    new   = clamp(old + step, FLOOR, CEILING)

``STEP = 0.05`` per net piece, at most ``SMALL_MOVE = 0.1`` in a run; only ``STRONG = 3``
or more net pieces pointing the same way may move it up to ``BIG_MOVE = 0.3``.
Confidence never reaches 0 or 1 (``FLOOR = 0.05``, ``CEILING = 0.95``): an opinion is
never certain. An opinion written without a confidence starts from 0.5. These numbers
are set on principle (a single remark should not flip an opinion; a pattern may), not
fitted to data.
"""

from __future__ import annotations

STEP = 0.05
SMALL_MOVE = 0.1
BIG_MOVE = 0.3
STRONG = 3
FLOOR = 0.05
CEILING = 0.95


def moved_confidence(old: float | None, supports: int, contradicts: int) -> float:
    """The opinion's confidence after ``supports`` and ``contradicts`` new pieces."""
    start = 0.5 if old is None else old
    net = supports - contradicts
    limit = BIG_MOVE if abs(net) >= STRONG else SMALL_MOVE
    step = max(-limit, min(limit, STEP * net))
    return round(max(FLOOR, min(CEILING, start + step)), 4)
