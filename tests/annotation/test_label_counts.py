"""The label count each batch item keeps (BatchItem.labels in round labels_round, kept by the database's triggers)
against the labels themselves, through every door a label comes in or goes out by: submissions, a rejected
batch's next round, a bulk insert as the ratings importer makes, a deleted label, a label moved to another item.
The labeller's progress counts a batch's done items from it, so it must be the count a join of the labels gives."""
import pytest
from django.db.models import Count

from annotation import actions, selectors
from annotation.models import Annotation, BatchItem

from .conftest import make_campaign, send_back, sid, submit_score


def kept(batch):
    return {bi: (n, r) for bi, n, r in BatchItem.objects.filter(batch=batch).values_list("id", "labels",
                                                                                          "labels_round")}


def counted(batch):
    """What the labels say: per item, the count of its labels in its latest round with labels (0, 0 for none)."""
    out = {bi: (0, 0) for bi in BatchItem.objects.filter(batch=batch).values_list("id", flat=True)}
    rows = Annotation.objects.filter(batch_item__batch=batch).values("batch_item_id", "round").annotate(n=Count("id"))
    for row in sorted(rows, key=lambda r: r["round"]):
        out[row["batch_item_id"]] = (row["n"], row["round"])
    return out


def done_by_join(batch, overlap):
    batch.refresh_from_db()
    per_item = (Annotation.objects.filter(batch_item__batch=batch, round=batch.round).values("batch_item_id")
                .annotate(n=Count("id")))
    return sum(1 for row in per_item if row["n"] >= overlap)


@pytest.mark.django_db
def test_kept_counts_follow_submissions_rounds_imports_and_deletes(staff, people, diqad):
    campaign = make_campaign(staff, people, diqad, overlap=2, min_reading_seconds=0, batch_size=4, max_rounds=3)
    batch = actions.cut_batches(campaign, actor=people["manager"])[0]
    assert set(kept(batch).values()) == {(0, 0)}

    def check():
        assert kept(batch) == counted(batch)
        for who in ("ann1", "ann2", "manager"):
            progress = selectors.labeller_progress(batch.pk, people[who], campaign.pk)
            assert progress["done"] == done_by_join(batch, 2)
            assert progress == {**selectors.worker_progress(batch, people[who]),
                                "left_for_you": selectors.left_for(campaign, people[who])}

    check()
    for who in ("ann1", "ann2", "ann1"):  # one item with both labels, one with one
        lease = actions.lease_next_item(campaign, annotator=people[who]).assignment
        submit_score(lease, people[who], 2)
        check()
    while lease := actions.lease_next_item(campaign, annotator=people["ann1"]):
        submit_score(lease.assignment, people["ann1"], 2)
    while lease := actions.lease_next_item(campaign, annotator=people["ann2"]):
        submit_score(lease.assignment, people["ann2"], 2)
    check()
    assert selectors.worker_progress(batch, people["ann1"])["done"] == 4

    # QC sends the batch back: round 2 starts with no item done, round 1's counts stay on the items until a
    # round-2 label replaces them.
    send_back(batch, people, "scores too generous")
    batch.refresh_from_db()
    assert batch.round == 2
    check()
    assert selectors.worker_progress(batch, people["ann1"])["done"] == 0
    lease = actions.lease_next_item(campaign, annotator=people["ann2"]).assignment
    submit_score(lease, people["ann2"], 2)
    check()

    # Labels written many in one statement, as the ratings importer writes them (bulk_create).
    items = list(BatchItem.objects.filter(batch=batch).exclude(pk=lease.batch_item_id).order_by("position")[:2])
    Annotation.objects.bulk_create([
        Annotation(campaign=campaign, batch_item=bi, item_id=bi.item_id, annotator=people[who], round=2, slot=slot,
                   answers={"score": 1}, value=1, client_submission_id=sid(), submitted_at=lease.served_at)
        for bi in items for slot, who in ((1, "ann1"), (2, "ann3"))])
    check()
    assert selectors.worker_progress(batch, people["ann1"])["done"] == 2

    # Out again, and moved to another item.
    Annotation.objects.filter(batch_item=items[0], annotator=people["ann3"], round=2).delete()
    check()
    moved = Annotation.objects.get(batch_item=items[1], annotator=people["ann3"], round=2)
    moved.batch_item = items[0]
    moved.save(update_fields=["batch_item"])
    check()
    assert kept(batch)[items[0].pk] == (2, 2) and kept(batch)[items[1].pk] == (1, 2)
