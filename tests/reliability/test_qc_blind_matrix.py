"""The permission matrix for a blind QC (the settings' qc_blind): every endpoint the QC may call (every GET of
test_permission_matrix.MATRIX allowed to the QC, with the batch's own filters), the raw export in both formats,
the QC's pages and the answers of their own writes, before and after the QC's own label, and after the decision.

Every label of the batch under review (each annotator's value and answers, each final label, the sample's
final labels, the before/after of a changed answer, the labels of a decided disagreement) is rewritten to a
unique marker, and the labellers have marked names. Before their own label the QC reads no marker and no name;
after labelling one sampled item they read that item's markers and nothing else; once the batch is decided,
all of it. A viewer reads everything throughout (the markers are reachable).
"""
import re

import pytest
from django.contrib.auth.models import User
from django.test import Client
from rest_framework.test import APIClient

from annotation import actions
from annotation.models import Annotation, BatchItem, Disagreement, Event, Membership, QCSampleItem
from benchmarks.actions import import_items
from tests.annotation.conftest import DIQAD_ANSWERS, make_campaign, submit_score
from tests.conftest import DEMO_DATA

from .test_permission_matrix import MATRIX, QUERIES, ROLES, url_for

QC = ROLES.index("qc")
QC_GETS = sorted(name for (name, method), row in MATRIX.items() if method == "get" and row[QC] == "Y")
RATERS = ("zq-rater-one", "zq-rater-two")
MARK = re.compile(r"LBLMARK-[a-z]+\d+")


def marker(kind, pk):
    return f"LBLMARK-{kind}{pk}"


def label_batch(campaign, batch, user, scores):
    """The user labels the batch's items (their last lease, in the next batch, stays live)."""
    for score in scores:
        lease = actions.lease_next_item(campaign, annotator=user)
        assert lease.assignment.batch_item.batch_id == batch.pk
        submit_score(lease.assignment, user, score)


@pytest.fixture
def blind(db):
    """Batch 1 of a qc_blind campaign labelled twice by marked raters (one disagreement decided by the expert,
    one answer changed after the peer's label, one flag), handed in by a rater, then every label rewritten."""
    import_items(DEMO_DATA / "diqad_sample.jsonl", "diqad", "diqad-demo")
    staff = User.objects.create_user("staff", is_staff=True)
    people = {name: User.objects.create_user(name) for name in ("qc", "expert", "viewer", *RATERS)}
    campaign = make_campaign(staff, people, "diqad-demo", roles={"qc": "qc", "expert": "expert", "viewer": "viewer",
                                                                RATERS[0]: "annotator", RATERS[1]: "annotator"},
                             overlap=2, batch_size=4, qc_sample_size=2, qc_blind=True, seed=1,
                             disagreement_policy="adjudicate")
    first, _ = actions.cut_batches(campaign, actor=staff)
    one, two = people[RATERS[0]], people[RATERS[1]]
    label_batch(campaign, first, one, [2, 2, 2, 2])
    label_batch(campaign, first, two, [1, 2, 2, 2])
    last = Annotation.objects.filter(annotator=two).latest("submitted_at")
    actions.amend_annotation(last, annotator=two, answers=DIQAD_ANSWERS[0])
    actions.flag_item(last.assignment, actor=two, comment="I changed my mind.")
    for disagreement in Disagreement.objects.all():
        actions.resolve_disagreement(disagreement, actor=people["expert"], value=2, reason="rule 3")
    actions.hand_in_batch(first, actor=one)
    # Every label of the batch becomes a marker.
    for label in Annotation.objects.filter(batch_item__batch=first):
        label.value, label.answers = marker("a", label.pk), {"score": marker("a", label.pk)}
        label.save(update_fields=["value", "answers"])
    for item in BatchItem.objects.filter(batch=first):
        # An expert's decision is one of the labels here (the annotator model holds it fixed among them).
        given = Annotation.objects.filter(batch_item=item).order_by("pk").first()
        item.final_value = marker("a", given.pk) if item.final_method == "adjudicated" else marker("f", item.pk)
        item.save(update_fields=["final_value"])
    for entry in QCSampleItem.objects.filter(review__batch=first):
        entry.annotator_value = marker("s", entry.batch_item_id)
        entry.save(update_fields=["annotator_value"])
    for event in Event.objects.filter(batch=first, kind__in=("label_changed", "disagreement_resolved")):
        event.figures = {**event.figures, **{k: marker("e", event.pk) for k in ("before", "after", "labels", "value")
                                             if k in event.figures}}
        event.save(update_fields=["figures"])
    sample = list(QCSampleItem.objects.filter(review__batch=first).order_by("position"))
    pks = {"benchmark": "diqad-demo", "task": first.items.first().item.task_id, "campaign": campaign.pk,
           "batch": first.pk, "annotation": Annotation.objects.filter(batch_item=sample[0].batch_item).first().pk,
           "membership": Membership.objects.get(campaign=campaign, user=people["qc"]).pk}
    return {"campaign": campaign, "batch": first, "people": people, "sample": sample, "pks": pks}


def markers_of(world, batch_item_id):
    """The markers of one batch item: its labels, its final label, its sample entry, its label events."""
    item = BatchItem.objects.select_related("item").get(pk=batch_item_id)
    found = {marker("a", pk) for pk in Annotation.objects.filter(batch_item=item).values_list("pk", flat=True)}
    found |= {marker("f", item.pk), marker("s", item.pk)}
    found |= {marker("e", pk) for pk in Event.objects.filter(batch=world["batch"], figures__item=item.item.external_id)
              .values_list("pk", flat=True)}
    return found


def reads(world, user, writes=()):
    """{what: body} for everything the user reads of the campaign: the QC's GET endpoints, the batch's labels
    by filter, the export in both formats, the pages, and the answers of `writes` ((name, response) pairs)."""
    client = APIClient()
    client.force_authenticate(user)
    pages = Client()
    pages.force_login(user)
    c, b = world["campaign"].pk, world["batch"].pk
    bodies = {}
    for name in QC_GETS:
        response = client.get(url_for(name, world["pks"]), QUERIES.get(name))
        bodies[name] = (response.status_code, response.content.decode())
    for what, url, query in (("labels of the batch", "/api/v1/annotations/", {"batch": b}),
                             ("labels of the campaign", "/api/v1/annotations/", {"campaign": c}),
                             ("export csv", f"/api/v1/campaigns/{c}/annotations/export/", {"format": "csv"}),
                             ("export jsonl", f"/api/v1/campaigns/{c}/annotations/export/", {"format": "jsonl"})):
        response = client.get(url, query)
        bodies[what] = (response.status_code, response.content.decode())
    for url in ("/", f"/campaigns/{c}/dashboard/", f"/batches/{b}/review/"):
        response = pages.get(url)
        bodies[url] = (response.status_code, response.content.decode())
    for name, response in writes:
        bodies[name] = (response.status_code, response.content.decode())
    assert all(status < 500 for status, _ in bodies.values()), {k: s for k, (s, _) in bodies.items() if s >= 500}
    return bodies


def leaks(bodies, allowed=frozenset(), names=True):
    found = []
    for what, (_, body) in bodies.items():
        for mark in set(MARK.findall(body)) - set(allowed):
            found.append(f"{what}: {mark}")
        if names:
            found += [f"{what}: the name {name}" for name in RATERS if name in body]
    return found


@pytest.mark.django_db
def test_a_blind_qc_reads_no_label_and_no_name_before_their_own(blind):
    world, qc = blind, blind["people"]["qc"]
    client = APIClient()
    client.force_authenticate(qc)
    started = client.post(f"/api/v1/batches/{world['batch'].pk}/start_review/")
    assert started.status_code == 200
    before = reads(world, qc, writes=[("start_review", started)])
    assert not leaks(before), "\n".join(leaks(before))
    # The endpoints did answer: the sample, the batch's items and events were served.
    assert before["batch-qc-sample"][0] == 200 and '"blind":true' in before["batch-qc-sample"][1]
    assert before["batch-items"][1].count('"external_id"') == 4 and "handed_in" in before["batch-events"][1]
    assert before["annotation-detail"][0] == 404  # a hidden label is not found, as another campaign's

    # The QC labels the first sampled item: that item's labels and names are theirs to read now, no other's.
    first = world["sample"][0].batch_item_id
    labelled = client.post(f"/api/v1/batches/{world['batch'].pk}/qc_label/", {"batch_item": first, "value": 2},
                           format="json")
    assert labelled.status_code == 200
    after = reads(world, qc, writes=[("qc_label", labelled)])
    own = markers_of(world, first)
    assert not leaks(after, allowed=own, names=False), "\n".join(leaks(after, allowed=own, names=False))
    seen = set().union(*(MARK.findall(body) for _, body in after.values()))
    assert marker("s", first) in MARK.findall(after["qc_label"][1])
    assert {m for m in own if m.startswith("LBLMARK-a")} <= set(MARK.findall(after["labels of the batch"][1]))
    assert own & set(MARK.findall(after["batch-items"][1]))
    assert after["annotation-detail"][0] == 200 and seen <= own

    # Decided: the batch is the QC's to read in full.
    for entry in world["sample"][1:]:
        client.post(f"/api/v1/batches/{world['batch'].pk}/qc_label/", {"batch_item": entry.batch_item_id,
                                                                       "value": 2}, format="json")
    accepted = client.post(f"/api/v1/batches/{world['batch'].pk}/accept/",
                           {"reason": "fine", "override_reason": "markers never match"}, format="json")
    assert accepted.status_code == 200, accepted.content
    decided = reads(world, qc)
    everything = {marker("a", pk) for pk in Annotation.objects.filter(batch_item__batch=world["batch"])
                  .values_list("pk", flat=True)}
    assert everything <= set(MARK.findall(decided["labels of the batch"][1]))
    assert all(name in decided["export csv"][1] for name in RATERS)


@pytest.mark.django_db
def test_the_markers_are_reachable_by_a_reader_of_labels(blind):
    """The same reads by the campaign's viewer show every marker and name: what the QC did not see was hidden
    from them, not missing."""
    bodies = reads(blind, blind["people"]["viewer"])
    everything = {marker("a", pk) for pk in Annotation.objects.filter(batch_item__batch=blind["batch"])
                  .values_list("pk", flat=True)}
    assert everything <= set(MARK.findall(bodies["labels of the batch"][1]))
    assert everything <= set(MARK.findall(bodies["export jsonl"][1]))
    assert any(m.startswith("LBLMARK-e") for m in MARK.findall(bodies["batch-events"][1]))
    assert all(name in bodies["batch-events"][1] for name in RATERS)
