"""The PostgreSQL state backend (DESIGN §10): same tables and queries as SQLite, a shared schema per project.

Nothing here is imported unless a ``postgresql://`` URL is used; psycopg only in connection.py.
"""
