"""Database triggers that mark stored reports stale the moment a row they read changes, whichever code
writes it (actions, importers' COPY, the admin): every table a report reads, mapped to its benchmark. On
PostgreSQL the tables of a benchmark's items also count their changes (RowsVersion, migration 0004), and those of
its runs and predictions count them per run (RunRowsVersion, migration 0006), for the rows a report computation
keeps (reports.kept_rows): a run that finishes leaves the other runs' predictions kept.

PostgreSQL: one statement-level trigger per table and event over the changed rows, created by migration
0002. SQLite: row-level triggers, installed after every `migrate` and removed before it (reports.apps):
SQLite changes a column by building a new table and renaming it, which drops the old table's triggers and
refuses the rename while another table's trigger names the table, so its triggers cannot live through
migrations."""
from django.db.migrations.recorder import MigrationRecorder

from core.sql import execute_all

# table -> (column of the changed row, SQL giving benchmark ids from {ids}: ids of that column).
PATHS = {
    "benchmarks_task": ("benchmark_id", "{ids}"),
    "benchmarks_item": ("task_id", "SELECT benchmark_id FROM benchmarks_task WHERE id IN ({ids})"),
    "annotation_campaign": ("benchmark_id", "{ids}"),
    "annotation_goldversion": ("benchmark_id", "{ids}"),
    "modeleval_evalrun": ("benchmark_id", "{ids}"),
    "annotation_goldlabel": ("version_id", "SELECT benchmark_id FROM annotation_goldversion WHERE id IN ({ids})"),
    "modeleval_prediction": ("run_id", "SELECT benchmark_id FROM modeleval_evalrun WHERE id IN ({ids})"),
    "modeleval_evalrun_tasks": ("evalrun_id", "SELECT benchmark_id FROM modeleval_evalrun WHERE id IN ({ids})"),
    "annotation_qcsampleitem": ("review_id", "SELECT c.benchmark_id FROM annotation_campaign c JOIN "
                                             "annotation_qcreview r "
                                             "ON r.campaign_id = c.id WHERE r.id IN ({ids})"),
    **{table: ("campaign_id", "SELECT benchmark_id FROM annotation_campaign WHERE id IN ({ids})")
       for table in ("annotation_campaignsettings", "annotation_batch", "annotation_batchitem",
                     "annotation_annotation", "annotation_qcreview")},
}
# The tables a benchmark's items are read from (reports.kept_rows): a change to any of them bumps the benchmark's
# RowsVersion (PostgreSQL only; SQLite keeps no rows between computations). Migration 0004 counted the run tables
# there too; migration 0006 moves them to RUN_PATHS.
ITEM_TABLES = ("benchmarks_task", "benchmarks_item")
ROWS_TABLES = (*ITEM_TABLES, "modeleval_evalrun", "modeleval_evalrun_tasks", "modeleval_prediction")
# The tables a run's predictions are read from, each with the column of the changed row that names the run: a
# change bumps that run's RunRowsVersion.
RUN_PATHS = {"modeleval_evalrun": "id", "modeleval_evalrun_tasks": "evalrun_id", "modeleval_prediction": "run_id"}
BUMP = ("INSERT INTO reports_rowsversion (benchmark_id, version) SELECT DISTINCT b, 1 FROM ({benchmarks}) AS "
        "changed(b) "
        "WHERE b IS NOT NULL ON CONFLICT (benchmark_id) DO UPDATE SET version = reports_rowsversion.version + 1")
BUMP_RUN = ("INSERT INTO reports_runrowsversion (run_id, version) SELECT DISTINCT r, 1 FROM ({runs}) AS changed(r) "
            "WHERE r IS NOT NULL ON CONFLICT (run_id) DO UPDATE SET version = reports_runrowsversion.version + 1")
MARK = ("UPDATE reports_storedreport SET stale_since = {now} WHERE stale_since IS NULL "
        "AND benchmark_id IN ({benchmarks})")
EVENTS = {"insert": "NEW", "update": "NEW", "delete": "OLD"}
# The migration that brings the triggers: before it is applied, SQLite gets none.
MIGRATION = ("reports", "0002_stale_triggers")


def _statement_triggers(name, function, tables):
    """One statement-level trigger per table and event, calling `function` with the SQL that gives the changed
    rows' benchmark ids."""
    for table in tables:
        column, path = PATHS[table]
        for event, side in EVENTS.items():
            # A transition table holds the statement's changed rows; one per event (PostgreSQL's rule).
            ids = f"SELECT {column} FROM changed_rows"
            yield (f"CREATE TRIGGER {name}_{event} AFTER {event.upper()} ON {table} "
                   f"REFERENCING {side} TABLE AS changed_rows FOR EACH STATEMENT "
                   f"EXECUTE FUNCTION {function}($${path.format(ids=ids)}$$)")


def _function(function, statement):
    return f"""CREATE FUNCTION {function}() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE format('{statement}', TG_ARGV[0]);
  RETURN NULL;
END $$"""


def _drop(name, function, tables):
    for table in tables:
        for event in EVENTS:
            yield f"DROP TRIGGER {name}_{event} ON {table}"
    yield f"DROP FUNCTION {function}()"


def postgresql():
    yield _function("reports_mark_stale", MARK.format(now="now()", benchmarks="%s").replace("'", "''"))
    yield from _statement_triggers("reports_stale", "reports_mark_stale", PATHS)


def postgresql_drop():
    yield from _drop("reports_stale", "reports_mark_stale", PATHS)


def postgresql_rows_version():
    yield _function("reports_bump_rows_version", BUMP.format(benchmarks="%s"))
    yield from _statement_triggers("reports_rows", "reports_bump_rows_version", ROWS_TABLES)


def postgresql_rows_version_drop():
    yield from _drop("reports_rows", "reports_bump_rows_version", ROWS_TABLES)


def postgresql_run_rows_version():
    """Migration 0006: the run tables count per run, no longer per benchmark."""
    for table in RUN_PATHS:
        for event in EVENTS:
            yield f"DROP TRIGGER reports_rows_{event} ON {table}"
    yield _function("reports_bump_run_rows_version", BUMP_RUN.format(runs="%s"))
    for table, column in RUN_PATHS.items():
        for event, side in EVENTS.items():
            yield (f"CREATE TRIGGER reports_run_rows_{event} AFTER {event.upper()} ON {table} "
                   f"REFERENCING {side} TABLE AS changed_rows FOR EACH STATEMENT "
                   f"EXECUTE FUNCTION reports_bump_run_rows_version($$SELECT {column} FROM changed_rows$$)")


def postgresql_run_rows_version_drop():
    for table in RUN_PATHS:
        for event in EVENTS:
            yield f"DROP TRIGGER reports_run_rows_{event} ON {table}"
    yield "DROP FUNCTION reports_bump_run_rows_version()"
    yield from _statement_triggers("reports_rows", "reports_bump_rows_version", RUN_PATHS)


def sqlite():
    for table, (column, path) in PATHS.items():
        for event, side in EVENTS.items():
            mark = MARK.format(now="CURRENT_TIMESTAMP", benchmarks=path.format(ids=f"{side}.{column}"))
            yield (f"CREATE TRIGGER IF NOT EXISTS reports_stale_{table}_{event} AFTER {event.upper()} ON {table} "
                   f"BEGIN {mark}; END")


def sqlite_drop():
    for table in PATHS:
        for event in EVENTS:
            yield f"DROP TRIGGER IF EXISTS reports_stale_{table}_{event}"


def remove_sqlite_triggers(connection):
    if connection.vendor == "sqlite":
        execute_all(connection, sqlite_drop())


def install_sqlite_triggers(connection):
    """Idempotent; only once the triggers' migration is applied (and so every table they name exists)."""
    if connection.vendor != "sqlite":
        return
    if MIGRATION not in MigrationRecorder(connection).applied_migrations():
        return
    execute_all(connection, sqlite())
