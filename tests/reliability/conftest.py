"""One world with every kind of object and one user per role, shared by the reliability tests."""
from types import SimpleNamespace

import pytest
from django.contrib.auth.models import Group, User

from annotation import actions
from annotation.models import Annotation, BatchItem, Disagreement, Membership
from benchmarks.actions import import_items
from benchmarks.models import Benchmark, Item, Task
from modeleval.models import EvalRun, ModelSpec, Prediction, RunChunk, RunEvent
from tests.annotation.conftest import make_campaign, submit_score
from tests.conftest import DEMO_DATA

# The model-run fixtures, for the fault tests (workers killed, Redis stopped).
from tests.modeleval.conftest import demo_benchmark, packaged, researcher, start_worker, worker_env  # noqa: F401

# Campaign role of each user; "user" is signed in with no role, "researcher" is in the researchers group only.
CAMPAIGN_ROLES = {"annotator": "annotator", "qc": "qc", "expert": "expert", "viewer": "viewer"}
ROLES = ["anonymous", "user", "annotator", "qc", "expert", "viewer", "researcher", "staff"]


def build_world():
    import_items(DEMO_DATA / "diqad_sample.jsonl", "diqad", "diqad-demo")
    staff = User.objects.create_user("staff", password="pw", is_staff=True)
    people = {name: User.objects.create_user(name, password="pw") for name in ROLES[1:-1]}
    people["researcher"].groups.add(Group.objects.get_or_create(name="researchers")[0])
    campaign = make_campaign(staff, people, "diqad-demo", roles=CAMPAIGN_ROLES, overlap=1, batch_size=4)
    first, second = actions.cut_batches(campaign, actor=staff)
    annotator = people["annotator"]
    # Batch 1 labelled and handed in; the annotator keeps a live lease in batch 2.
    while (lease := actions.lease_next_item(campaign, annotator=annotator)).assignment.batch_item.batch == first:
        submit_score(lease.assignment, annotator, 2)
    actions.hand_in_batch(first, actor=annotator)
    actions.flag_item(lease.assignment, actor=annotator, comment="The last turn is cut off.")
    open_item = BatchItem.objects.filter(batch=second).exclude(pk=lease.assignment.batch_item_id).first()
    disagreement = Disagreement.objects.create(campaign=campaign, batch_item=open_item, round=1,
                                               settings=campaign.settings,
                                               labels=[{"annotator": "x", "value": 1}, {"annotator": "y", "value": 2}])
    gold = actions.create_gold_version(campaign, actor=staff, method="source")
    model = ModelSpec.objects.create(name="tiny", sha256="0" * 64)
    benchmark = Benchmark.objects.get(slug="diqad-demo")
    run = EvalRun.objects.create(model=model, benchmark=benchmark, mode="loglikelihood", prompt_template="{x}",
                                 prompt_sha256="0" * 64, prompt_version="custom")
    chunk = RunChunk.objects.create(run=run, index=0, item_ids=[Item.objects.first().pk])
    RunEvent.objects.create(run=run, kind="created")
    prediction = Prediction.objects.create(run=run, item=Item.objects.first(), chunk=chunk, parse_status="parsed")
    users = {**people, "staff": staff, "anonymous": None}
    pks = {"benchmark": benchmark.slug, "task": Task.objects.first().pk, "item": Item.objects.first().pk,
           "campaign": campaign.pk, "membership": Membership.objects.get(campaign=campaign, user=annotator).pk,
           "batch": first.pk, "assignment": lease.assignment.pk, "annotation": Annotation.objects.first().pk,
           "disagreement": disagreement.pk, "gold-version": gold.pk, "modelspec": model.name, "evalrun": run.pk,
           "prediction": prediction.pk}
    return SimpleNamespace(users=users, pks=pks, campaign=campaign, batches=(first, second), gold=gold, run=run)


@pytest.fixture
def world(db):
    return build_world()


def add_second_campaign(world):
    """A second campaign on the same benchmark where none of the world's roles is a member: its own
    annotators (named so that a leak is easy to spot), labels of its first batch, and an unfrozen draft gold
    version; and a second benchmark with no campaign at all."""
    staff = world.users["staff"]
    others = {name: User.objects.create_user(name, password="pw") for name in ("zeta-annotator", "zeta-viewer")}
    campaign = make_campaign(staff, others, "diqad-demo", roles={"zeta-annotator": "annotator",
                                                               "zeta-viewer": "viewer"}, overlap=1, batch_size=4)
    first, _ = actions.cut_batches(campaign, actor=staff)
    while (lease := actions.lease_next_item(campaign, annotator=others["zeta-annotator"])).assignment.batch_item.batch \
            == first:
        submit_score(lease.assignment, others["zeta-annotator"], 1)
    draft = actions.create_gold_version(campaign, actor=staff, method="source")
    import_items(DEMO_DATA / "dialogbench_sample.jsonl", "dialogbench", "db-demo")
    world.users.update(others)
    world.pks.update(campaign2=campaign.pk, draft2=draft.pk, gold1=world.gold.pk)
    world.campaign2, world.draft2 = campaign, draft
    return world


@pytest.fixture
def two_campaigns(world):
    return add_second_campaign(world)
@pytest.fixture
def empty_cache():
    """A clean cache (sign-in and report counters) before and after the test."""
    from django.core.cache import cache

    cache.clear()
    yield
    cache.clear()
