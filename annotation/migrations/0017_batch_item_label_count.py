"""Each batch item keeps how many labels it has in its latest round (`labels`, `labels_round`), counted by the
database whatever writes a label (a submission, an import, a test's bulk_create), so that the labeller's progress
counts the batch's items with all their labels from the items alone instead of joining the batch's labels after
every item.

PostgreSQL: one statement-level trigger on inserts (an import of many labels updates each item once) and row
triggers on deletes and on a label moved to another item or round. SQLite: row triggers. A label of a round older
than the item's latest is not counted (the progress counts the batch's current round only)."""
from django.db import migrations, models

_ADD = ("CASE WHEN labels_round = {round} THEN labels + {n} ELSE {n} END")

POSTGRES = [
    f"""
    CREATE OR REPLACE FUNCTION annotation_labels_added() RETURNS trigger AS $$
    BEGIN
      UPDATE annotation_batchitem bi SET labels = {_ADD.format(round="n.round", n="n.added")}, labels_round = n.round
      FROM (SELECT x.batch_item_id, x.round, COUNT(*) AS added FROM new_labels x
            WHERE x.round = (SELECT MAX(y.round) FROM new_labels y WHERE y.batch_item_id = x.batch_item_id)
            GROUP BY x.batch_item_id, x.round) n
      WHERE bi.id = n.batch_item_id AND bi.labels_round <= n.round;
      RETURN NULL;
    END $$ LANGUAGE plpgsql
    """,
    """
    CREATE TRIGGER annotation_labels_added AFTER INSERT ON annotation_annotation
    REFERENCING NEW TABLE AS new_labels FOR EACH STATEMENT EXECUTE FUNCTION annotation_labels_added()
    """,
    f"""
    CREATE OR REPLACE FUNCTION annotation_labels_moved() RETURNS trigger AS $$
    BEGIN
      IF TG_OP IN ('DELETE', 'UPDATE') THEN
        UPDATE annotation_batchitem SET labels = labels - 1
        WHERE id = OLD.batch_item_id AND labels_round = OLD.round AND labels > 0;
      END IF;
      IF TG_OP = 'UPDATE' THEN
        UPDATE annotation_batchitem SET labels = {_ADD.format(round="NEW.round", n="1")}, labels_round = NEW.round
        WHERE id = NEW.batch_item_id AND labels_round <= NEW.round;
      END IF;
      RETURN NULL;
    END $$ LANGUAGE plpgsql
    """,
    """
    CREATE TRIGGER annotation_labels_removed AFTER DELETE ON annotation_annotation
    FOR EACH ROW EXECUTE FUNCTION annotation_labels_moved()
    """,
    """
    CREATE TRIGGER annotation_labels_moved AFTER UPDATE OF batch_item_id, round ON annotation_annotation
    FOR EACH ROW WHEN (OLD.batch_item_id <> NEW.batch_item_id OR OLD.round <> NEW.round)
    EXECUTE FUNCTION annotation_labels_moved()
    """,
]
POSTGRES_REVERSE = [
    "DROP TRIGGER IF EXISTS annotation_labels_added ON annotation_annotation",
    "DROP TRIGGER IF EXISTS annotation_labels_removed ON annotation_annotation",
    "DROP TRIGGER IF EXISTS annotation_labels_moved ON annotation_annotation",
    "DROP FUNCTION IF EXISTS annotation_labels_added()",
    "DROP FUNCTION IF EXISTS annotation_labels_moved()",
]
_SQLITE_ADD = (f"UPDATE annotation_batchitem SET labels = {_ADD.format(round='NEW.round', n='1')}, "
               "labels_round = NEW.round WHERE id = NEW.batch_item_id AND labels_round <= NEW.round;")
_SQLITE_REMOVE = ("UPDATE annotation_batchitem SET labels = labels - 1 WHERE id = OLD.batch_item_id "
                  "AND labels_round = OLD.round AND labels > 0;")
SQLITE = [
    f"CREATE TRIGGER annotation_labels_added AFTER INSERT ON annotation_annotation BEGIN {_SQLITE_ADD} END",
    f"CREATE TRIGGER annotation_labels_removed AFTER DELETE ON annotation_annotation BEGIN {_SQLITE_REMOVE} END",
    "CREATE TRIGGER annotation_labels_moved AFTER UPDATE OF batch_item_id, round ON annotation_annotation "
    "WHEN OLD.batch_item_id <> NEW.batch_item_id OR OLD.round <> NEW.round "
    f"BEGIN {_SQLITE_REMOVE} {_SQLITE_ADD} END",
]
SQLITE_REVERSE = [
    "DROP TRIGGER IF EXISTS annotation_labels_added",
    "DROP TRIGGER IF EXISTS annotation_labels_removed",
    "DROP TRIGGER IF EXISTS annotation_labels_moved",
]
# The labels already given, counted once (both databases).
COUNT_EXISTING = [
    "UPDATE annotation_batchitem SET labels_round = COALESCE((SELECT MAX(a.round) FROM annotation_annotation a "
    "WHERE a.batch_item_id = annotation_batchitem.id), 0)",
    "UPDATE annotation_batchitem SET labels = (SELECT COUNT(*) FROM annotation_annotation a "
    "WHERE a.batch_item_id = annotation_batchitem.id AND a.round = annotation_batchitem.labels_round)",
]


def run(statements):
    def apply(apps, schema_editor):
        for statement in statements.get(schema_editor.connection.vendor, []):
            schema_editor.execute(statement, params=None)
    return apply


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
        migrations.RunPython(run({"postgresql": COUNT_EXISTING + POSTGRES, "sqlite": COUNT_EXISTING + SQLITE}),
                             run({"postgresql": POSTGRES_REVERSE, "sqlite": SQLITE_REVERSE})),
    ]
