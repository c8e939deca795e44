"""PostgreSQL + pgvector: the team store of record and its search index (extra ``postgres``).

Nothing here is imported unless ``KRONIKA_DATABASE_URL`` names a PostgreSQL database,
so the local default never needs psycopg.
"""
