"""The ``kronika`` command line (see :mod:`kronika.cli.main`)."""

from kronika.cli.main import main

__all__ = ["main"]
