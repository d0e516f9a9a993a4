"""Who reads what, beyond the role matrix: items only through leases for those who label, no change to
labelled items, hand-in by the batch's own labellers, no admin door around the actions, reports cut to
the caller's campaigns, blind gold-panel experts, progress that tells nothing of peers' answers, and
membership requests that do not reveal usernames."""
import uuid

import pytest
from django.contrib.auth.models import User
from django.db import transaction
from rest_framework.test import APIClient

from annotation import actions
from annotation.models import Annotation, Assignment, Campaign, Disagreement, Event, Membership
from benchmarks.models import SHOWN_META, Item, Task
from tests.annotation.conftest import DIQAD_ANSWERS, make_campaign, submit_score

from .test_permission_matrix import MATRIX, QUERIES, url_for


def api(user):
    client = APIClient()
    client.raise_request_exception = False
    if user is not None:
        client.force_authenticate(user)
    return client


def users(*names):
    return {name: User.objects.create_user(name, password="pw") for name in names}


def label_batch(campaign, user, batch, score):
    """Lease and label items of `batch` until the next lease falls outside it; returns that lease."""
    while (lease := actions.lease_next_item(campaign, annotator=user)) and lease.assignment.batch_item.batch == batch:
        submit_score(lease.assignment, user, score)
    return lease


# ---------------------------------------------------------------- items, tasks, benchmarks

@pytest.mark.django_db
def test_labellers_read_items_only_through_their_leases(world):
    """Annotators and QC get no item from the items API (meta names the source system of arena items);
    readers of the campaign get the items, with meta and gold only where they may read the gold."""
    annotator, qc, viewer = (world.users[r] for r in ("annotator", "qc", "viewer"))
    item = world.pks["item"]
    for user in (annotator, qc):
        assert api(user).get("/api/v1/items/").json()["count"] == 0
        assert api(user).get(f"/api/v1/items/{item}/").status_code == 404
    shown = api(viewer).get(f"/api/v1/items/{item}/").json()
    assert {"meta", "source_gold", "content_hash"} <= set(shown)
    # A viewer who also labels on the benchmark reads the items without gold or hash, and only the meta a
    # lease shows (benchmarks.models.SHOWN_META: domain, language, personalities).
    actions.add_member(world.campaign, actor=world.users["staff"], user=annotator, role="viewer")
    shown = api(annotator).get(f"/api/v1/items/{item}/").json()
    assert "dialogue" in shown and not {"source_gold", "content_hash"} & set(shown)
    assert set(shown["meta"]) <= set(SHOWN_META)
    # Benchmarks and tasks: those of the user's campaigns.
    assert [b["slug"] for b in api(annotator).get("/api/v1/benchmarks/").json()["results"]] == ["diqad-demo"]
    assert api(world.users["user"]).get("/api/v1/tasks/").json()["count"] == 0


@pytest.mark.django_db
def test_items_and_tasks_in_use_are_not_changed_through_the_api(two_campaigns):
    staff = api(two_campaigns.users["staff"])
    labelled = Annotation.objects.first().item
    before = (labelled.fields, labelled.content_hash)
    response = staff.patch(f"/api/v1/items/{labelled.pk}/", {"fields": {"question": "changed"}}, format="json")
    assert response.status_code == 409 and response.json()["code"] == "in_use"
    labelled.refresh_from_db()
    assert (labelled.fields, labelled.content_hash) == before
    assert staff.put(f"/api/v1/items/{labelled.pk}/", {"task": labelled.task_id, "external_id": "x",
                                                       "dialogue": []}, format="json").status_code == 409
    task = labelled.task
    response = staff.patch(f"/api/v1/tasks/{task.pk}/", {"instructions": "changed"}, format="json")
    assert response.status_code == 409
    assert Task.objects.get(pk=task.pk).instructions != "changed"
    # Nothing refers to the other benchmark's items and tasks: staff may still correct them.
    spare = Item.objects.filter(task__benchmark__slug="db-demo").first()
    assert staff.patch(f"/api/v1/items/{spare.pk}/", {"fields": {**spare.fields, "note": "fixed"}},
                       format="json").status_code == 200
    assert staff.patch(f"/api/v1/tasks/{spare.task_id}/", {"instructions": "clearer"},
                       format="json").status_code == 200


@pytest.mark.django_db
def test_the_change_action_refuses_an_item_with_labels_and_writes_nothing(two_campaigns):
    from benchmarks.actions import InUse, change_unused

    labelled = Annotation.objects.first().item
    before = Item.objects.filter(pk=labelled.pk).values().get()
    with pytest.raises(InUse) as refused:
        change_unused(labelled, actor=two_campaigns.users["staff"], changes={"fields": {"question": "changed"}})
    assert refused.value.code == "in_use" and "annotations" in refused.value.kinds
    assert Item.objects.filter(pk=labelled.pk).values().get() == before
    with pytest.raises(InUse):
        change_unused(labelled.task, actor=two_campaigns.users["staff"], changes={"instructions": "changed"})


# ---------------------------------------------------------------- hand-in

@pytest.mark.django_db
def test_only_the_batchs_labellers_or_a_manager_hand_it_in(world):
    staff = world.users["staff"]
    people = users("ann1", "ann2", "boss")
    campaign = make_campaign(staff, people, "diqad-demo", roles={"ann1": "annotator", "ann2": "annotator",
                                                               "boss": "manager"}, overlap=1, batch_size=4)
    first, _ = actions.cut_batches(campaign, actor=staff)
    label_batch(campaign, people["ann1"], first, 2)
    url = f"/api/v1/batches/{first.pk}/hand_in/"
    response = api(people["ann2"]).post(url)
    assert response.status_code == 403 and response.json()["code"] == "forbidden"
    with transaction.atomic():
        assert api(people["boss"]).post(url).status_code == 200
        transaction.set_rollback(True)
    assert api(people["ann1"]).post(url).status_code == 200


# ---------------------------------------------------------------- admin

@pytest.mark.django_db
def test_admin_has_no_door_around_the_actions(world, client):
    root = User.objects.create_superuser("root", password="pw")
    client.force_login(root)
    client.raise_request_exception = False
    assert client.get("/admin/annotation/campaign/add/").status_code == 403
    response = client.post("/admin/annotation/campaign/add/", {"name": "x", "protocol": "production"})
    assert response.status_code == 403 and not Campaign.objects.filter(name="x").exists()
    # Members are added through actions.add_member: checked and recorded.
    newcomer = User.objects.create_user("newcomer")
    response = client.post("/admin/annotation/membership/add/", {"campaign": world.campaign.pk,
                                                                 "user": newcomer.pk, "role": "viewer"})
    assert response.status_code == 302, response.content[:500]
    assert Membership.objects.filter(user=newcomer, role="viewer", active=True).exists()
    assert Event.objects.filter(kind="member_added", figures__user="newcomer").exists()
    # The campaign's tasks are not changed from its admin page.
    page = client.get(f"/admin/annotation/campaign/{world.campaign.pk}/change/").content.decode()
    assert 'name="tasks"' not in page
    # Nor a labelled item or its task from theirs (the API refuses them too, 409 in_use).
    labelled = Annotation.objects.first().item
    for url in (f"/admin/benchmarks/item/{labelled.pk}/change/", f"/admin/benchmarks/task/{labelled.task_id}/change/"):
        page = client.get(url).content.decode()
        assert 'name="dialogue"' not in page and 'name="form"' not in page and 'name="external_id"' not in page, url
    spare = Item.objects.exclude(batch_items__isnull=False).exclude(annotations__isnull=False)
    spare = spare.exclude(predictions__isnull=False).exclude(gold_labels__isnull=False).first()
    if spare is not None:
        assert 'name="dialogue"' in client.get(f"/admin/benchmarks/item/{spare.pk}/change/").content.decode()


# ---------------------------------------------------------------- reports

@pytest.mark.django_db
def test_benchmark_report_shows_researchers_the_people_of_every_campaign(two_campaigns):
    """A benchmark-wide report's readers read every campaign of it (staff; researchers who label nowhere on it), so
    nobody's names are held back from them; a researcher who labels on the benchmark reads no report of it."""
    world = two_campaigns
    researcher = world.users["researcher"]
    report = api(researcher).get("/api/v1/reports/", {"benchmark": "diqad-demo"}).json()
    assert {row["campaign_id"] for row in report["annotators"]} == {world.campaign.pk, world.campaign2.pk}
    assert "people_hidden_for_campaigns" not in report["scope"]
    actions.add_member(world.campaign2, actor=world.users["staff"], user=researcher, role="annotator")
    assert api(researcher).get("/api/v1/reports/", {"benchmark": "diqad-demo"}).status_code == 403


@pytest.mark.django_db
def test_home_page_lists_only_reports_the_user_may_read(two_campaigns, client):
    world = two_campaigns
    client.force_login(world.users["viewer"])
    page = client.get("/").content.decode()
    assert f"?campaign={world.campaign.pk}" in page
    assert "Report: " not in page  # no benchmark-wide report for a campaign viewer
    client.force_login(world.users["annotator"])
    assert "/reports/" not in client.get("/").content.decode()


# ---------------------------------------------------------------- blind gold panel

@pytest.fixture
def panel(world):
    """A gold panel on the world's benchmark: alpha, bravo and charlie vote; the first item is a three-way tie.
    Every item's source gold is a marker string."""
    staff = world.users["staff"]
    people = users("panel-alpha", "panel-bravo", "panel-charlie")
    campaign = make_campaign(staff, people, "diqad-demo", protocol="gold_panel", overlap=3, batch_size=4,
                             roles={name: "expert" for name in people})
    first, _ = actions.cut_batches(campaign, actor=staff)
    for name, score in (("panel-alpha", 2), ("panel-bravo", 1), ("panel-charlie", 0)):
        lease = actions.lease_next_item(campaign, annotator=people[name])
        submit_score(lease.assignment, people[name], score)
    lease = actions.lease_next_item(campaign, annotator=people["panel-alpha"])  # a live lease on the next item
    for item in Item.objects.all():
        item.source_gold = {**(item.source_gold or {}), item.task.form["primary"]: f"GOLDMARK-{item.pk}"}
        item.save()
    gold = actions.create_gold_version(campaign, actor=staff, method="campaign")
    alpha = people["panel-alpha"]
    pks = {**world.pks, "campaign": campaign.pk, "batch": first.pk, "assignment": lease.assignment.pk,
           "membership": Membership.objects.get(campaign=campaign, user=alpha).pk,
           "annotation": Annotation.objects.get(campaign=campaign, annotator=alpha).pk,
           "disagreement": Disagreement.objects.get(campaign=campaign).pk, "gold-version": gold.pk}
    return alpha, campaign, pks


@pytest.mark.django_db
def test_gold_panel_experts_read_no_one_elses_names_votes_or_gold(panel, client):
    alpha, campaign, pks = panel
    leaks = []
    gets = sorted(name for name, method in MATRIX if method == "get")
    client.force_login(alpha)
    for name in gets:
        url = url_for(name, pks)
        for query in (QUERIES.get(name, {}), {"campaign": campaign.pk}):
            body = api(alpha).get(url, query).content.decode()
            leaks += [f"{url} {query}: {word}" for word in ("panel-bravo", "panel-charlie", "GOLDMARK") if word in body]
    pages = [f"/api/v1/reports/?benchmark=diqad-demo&campaign={campaign.pk}",
             f"/reports/diqad-demo/embed/?campaign={campaign.pk}", f"/campaigns/{campaign.pk}/disagreements/"]
    for page in pages:
        body = client.get(page).content.decode()
        leaks += [f"{page}: {word}" for word in ("panel-bravo", "panel-charlie", "GOLDMARK") if word in body]
    assert not leaks, "\n".join(leaks)
    disagreement = api(alpha).get(f"/api/v1/disagreements/{pks['disagreement']}/").json()
    assert disagreement["labels"] == []  # no votes either, not even without names
    for url in (f"/api/v1/campaigns/{campaign.pk}/baseline/", f"/api/v1/gold-versions/{pks['gold-version']}/labels/",
                f"/api/v1/batches/{pks['batch']}/events/"):
        assert api(alpha).get(url).status_code == 403, url
    assert Campaign.objects.get(pk=campaign.pk).protocol == "gold_panel"


# ---------------------------------------------------------------- progress

@pytest.mark.django_db
def test_the_last_labeller_learns_nothing_of_the_peers_answer(world):
    staff = world.users["staff"]
    people = users("ann1", "ann2")
    campaign = make_campaign(staff, people, "diqad-demo", roles={"ann1": "annotator", "ann2": "annotator"},
                             overlap=2, batch_size=4)
    actions.cut_batches(campaign, actor=staff)
    submit_score(actions.lease_next_item(campaign, annotator=people["ann1"]).assignment, people["ann1"], 2)
    lease = api(people["ann2"]).post(f"/api/v1/campaigns/{campaign.pk}/next/").json()["assignment"]
    seen = {}
    for score in (2, 1):  # the same as the peer, then not
        with transaction.atomic():
            response = api(people["ann2"]).post(f"/api/v1/assignments/{lease['id']}/submit/", {
                "answers": DIQAD_ANSWERS[score], "client_submission_id": str(uuid.uuid4())}, format="json")
            assert response.status_code == 201, response.content
            seen[score] = response.json()["progress"]
            following = api(people["ann2"]).post(f"/api/v1/campaigns/{campaign.pk}/next/").json()["assignment"]
            seen[f"next {score}"] = following["progress"]
            transaction.set_rollback(True)
    assert seen[2] == seen[1] and seen["next 2"] == seen["next 1"]
    assert "disagreements" not in seen[1] and seen[1]["mine"] == 1
    assert Assignment.objects.get(pk=lease["id"]).status == "leased"


# ---------------------------------------------------------------- memberships

@pytest.mark.django_db
def test_adding_a_member_reveals_no_usernames_to_non_managers(world):
    campaign = world.pks["campaign"]
    for role in ("user", "annotator", "expert", "viewer", "researcher"):
        answers = set()
        for username in ("annotator", "no-such-person"):
            response = api(world.users[role]).post("/api/v1/memberships/", {"campaign": campaign, "user": username,
                                                                             "role": "viewer"}, format="json")
            answers.add((response.status_code, response.content))
        assert len(answers) == 1 and answers.pop()[0] == 403, role
    for body in ({"campaign": 999999, "user": "no-such-person", "role": "viewer"}, [], {"campaign": "²"}):
        assert api(world.users["viewer"]).post("/api/v1/memberships/", body, format="json").status_code == 403
    assert api(world.users["staff"]).post("/api/v1/memberships/", {"campaign": campaign, "user": "no-such-person",
                                                                   "role": "viewer"}, format="json").status_code == 400
