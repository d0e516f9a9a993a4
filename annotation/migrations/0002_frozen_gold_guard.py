"""Frozen gold versions refuse writes in the database itself, whatever door a write comes through.

PostgreSQL: row triggers on labels (insert, update, delete) and on the version row (no unfreezing, no
delete); TRUNCATE, which test flushes use, fires no row triggers. SQLite: insert and update only,
because its flush deletes row by row.
"""
from django.db import migrations

POSTGRES = [
    """
    CREATE OR REPLACE FUNCTION annotation_goldlabel_frozen_guard() RETURNS trigger AS $$
    BEGIN
      IF EXISTS (SELECT 1 FROM annotation_goldversion v WHERE v.frozen_at IS NOT NULL
                 AND v.id IN (CASE WHEN TG_OP = 'INSERT' THEN NULL ELSE OLD.version_id END,
                              CASE WHEN TG_OP = 'DELETE' THEN NULL ELSE NEW.version_id END)) THEN
        RAISE EXCEPTION 'gold version is frozen; make a new version' USING ERRCODE = 'integrity_constraint_violation';
      END IF;
      RETURN COALESCE(NEW, OLD);
    END $$ LANGUAGE plpgsql
    """,
    """
    CREATE TRIGGER annotation_goldlabel_frozen BEFORE INSERT OR UPDATE OR DELETE ON annotation_goldlabel
    FOR EACH ROW EXECUTE FUNCTION annotation_goldlabel_frozen_guard()
    """,
    """
    CREATE OR REPLACE FUNCTION annotation_goldversion_frozen_guard() RETURNS trigger AS $$
    BEGIN
      IF OLD.frozen_at IS NOT NULL THEN
        RAISE EXCEPTION 'gold version is frozen' USING ERRCODE = 'integrity_constraint_violation';
      END IF;
      RETURN COALESCE(NEW, OLD);
    END $$ LANGUAGE plpgsql
    """,
    """
    CREATE TRIGGER annotation_goldversion_frozen BEFORE UPDATE OR DELETE ON annotation_goldversion
    FOR EACH ROW EXECUTE FUNCTION annotation_goldversion_frozen_guard()
    """,
]
POSTGRES_REVERSE = [
    "DROP TRIGGER IF EXISTS annotation_goldlabel_frozen ON annotation_goldlabel",
    "DROP FUNCTION IF EXISTS annotation_goldlabel_frozen_guard()",
    "DROP TRIGGER IF EXISTS annotation_goldversion_frozen ON annotation_goldversion",
    "DROP FUNCTION IF EXISTS annotation_goldversion_frozen_guard()",
]
SQLITE = [
    """
    CREATE TRIGGER annotation_goldlabel_frozen_insert BEFORE INSERT ON annotation_goldlabel
    WHEN (SELECT frozen_at FROM annotation_goldversion WHERE id = NEW.version_id) IS NOT NULL
    BEGIN SELECT RAISE(ABORT, 'gold version is frozen; make a new version'); END
    """,
    """
    CREATE TRIGGER annotation_goldlabel_frozen_update BEFORE UPDATE ON annotation_goldlabel
    WHEN (SELECT frozen_at FROM annotation_goldversion WHERE id IN (OLD.version_id, NEW.version_id)
          AND frozen_at IS NOT NULL) IS NOT NULL
    BEGIN SELECT RAISE(ABORT, 'gold version is frozen; make a new version'); END
    """,
    """
    CREATE TRIGGER annotation_goldversion_frozen_update BEFORE UPDATE ON annotation_goldversion
    WHEN OLD.frozen_at IS NOT NULL
    BEGIN SELECT RAISE(ABORT, 'gold version is frozen'); END
    """,
]
SQLITE_REVERSE = [
    "DROP TRIGGER IF EXISTS annotation_goldlabel_frozen_insert",
    "DROP TRIGGER IF EXISTS annotation_goldlabel_frozen_update",
    "DROP TRIGGER IF EXISTS annotation_goldversion_frozen_update",
]


def run(statements):
    def apply(apps, schema_editor):
        for statement in statements.get(schema_editor.connection.vendor, []):
            schema_editor.execute(statement)
    return apply


class Migration(migrations.Migration):
    dependencies = [("annotation", "0001_initial")]

    operations = [
        migrations.RunPython(run({"postgresql": POSTGRES, "sqlite": SQLITE}),
                             run({"postgresql": POSTGRES_REVERSE, "sqlite": SQLITE_REVERSE})),
    ]
