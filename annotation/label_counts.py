"""Each batch item keeps how many labels it has in its latest round (`labels`, `labels_round`), counted by the
database whatever writes a label (a submission, an import, a test's bulk_create), so that the labeller's progress
counts the batch's items with all their labels from the items alone instead of joining the batch's labels after
every item.

PostgreSQL: one statement-level trigger on inserts (an import of many labels updates each item once) and row
triggers on deletes and on a label moved to another item or round, created by migration 0017. SQLite: row
triggers, installed after every `migrate` and removed before it (annotation.apps), for the reason
reports.triggers gives (SQLite rebuilds a table to change a column and refuses the rename while another table's
trigger names it); the counts are taken again from the labels each time they are installed. A label of a round
older than the item's latest is not counted (the progress counts the batch's current round only)."""
from django.db.migrations.recorder import MigrationRecorder

from core.sql import execute_all

# The migration that brings the columns: before it is applied, SQLite gets no triggers.
MIGRATION = ("annotation", "0017_batch_item_label_count")
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


def remove_sqlite_triggers(connection):
    if connection.vendor == "sqlite":
        execute_all(connection, SQLITE_REVERSE)


def install_sqlite_triggers(connection):
    """Idempotent; only once the columns' migration is applied. Counts again first: labels written while the
    triggers were off (during a migration) are counted too."""
    if connection.vendor != "sqlite" or MIGRATION not in MigrationRecorder(connection).applied_migrations():
        return
    execute_all(connection, SQLITE_REVERSE + COUNT_EXISTING + SQLITE)
