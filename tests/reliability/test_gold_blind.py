"""An annotator cannot infer gold from any response: every item's source gold, and every gold label, is a
unique marker string, and no GET endpoint an annotator may call returns one of them, or anything from
which one can be recomputed (the content hash covers the gold)."""

import pytest
from django.db import transaction
from rest_framework.test import APIClient

from annotation import actions
from annotation.models import GoldLabel
from benchmarks.models import Item, content_hash

from .test_permission_matrix import MATRIX, QUERIES, ROLES, url_for

ANNOTATOR = ROLES.index("annotator")
GETS = sorted(name for (name, method), row in MATRIX.items() if method == "get" and row[ANNOTATOR] == "Y")


def marker(kind, pk):
    return f"GOLDMARK-{kind}-{pk:05d}"


@pytest.fixture
def marked(world):
    """Gold rewritten to markers after the world is built (the lease and labels exist already)."""
    for item in Item.objects.all():
        primary = item.task.form["primary"]
        item.source_gold = {**(item.source_gold or {}), primary: marker("source", item.pk)}
        item.save()
    for label in GoldLabel.objects.all():
        label.value = marker("label", label.pk)
        label.save(update_fields=["value"])
    return world


def annotator_bodies(world):
    client = APIClient()
    client.force_authenticate(world.users["annotator"])
    for name in GETS:
        url = url_for(name, world.pks)
        for page in (url, f"{url}{world.pks['item']}/" if name == "item-list" else None):
            if page:
                response = client.get(page, QUERIES.get(name))
                assert response.status_code == 200, (page, response.status_code)
                yield page, response.content.decode()
    with transaction.atomic():  # the lease response, as the annotation page receives it
        response = client.post(url_for("campaign-next-item", world.pks))
        transaction.set_rollback(True)
    yield "next", response.content.decode()


@pytest.mark.django_db
def test_no_annotator_response_contains_gold(marked):
    assert len(GETS) >= 10
    seen = {page: body for page, body in annotator_bodies(marked)}
    leaks = [f"{page}: {body[body.index('GOLDMARK') - 80:][:160]}" for page, body in seen.items() if "GOLDMARK" in body]
    assert not leaks, "\n".join(leaks)
    assert any("dq-00" in body for body in seen.values())  # the items themselves were served


@pytest.mark.django_db
def test_gold_cannot_be_recomputed_from_the_content_hash(world):
    """Gold values are few (a score, an option letter): trying each against the shown hash finds the gold
    (the other keys of source_gold are taken as known here; they come from small sets as well). The reader
    is a viewer who also labels on the benchmark: the items API shows them items, but no gold."""
    annotator = world.users["annotator"]
    actions.add_member(world.campaign, actor=world.users["staff"], user=annotator, role="viewer")
    client = APIClient()
    client.force_authenticate(annotator)
    recovered = {}
    for shown in client.get("/api/v1/items/").json()["results"]:
        item = Item.objects.select_related("task").get(pk=shown["id"])
        primary = item.task.form["primary"]
        question = next(q for q in item.task.form["questions"] if q["key"] == primary)
        options = question.get("options")
        values = [o["value"] for o in options] if isinstance(options, list) else list(item.fields.get("options", {}))
        for value in values:
            guess = {**(item.source_gold or {}), primary: value}
            if content_hash(shown["dialogue"], shown["fields"], shown.get("meta", item.meta),
                            guess) == shown.get("content_hash"):
                recovered[item.pk] = value
    assert shown and "content_hash" not in shown
    assert not recovered, f"gold recomputed for {len(recovered)} items from what annotators are shown"
