"""The SQL migrations of the PostgreSQL store (see :mod:`kronika.stores.postgres.connect`)."""
