"""Fields written for models (benchmarks.models.MODEL_FIELDS: DialogBench's released prompt_SFT and
prompt_pretrain) never reach a person: every page and every API answer people read, for every role, is walked
for an item imported from a DialogBench-shaped released file, and the prompts' text is looked for in each.

The model-run routes (model specs, runs, predictions: the record of what a model was asked) are for the
researchers who run the models and are left out of the walk on purpose."""
import contextlib
import json
import re
import uuid

import pytest
from django.contrib.auth.models import Group, User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import transaction
from django.urls import URLPattern, URLResolver, get_resolver, reverse
from rest_framework.test import APIClient

from annotation import actions
from annotation.models import Annotation, BatchItem, Disagreement, Membership, QCSampleItem
from benchmarks.actions import import_items
from benchmarks.models import MODEL_FIELDS, Item, Task, shown_fields
from studies.dialogbench.recipe import PROMPTS, option_str

from .test_permission_matrix import api_routes, url_for

# The instructions the prompts hold and nothing else on the site says.
SFT_INSTRUCTION = "only output the option letter corresponding to the correct answer"
PRETRAIN_INSTRUCTION = "generate the correct answer according to the given question"
MODEL_ROUTES = ("modelspec-", "evalrun-", "prediction-")
ROLES = ("annotator", "qc", "expert", "viewer", "manager", "panel", "researcher", "staff")


def released_line(number):
    dialogue = f"speaker1: Can you book a table for {number + 2} tonight?\nspeaker2: Sure, which restaurant?"
    options = {"A": "Book a table", "B": "Cancel a booking", "C": "Ask for the menu", "D": "Complain"}
    values = {"option_str": option_str(options), "dialogue_content": dialogue,
              "test_question": "What does speaker1 want?"}
    return {"prompt_pretrain": PROMPTS["Conversational QA Pretrain En"].format(**values),
            "prompt_SFT": dialogue + "\n" + PROMPTS["Conversational QA En"].format(**values),
            "choices": options, "label": "A", "id": f"cqa-{number}"}


def write_released(folder, n=8):
    """A released DialogBench file as kwai/DialogBench's evaluation code reads it, named by its released task."""
    path = folder / "Conversational_QA.json"
    path.write_text("\n".join(json.dumps(released_line(i)) for i in range(n)), encoding="utf-8")
    return path


@pytest.fixture
def released_world(db, tmp_path):
    """A DialogBench production campaign (annotator, QC, expert, viewer, manager) with a labelled, handed-in batch
    under review, a flag and an open disagreement; a gold panel on the same items with an expert's live lease."""
    import_items(write_released(tmp_path), "dialogbench_released", "db-released")
    staff = User.objects.create_user("staff", password="pw", is_staff=True)
    people = {name: User.objects.create_user(name, password="pw") for name in ROLES[:-1]}
    people["researcher"].groups.add(Group.objects.get_or_create(name="researchers")[0])
    campaign = actions.create_campaign(actor=staff, name="released", benchmark="db-released", protocol="production",
                                       settings={"auto_hand_in": False, "overlap": 1, "batch_size": 4})
    for name in ("annotator", "qc", "expert", "viewer", "manager"):
        actions.add_member(campaign, actor=staff, user=people[name], role=name)
    first, second = actions.cut_batches(campaign, actor=staff)
    annotator = people["annotator"]
    while (lease := actions.lease_next_item(campaign, annotator=annotator)).assignment.batch_item.batch == first:
        actions.submit_annotation(lease.assignment, annotator=annotator, answers={"answer": "A"},
                                  client_submission_id=str(uuid.uuid4()))
    actions.hand_in_batch(first, actor=annotator)
    actions.start_review(first, actor=people["qc"])
    actions.flag_item(lease.assignment, actor=annotator, comment="Is the question clear?")
    open_item = BatchItem.objects.filter(batch=second).exclude(pk=lease.assignment.batch_item_id).first()
    disagreement = Disagreement.objects.create(campaign=campaign, batch_item=open_item, round=1,
                                               settings=campaign.settings,
                                               labels=[{"annotator": "x", "value": "A"},
                                                       {"annotator": "y", "value": "B"}])
    gold = actions.create_gold_version(campaign, actor=staff, method="source")
    panel = actions.create_campaign(actor=staff, name="panel", benchmark="db-released", protocol="gold_panel",
                                    settings={"auto_hand_in": False, "overlap": 1, "batch_size": 4})
    actions.add_member(panel, actor=staff, user=people["panel"], role="expert")
    actions.cut_batches(panel, actor=staff)
    panel_lease = actions.lease_next_item(panel, annotator=people["panel"])
    users = {**people, "staff": staff}
    pks = {"benchmark": "db-released", "task": Task.objects.get().pk, "item": open_item.item_id,
           "campaign": campaign.pk, "membership": Membership.objects.get(campaign=campaign, user=annotator).pk,
           "batch": first.pk, "assignment": lease.assignment.pk, "annotation": Annotation.objects.first().pk,
           "disagreement": disagreement.pk, "gold-version": gold.pk}
    return {"users": users, "pks": pks, "campaign": campaign, "panel": panel, "panel_lease": panel_lease,
            "batch": first}


def leaked(content):
    """The model fields' names or text found in a response body (JSON unescaped), else an empty list."""
    text = content.decode("utf-8", "replace")
    with contextlib.suppress(ValueError):
        text += json.dumps(json.loads(text), ensure_ascii=False)
    prompts = {value for item in Item.objects.all() for key, value in item.fields.items() if key in MODEL_FIELDS}
    # The names as keys of an answer (the upload page's table of formats names them, as it should).
    keys = [f'"{name}":' for name in MODEL_FIELDS]
    found = [needle for needle in (*keys, SFT_INSTRUCTION, PRETRAIN_INSTRUCTION) if needle in text]
    return found + [f"a whole {len(p)}-character prompt" for p in prompts if p in text]


def page_routes():
    """{name: route} of every named page outside the API, admin and the sign-in pages."""
    def walk(resolver, prefix):
        for pattern in resolver.url_patterns:
            if isinstance(pattern, URLResolver):
                yield from walk(pattern, prefix + str(pattern.pattern))
            elif isinstance(pattern, URLPattern) and pattern.name:
                yield pattern.name, prefix + str(pattern.pattern)
    skip = ("api/", "admin/", "accounts/", "auth/", "i18n/", "jsi18n/")
    return {name: route for name, route in walk(get_resolver(), "") if not route.startswith(skip)}


def page_urls(world):
    pks = world["pks"]
    kwargs = {"annotate": {"pk": pks["campaign"]}, "disagreements": {"pk": pks["campaign"]},
              "dashboard": {"pk": pks["campaign"]}, "assignment": {"pk": pks["assignment"]},
              "review": {"pk": pks["batch"]}, "manage-campaign": {"pk": pks["campaign"]},
              "manage-settings": {"pk": pks["campaign"]}, "manage-members": {"pk": pks["campaign"]}}
    urls = []
    for name, route in page_routes().items():
        if "<" not in route:
            urls.append(reverse(name))
        elif name in kwargs:
            urls.append(reverse(name, kwargs=kwargs[name]))
        elif route.startswith("reports/<slug:slug>/"):
            urls.append(reverse(name, kwargs={"slug": "db-released", **({"fmt": "json"} if "fmt" in route else {})})
                        + f"?campaign={pks['campaign']}")
    urls += [reverse("annotate", kwargs={"pk": world["panel"].pk}),
             reverse("assignment", kwargs={"pk": world["panel_lease"].assignment.pk}),
             reverse("manage-upload"), reverse("manage-campaign-new") + "?benchmark=db-released"]
    return urls


@pytest.mark.django_db
def test_no_person_reads_the_model_fields(released_world, client):
    world = released_world
    item = Item.objects.get(pk=world["pks"]["item"])
    assert set(MODEL_FIELDS) <= set(item.fields)  # kept for the model runs
    assert shown_fields(item)["test_question"] == "What does speaker1 want?"  # the question people need stays
    api_urls = [url_for(name, world["pks"]) for name in sorted(api_routes())
                if not name.startswith(MODEL_ROUTES) and "get" in allowed(name)]
    api_urls += ["/api/v1/items/?benchmark=db-released", f"/api/v1/batches/{world['batch'].pk}/qc_sample/",
                 f"/api/v1/campaigns/{world['pks']['campaign']}/annotations/export/?format=jsonl"]
    found, read = [], 0
    for role, user in world["users"].items():
        api = APIClient()
        api.raise_request_exception = False
        api.force_authenticate(user)
        with transaction.atomic():  # the lease a labeller is given, as their page asks for it
            for campaign in (world["campaign"], world["panel"]):
                response = api.post(f"/api/v1/campaigns/{campaign.pk}/next_item/", {}, format="json")
                read += response.status_code == 200
                found += [f"POST next_item {role}: {what}" for what in leaked(response.content)]
            transaction.set_rollback(True)
        for url in api_urls:
            query = {"benchmark": "db-released", "campaign": world["pks"]["campaign"], "format": "json"} \
                if url.rstrip("/").endswith("reports") else None
            response = api.get(url, query)
            read += response.status_code == 200
            found += [f"GET {url} {role}: {what}" for what in leaked(response.content)]
        client.force_login(user)
        for url in page_urls(world):
            response = client.get(url)
            read += response.status_code == 200
            found += [f"page {url} {role}: {what}" for what in leaked(response.content)]
    assert read > 100  # the walk read answers, not only refusals
    assert not found, "\n".join(found)


def allowed(name):
    view = api_routes()[name][1]
    if actions_ := getattr(view, "actions", None):
        return set(actions_)
    return {m for m in view.cls.http_method_names if hasattr(view.cls, m)}


@pytest.mark.django_db
def test_qc_sample_and_items_api_keep_the_question_not_the_prompts(released_world):
    qc = APIClient()
    qc.force_authenticate(released_world["users"]["qc"])
    sample = qc.get(f"/api/v1/batches/{released_world['batch'].pk}/qc_sample/").json()
    fields = [entry["item"]["fields"] for entry in sample["sample"]]
    assert fields and all(f["test_question"] == "What does speaker1 want?" and not set(f) & set(MODEL_FIELDS)
                          for f in fields)
    assert QCSampleItem.objects.exists()


@pytest.mark.django_db
def test_an_item_changed_through_the_api_keeps_its_model_fields(tmp_path):
    import_items(write_released(tmp_path, 1), "dialogbench_released", "db-released")
    staff = APIClient()
    staff.force_authenticate(User.objects.create_user("boss", is_staff=True))
    item = Item.objects.get()
    shown = staff.get(f"/api/v1/items/{item.pk}/").json()
    assert not set(shown["fields"]) & set(MODEL_FIELDS)
    response = staff.patch(f"/api/v1/items/{item.pk}/", {"fields": {**shown["fields"], "note": "checked"}},
                           format="json")
    assert response.status_code == 200, response.content
    item.refresh_from_db()
    assert item.fields["note"] == "checked" and item.fields["prompt_SFT"] == released_line(0)["prompt_SFT"]
    refused = staff.patch(f"/api/v1/items/{item.pk}/", {"fields": ["not", "named"]}, format="json")
    assert refused.status_code == 400 and "fields" in refused.json()["errors"]


@pytest.mark.django_db
def test_a_released_task_shows_its_released_name_beside_ours(tmp_path, client):
    """Conversational_QA.json holds our Intent classification: the manager sees both names."""
    import_items(write_released(tmp_path, 2), "dialogbench_released", "db-released")
    task = Task.objects.get(benchmark__slug="db-released")
    assert (task.name, task.source_names) == ("Intent classification", ["Conversational_QA"])
    assert task.names == "Intent classification (in the source data: Conversational_QA)"
    client.force_login(User.objects.create_user("boss", is_staff=True, is_superuser=True))
    page = client.get(reverse("manage-campaign-new") + "?benchmark=db-released").content.decode()
    assert re.search(r"Intent classification \(in the source data: Conversational_QA\)", page)
    # The upload page says so as soon as the file is in.
    response = client.post(reverse("manage-upload"), {
        "file": SimpleUploadedFile("Conversational_QA.json", write_released(tmp_path, 3).read_bytes()),
        "new_benchmark": "db-uploaded", "format": ""}, follow=True)
    assert ("Named otherwise in the source data: Intent classification (in the source data: Conversational_QA)."
            in response.content.decode())
    # A file named by our own name adds no other name.
    (tmp_path / "intent_classification.json").write_text(json.dumps({**released_line(5), "id": "other"}))
    import_items(tmp_path / "intent_classification.json", "dialogbench_released", "db-released")
    assert Task.objects.get(benchmark__slug="db-released").source_names == ["Conversational_QA"]
