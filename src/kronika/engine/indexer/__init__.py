"""Keeping the derived index in step with the Markdown workspace (SPEC S1, S2).

:class:`Indexer` (:mod:`.indexer`: what a sync, a catch-up and a rebuild do) holds its
parts over one :class:`~.state.IndexerState`:

- :mod:`.vectors`: the vectors of what is indexed, now or later (the pending file);
- :mod:`.appends`: turns and facts kronika appended, and facts it patched, indexed alone;
- :mod:`.losses`: what a file lost all at once, kept aside and reported;
- :mod:`.marks`: what an agent's files looked like when the index last matched them;
- :mod:`.report`: what a sync reports, and its progress callback.
"""

from kronika.engine.indexer.indexer import Indexer, sudden_loss
from kronika.engine.indexer.report import Progress, SyncReport
from kronika.engine.indexer.vectors import PENDING_FILE, LazyModel

__all__ = ["PENDING_FILE", "Indexer", "LazyModel", "Progress", "SyncReport", "sudden_loss"]
