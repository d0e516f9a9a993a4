"""The human baseline endpoint scores people by the reports' rules: a gold version made from the raters' own
labels (their campaign's, or a campaign sharing a rater) is refused as the reports refuse it, and its figures
carry the report's small-sample flags."""
import pytest

from tests.reports import factories
from tests.reports.test_misleading import api, baseline  # noqa: F401 (baseline: a fixture)


@pytest.mark.django_db
def test_the_baseline_endpoint_carries_the_reports_small_sample_flags(baseline):  # noqa: F811
    campaign = baseline["campaign"]
    viewer = api(factories.staff())
    scores = viewer.get(f"/api/v1/campaigns/{campaign.pk}/baseline/").json()
    n = sum(t["n_answered"] for t in scores["tasks"])
    assert scores["min_items"] == 30 and scores["overall"]["small_sample"] == f"small sample: {n} items < 30"
    assert all(t["small_sample"] == f"small sample: {t['n_answered']} items < 30" for t in scores["tasks"])
    # The report on the same campaign flags the same tasks with the same words.
    report = viewer.get("/api/v1/reports/", {"benchmark": "db", "campaign": campaign.pk}).json()
    flags = {t["task"]: t["small_sample"] for t in report["multiple_choice"]["tasks"]}
    assert flags == {t["task"]: t["small_sample"] for t in scores["tasks"]}
    assert report["multiple_choice"]["overall"]["small_sample"] == scores["overall"]["small_sample"]


@pytest.mark.django_db
def test_the_baseline_endpoint_refuses_gold_made_by_its_own_raters(baseline):  # noqa: F811
    campaign, manager = baseline["campaign"], baseline["manager"]
    client = api(manager)
    viewer = api(factories.staff())
    url = f"/api/v1/campaigns/{campaign.pk}/baseline/"
    source = viewer.get(url)
    assert source.status_code == 200
    scores = source.json()
    assert scores["overall"]["majority"] < 1.0

    # A gold version made from this campaign's majority: refused, as the report refuses it (before: 200, majority 1.0).
    made = client.post(f"/api/v1/campaigns/{campaign.pk}/gold_versions/", {}, format="json").json()
    draft = viewer.get(url, {"gold_version": made["id"]})
    assert client.post(f"/api/v1/gold-versions/{made['id']}/freeze/").status_code == 200
    refused = viewer.get(url, {"gold_version": made["id"]})
    for answer in (draft, refused):
        assert answer.status_code == 400, answer.content
        assert "derived from this campaign's own labels" in answer.json()["detail"]
    report = viewer.get("/api/v1/reports/", {"benchmark": "db", "campaign": campaign.pk,
                                             "gold_version": made["number"]})
    assert report.status_code == 400 and refused.json()["code"] == report.json()["code"]

    # Another campaign sharing a rater is refused too (before: 200).
    items = baseline["items"]
    raters = factories.users("humans-rater-", 3)
    other = factories.human_campaign(baseline["benchmark"], {i.pk: [i.source_gold["answer"]] * 2 for i in items},
                                     raters=[raters[0], factories.users("newcomer-", 1)[0]], name="second")
    shared = viewer.get(f"/api/v1/campaigns/{other.pk}/baseline/", {"gold_version": made["id"]})
    assert shared.status_code == 400 and "shares 1 rater(s)" in shared.json()["detail"]
    # A version copied from the source gold scores them (it is nobody's labels).
    copied = client.post(f"/api/v1/campaigns/{campaign.pk}/gold_versions/", {"method": "source"},
                         format="json").json()
    cited = viewer.get(url, {"gold_version": copied["id"]})
    assert cited.status_code == 200 and cited.json()["overall"] == {**scores["overall"]}
