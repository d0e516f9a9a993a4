"""The labels' counts on batch items: see annotation.label_counts (SQLite's triggers are installed after
`migrate`, by annotation.apps)."""
from django.db import migrations, models

from annotation import label_counts


def create(apps, schema_editor):
    connection = schema_editor.connection
    if connection.vendor == "postgresql":
        for statement in label_counts.COUNT_EXISTING + label_counts.POSTGRES:
            schema_editor.execute(statement, params=None)


def drop(apps, schema_editor):
    connection = schema_editor.connection
    if connection.vendor == "postgresql":
        for statement in label_counts.POSTGRES_REVERSE:
            schema_editor.execute(statement, params=None)
    label_counts.remove_sqlite_triggers(connection)


class Migration(migrations.Migration):
    dependencies = [("annotation", "0016_hand_in_requested")]

    operations = [
        migrations.AddField(
            model_name="batchitem", name="labels",
            field=models.PositiveSmallIntegerField(default=0, editable=False,
                                                   help_text="Labels given on the item in round labels_round"),
        ),
        migrations.AddField(
            model_name="batchitem", name="labels_round",
            field=models.PositiveSmallIntegerField(default=0, editable=False,
                                                   help_text="The latest round the item has labels in"),
        ),
        migrations.RunPython(create, drop),
    ]
