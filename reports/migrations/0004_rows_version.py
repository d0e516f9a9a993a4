"""A benchmark's items and predictions get a version the database bumps whenever they change (reports.triggers),
so that a report computation can keep them between computations (reports.kept_rows). PostgreSQL only."""
from django.db import migrations, models

from reports import triggers


def create(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        for sql in triggers.postgresql_rows_version():
            schema_editor.execute(sql, params=None)


def drop(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        for sql in triggers.postgresql_rows_version_drop():
            schema_editor.execute(sql, params=None)


class Migration(migrations.Migration):
    dependencies = [("reports", "0003_stored_renderings")]
    operations = [
        migrations.CreateModel(
            name="RowsVersion",
            fields=[("benchmark_id", models.BigIntegerField(primary_key=True, serialize=False)),
                    ("version", models.BigIntegerField(default=0))],
        ),
        migrations.RunPython(create, drop),
    ]
