"""Database triggers that mark stored reports stale the moment a row they read changes (reports.triggers).
PostgreSQL's are created here; SQLite's are installed after every migrate (reports.apps), since SQLite's way
of changing a table drops them."""
from django.db import migrations

from reports import triggers


def create(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        for sql in triggers.postgresql():
            schema_editor.execute(sql, params=None)


def drop(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        for sql in triggers.postgresql_drop():
            schema_editor.execute(sql, params=None)
    else:
        triggers.remove_sqlite_triggers(schema_editor.connection)


class Migration(migrations.Migration):
    dependencies = [
        ("reports", "0001_stored_report"),
        ("benchmarks", "0001_initial"),
        ("annotation", "0005_qc_sample_secret"),
        ("modeleval", "0005_api_backend"),
    ]
    operations = [migrations.RunPython(create, drop)]
