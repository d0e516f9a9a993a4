"""A run's predictions get a version of their own, bumped by the database whenever the run, its tasks or its
predictions change (reports.triggers), in place of the benchmark's: a report computation re-reads only the runs
that changed (reports.kept_rows). PostgreSQL only."""
from django.db import migrations, models

from reports import triggers


def create(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        for sql in triggers.postgresql_run_rows_version():
            schema_editor.execute(sql, params=None)


def drop(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        for sql in triggers.postgresql_run_rows_version_drop():
            schema_editor.execute(sql, params=None)


class Migration(migrations.Migration):
    dependencies = [("reports", "0005_report_text_language")]
    operations = [
        migrations.CreateModel(
            name="RunRowsVersion",
            fields=[("run_id", models.BigIntegerField(primary_key=True, serialize=False)),
                    ("version", models.BigIntegerField(default=0))],
        ),
        migrations.RunPython(create, drop),
    ]
