"""Concrete adapters for the small ports in :mod:`kronika.ports` (embedders, tokens, clock).

Each provider imports its third-party package lazily, so importing kronika stays cheap.
"""
