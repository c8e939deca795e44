"""Importers: read conversation datasets and chat logs into ``SessionRecord``s.

Pure parsing; storing the sessions is ``Memory.import_sessions``' job.
"""

from kronika.importers.jsonl import parse_jsonl_sessions, read_jsonl
from kronika.importers.locomo import LocomoConversation, LocomoQA, clean_evidence, read_locomo
from kronika.importers.longmemeval import LongMemEvalQuestion, iter_longmemeval, read_longmemeval

__all__ = [
    "LocomoConversation",
    "LocomoQA",
    "LongMemEvalQuestion",
    "clean_evidence",
    "iter_longmemeval",
    "parse_jsonl_sessions",
    "read_jsonl",
    "read_locomo",
    "read_longmemeval",
]
