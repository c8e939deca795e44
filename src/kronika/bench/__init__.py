"""Benchmarks: LoCoMo and LongMemEval retrieval (official protocols), speed at scale,
write speed as memory grows, Qdrant beside the built-in vectors, crash trials of the write
path, whether lessons stop an agent from repeating its failures, and recall over memories
as an agent keeps them (facts with history, notes, turns, summaries, entity pages,
lessons; :mod:`kronika.bench.memory_suite`).

Each ``run_*`` returns a JSON-ready dict with ``"tables"`` (for the reports) and
``"headline"`` (flat figures); :func:`write_report` writes it as JSON and Markdown.
"""

from kronika.bench.crash import run_crash
from kronika.bench.lessons import run_lessons
from kronika.bench.locomo import run_locomo
from kronika.bench.longmemeval import run_longmemeval
from kronika.bench.memory_suite import run_memory
from kronika.bench.report import headline, write_report
from kronika.bench.scale import run_scale
from kronika.bench.vectors import run_vectors
from kronika.bench.writes import run_writes

__all__ = [
    "headline",
    "run_crash",
    "run_lessons",
    "run_locomo",
    "run_longmemeval",
    "run_memory",
    "run_scale",
    "run_vectors",
    "run_writes",
    "write_report",
]
