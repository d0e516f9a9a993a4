"""Human baseline: a seeded sample per task, every rater answers every item blind, scored both ways."""
import pytest

from annotation import actions
from annotation.models import Annotation, BatchItem
from benchmarks.models import Item

from .conftest import api, make_campaign, sid

RATERS = {"ann1": "ann1", "ann2": "ann2", "ann3": "ann3"}


def answer(rater, item):
    """ann1 is always right; ann2 and ann3 are wrong on every emotion item, ann2 also on intent items."""
    gold = item.source_gold["answer"]
    wrong = next(option for option in item.fields["options"] if option != gold)
    task = item.task.slug
    if rater != "ann1" and task == "emotion_detection" or rater == "ann2" and task == "intent_classification":
        return wrong
    return gold


@pytest.mark.django_db
def test_baseline_scores_both_ways(staff, people, dialogbench):
    roles = {"manager": "manager", "viewer": "viewer", **{name: "annotator" for name in RATERS}}
    campaign = make_campaign(staff, people, dialogbench, protocol="human_baseline", roles=roles, items_per_task=2,
                             seed=5)
    assert campaign.settings.overlap == 3
    actions.cut_batches(campaign, actor=staff)
    sampled = BatchItem.objects.filter(campaign=campaign).select_related("item__task")
    per_task = {}
    for bi in sampled:
        per_task.setdefault(bi.item.task.slug, []).append(bi.item.external_id)
    assert len(per_task) == 5 and all(len(ids) == 2 for ids in per_task.values())
    again = make_campaign(staff, people, dialogbench, protocol="human_baseline", roles={}, items_per_task=2, seed=5)
    actions.cut_batches(again, actor=staff)
    same_seed = BatchItem.objects.filter(campaign=again).values_list("item_id", flat=True)
    assert set(same_seed) == {bi.item_id for bi in sampled}

    for rater in RATERS:
        client = api(people[rater])
        while (body := client.post(f"/api/v1/campaigns/{campaign.pk}/next/").json())["status"] != "no_work":
            lease = body["assignment"]
            assert "source_gold" not in str(lease) and lease["form"]["primary"] == "answer"
            item = Item.objects.select_related("task").get(pk=lease["item"]["id"])
            body = {"client_submission_id": sid(), "answers": {"answer": answer(rater, item)}}
            submitted = client.post(f"/api/v1/assignments/{lease['id']}/submit/", body, format="json")
            assert submitted.status_code == 201
    assert Annotation.objects.filter(campaign=campaign).count() == 10 * 3
    assert not BatchItem.objects.filter(campaign=campaign).exclude(status="labelled").exists()

    response = api(people["viewer"]).get(f"/api/v1/campaigns/{campaign.pk}/baseline/")
    assert response.status_code == 200
    scores = response.json()
    tasks = {t["task"]: t for t in scores["tasks"]}
    emotion, intent = tasks["emotion_detection"], tasks["intent_classification"]
    assert emotion["majority"]["accuracy"] == 0 and emotion["majority"]["m"] == 2
    assert emotion["mean_of_raters"]["accuracy"] == pytest.approx(1 / 3)
    assert intent["majority"]["accuracy"] == 1 and intent["mean_of_raters"]["accuracy"] == pytest.approx(2 / 3)
    assert tasks["dialogue_nli"]["majority"]["accuracy"] == 1 == tasks["dialogue_nli"]["mean_of_raters"]["accuracy"]
    assert all(t["complete"] and t["n_raters"] == 3 and t["n_scored"] == 2 for t in scores["tasks"])
    assert scores["overall"]["majority"] == pytest.approx((0 + 1 + 1 + 1 + 1) / 5)
    assert scores["overall"]["mean_of_raters"] == pytest.approx((1 / 3 + 2 / 3 + 1 + 1 + 1) / 5)
    raters = {r["rater"]: r["accuracy"] for r in emotion["mean_of_raters"]["raters"]}
    assert raters == {"ann1": 1.0, "ann2": 0.0, "ann3": 0.0}
    # Scored against a gold version instead of source gold: the same here, and cited.
    version = actions.create_gold_version(campaign, actor=staff, method="source")
    cited = api(people["viewer"]).get(f"/api/v1/campaigns/{campaign.pk}/baseline/", {"gold_version": version.pk}).json()
    assert cited["gold"] == "db-demo@gold-v1" and cited["overall"] == scores["overall"]
    assert api(people["ann1"]).get(f"/api/v1/campaigns/{campaign.pk}/baseline/").status_code == 403
