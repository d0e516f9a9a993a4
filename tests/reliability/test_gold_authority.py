"""Issue finding: a manager of one campaign replaced the gold of every other campaign on the benchmark.
Which gold a report cites is chosen by whoever owns the report; benchmark-wide gold needs a permission."""
import pytest
from django.contrib.auth.models import Permission

from annotation import actions
from tests.reports import factories
from tests.reports.test_misleading import api, baseline  # noqa: F401  (fixture)

pytestmark = pytest.mark.django_db


def test_a_manager_of_one_campaign_cannot_replace_another_campaigns_gold(baseline):
    campaign_a, bench = baseline["campaign"], baseline["benchmark"]
    # Campaign A pins a source-method gold of its own.
    own = actions.freeze_gold_version(actions.create_gold_version(campaign_a, actor=baseline["manager"],
                                                                  method="source"), actor=baseline["manager"])
    pin = api(baseline["manager"]).post(f"/api/v1/campaigns/{campaign_a.pk}/pinned_gold/",
                                        {"gold_version": own.number, "reason": "published gold"}, format="json")
    assert pin.status_code == 200 and pin.json()["pinned_gold"] == own.citation
    assert campaign_a.events.filter(kind="gold_version_pinned", figures__citation=own.citation).exists()
    before = api(factories.staff()).get("/api/v1/reports/", {"benchmark": "db", "campaign": campaign_a.pk}).json()
    # Campaign B's manager makes and freezes another gold (a different labelling of the same items).
    campaign_b = factories.human_campaign(bench, {i.pk: [i.source_gold["answer"]] * 2 for i in baseline["items"]},
                                          name="other")
    manager_b = factories.users("manager-b-", 1)[0]
    actions.add_member(campaign_b, actor=factories.staff(), user=manager_b, role="manager")
    labels = {i.pk: next(k for k in i.fields["options"] if k != i.source_gold["answer"]) for i in baseline["items"]}
    foreign = factories.GoldVersion.objects.create(benchmark=bench, campaign=campaign_b, number=own.number + 1)
    factories.GoldLabel.objects.bulk_create([factories.GoldLabel(version=foreign, item_id=i, value=v, method="source")
                                             for i, v in labels.items()])
    foreign = actions.freeze_gold_version(foreign, actor=manager_b)
    staff = api(factories.staff())
    report = staff.get("/api/v1/reports/", {"benchmark": "db", "campaign": campaign_a.pk}).json()
    assert report["gold"]["citation"] == own.citation and report["gold"]["chosen_by"] == "campaign"
    # The annotators' accuracy in A's report is against A's own gold, whatever B's manager froze.
    accuracy = {r["annotator"]: r["accuracy_vs_gold"] for r in report["annotators"]}
    assert accuracy == {r["annotator"]: r["accuracy_vs_gold"] for r in before["annotators"]}
    assert "pinned for campaign" in report["gold"]["why"] and "published gold" in report["gold"]["why"]
    # B's manager cannot make it the benchmark's gold, nor can A's manager pin B's gold.
    refused = api(manager_b).post(f"/api/v1/gold-versions/{foreign.pk}/benchmark_gold/", {}, format="json")
    assert refused.status_code == 403
    taken = api(baseline["manager"]).post(f"/api/v1/campaigns/{campaign_a.pk}/pinned_gold/",
                                          {"gold_version": foreign.number}, format="json")
    assert taken.status_code == 403 and f"campaign {campaign_b.pk}" in taken.json()["detail"]
    whole = staff.get("/api/v1/reports/", {"benchmark": "db"}).json()
    assert whole["gold"]["citation"] == "source" and "no gold is chosen" in whole["gold"]["why"]
    # A holder of the benchmark permission may choose it; then benchmark reports cite it, campaign A's does not.
    manager_b.user_permissions.add(Permission.objects.get(codename="choose_benchmark_gold"))
    manager_b = type(manager_b).objects.get(pk=manager_b.pk)
    assert api(manager_b).post(f"/api/v1/gold-versions/{foreign.pk}/benchmark_gold/", {},
                               format="json").status_code == 200
    assert staff.get("/api/v1/reports/", {"benchmark": "db"}).json()["gold"]["citation"] == foreign.citation
    assert staff.get("/api/v1/reports/", {"benchmark": "db", "campaign": campaign_a.pk}).json()["gold"]["citation"] == \
        own.citation
