"""What the SQL indexes share, written once over a :class:`~.dialect.Dialect`.

:mod:`.where` renders the predicates of :mod:`kronika.stores.filters` as a condition,
:mod:`.rows` maps items to and from rows, :mod:`.recall_log` builds the recall log's
reads and :mod:`.day_counts` counts items per day. :mod:`kronika.stores.sqlite` and
:mod:`kronika.stores.postgres` each give their dialect; neither imports the other.
"""
