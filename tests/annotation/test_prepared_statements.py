"""core.sql's statements on PostgreSQL (core/postgresql/base.py): bound on the server, prepared once a connection
has run them prepare_threshold times, and written so that a prepared statement's generic plan still uses the
partial index of pending items (its condition in the text, not a parameter)."""
import pytest
from django.db import connection

from annotation import actions
from annotation.actions import leases
from annotation.models import BatchState
from core import sql

from .conftest import make_campaign, submit_score

pytestmark = pytest.mark.django_db


@pytest.fixture
def postgresql():
    if connection.vendor != "postgresql":
        print("skipping: prepared statements are PostgreSQL's (DATABASE_URL)")
        pytest.skip("prepared statements are PostgreSQL's (DATABASE_URL)")


def prepared_texts():
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements")
        return [row[0] for row in cursor.fetchall()]


def test_a_statement_run_often_is_prepared_and_the_orm_binds_on_the_client(postgresql):
    threshold = connection.connection.prepare_threshold
    assert threshold == 5
    for n in range(threshold + 1):
        assert sql.fetch_one("SELECT %s::int + 1 AS hb_prepared_probe", [n]) == (n + 1,)
    assert "SELECT $1::int + 1 AS hb_prepared_probe" in prepared_texts()
    # The ORM's statements keep Django's client-side binding (not all of them are valid bound on the server).
    with connection.cursor() as cursor:
        for n in range(threshold + 1):
            cursor.execute("SELECT %s::int + 2 AS hb_client_probe", [n])
    assert not [text for text in prepared_texts() if "hb_client_probe" in text]


def generic_plan(text, params):
    """EXPLAIN of `text` prepared and run under the plan PostgreSQL keeps for any parameters."""
    numbered = text
    for n in range(1, text.count("%s") + 1):
        numbered = numbered.replace("%s", f"${n}", 1)
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL plan_cache_mode = force_generic_plan")
        cursor.execute("SET LOCAL enable_seqscan = off")  # a few rows would take a sequential scan either way
        cursor.execute(f"PREPARE hb_generic AS {numbered}")
        try:
            values = ", ".join(str(v) if isinstance(v, int) else f"'{v}'" for v in params)
            cursor.execute(f"EXPLAIN EXECUTE hb_generic({values})")
            return "\n".join(row[0] for row in cursor.fetchall())
        finally:
            cursor.execute("DEALLOCATE hb_generic")


def test_the_free_item_statement_keeps_to_the_pending_index_when_prepared(postgresql, staff, people, diqad):
    campaign = make_campaign(staff, people, diqad, overlap=2, batch_size=8)
    batch = actions.cut_batches(campaign, actor=people["manager"])[0]
    actions.lease_next_item(campaign, annotator=people["ann1"])  # starts the batch
    plan = generic_plan(leases._free_batch_item_sql(),
                        sql.params(BatchState.ANNOTATING, batch.pk, people["ann2"].pk))
    # Walked in position order on the partial index, stopping at the first free item: no sort of the batch.
    assert "batch_item_pending" in plan, plan
    assert 'Sort Key: bi."position"' not in plan, plan


def rows_read(plan, relation):
    """Rows the executed plan (EXPLAIN ANALYZE, FORMAT JSON) read from `relation`, over every loop of each node."""
    own = plan.get("Actual Rows", 0) * plan.get("Actual Loops", 0) if plan.get("Relation Name") == relation else 0
    return own + sum(rows_read(child, relation) for child in plan.get("Plans", []))


@pytest.fixture
def forty_dialogues(db):
    """A benchmark of 40 rated dialogues (the demo file has 8: too few for reads that grow with labels x items)."""
    from benchmarks.importers.diqad import quality_form
    from benchmarks.models import Benchmark, Item, Task

    task = Task.objects.create(benchmark=Benchmark.objects.create(slug="forty", name="forty"), slug="q", name="q",
                               form=quality_form())
    Item.objects.bulk_create([Item(task=task, external_id=f"d{i}", content_hash=f"d{i}",
                                   dialogue=[{"speaker": "user", "text": f"hello {i}"}]) for i in range(40)])
    return "forty"


def test_the_labellers_progress_reads_the_batch_once_however_many_labels_they_gave(postgresql, staff, people,
                                                                                   forty_dialogues, monkeypatch):
    """The page asks for the labeller's progress after every submission. On tables without fresh statistics (a new
    campaign) its own-labels count was planned as a loop over the batch's items for each of the person's labels:
    the reads grew with labels x items and the page's cycle slowed as the person worked. Nor does it read the batch's
    labels, which grow with the overlap: two people label every item here."""
    from annotation import selectors

    campaign = make_campaign(staff, people, forty_dialogues, overlap=2)
    batch = actions.cut_batches(campaign, actor=people["manager"])[0]
    items = batch.items.count()
    for who in ("ann1", "ann2"):
        for _ in range(items):
            lease = actions.lease_next_item(campaign, annotator=people[who])
            if lease is None:
                break
            submit_score(lease.assignment if hasattr(lease, "assignment") else lease, people[who], 2)
    statements = []
    real = sql.fetch_one
    monkeypatch.setattr(sql, "fetch_one", lambda text, params: statements.append((text, params)) or real(text, params))
    progress = selectors.labeller_progress(batch.pk, people["ann1"].pk, campaign.pk)
    assert progress["mine"] == items > 10, progress
    text, params = statements[-1]
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN (ANALYZE, FORMAT JSON) {text}", params)
        plan = cursor.fetchone()[0][0]["Plan"]
    # Each pass over the batch's items reads each once (the counts, and the items left for this person).
    assert rows_read(plan, "annotation_batchitem") <= 3 * items, (rows_read(plan, "annotation_batchitem"), items)
    # The batch's labels are not read: its items keep their counts (BatchItem.labels); only the person's own are.
    assert rows_read(plan, "annotation_annotation") <= progress["mine"], rows_read(plan, "annotation_annotation")
