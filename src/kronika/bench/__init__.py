"""Benchmarks: LoCoMo and LongMemEval retrieval (official protocols) and speed at scale.

Each ``run_*`` returns a JSON-ready dict with ``"tables"`` (for the reports) and
``"headline"`` (flat figures); :func:`write_report` writes it as JSON and Markdown.
"""

from kronika.bench.locomo import run_locomo
from kronika.bench.longmemeval import run_longmemeval
from kronika.bench.report import headline, write_report
from kronika.bench.scale import run_scale

__all__ = ["headline", "run_locomo", "run_longmemeval", "run_scale", "write_report"]
