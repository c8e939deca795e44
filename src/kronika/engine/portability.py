"""Deprecated alias of :mod:`kronika.workflows.portability`."""

import warnings

from kronika.workflows.portability import (
    AUDIT_FILE,
    RestoreReport,
    StagedRestore,
    export_memory,
    import_export,
    index_restored,
    prepare_index,
    restore_backup,
    stage_backup,
)

warnings.warn(
    "kronika.engine.portability is deprecated: import from kronika.workflows.portability",
    DeprecationWarning,
    stacklevel=2,
)

__all__ = [
    "AUDIT_FILE",
    "RestoreReport",
    "StagedRestore",
    "export_memory",
    "import_export",
    "index_restored",
    "prepare_index",
    "restore_backup",
    "stage_backup",
]
