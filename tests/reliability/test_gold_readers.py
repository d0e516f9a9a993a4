"""Who reads every benchmark's gold, one rule (benchmarks.permissions.reads_all_gold): staff and researchers. A
researcher reads every campaign's gold and reports as well, but nothing of the gold of a benchmark they label on
(annotator, QC or a gold panel's voter in any of its campaigns): not its items' source gold or meta, not its
campaigns' gold versions, not its reports, not its model runs' predictions. Staff read everything, whatever else
they hold."""
import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from annotation import actions
from benchmarks.models import Item, shown_meta

LABELLED, OTHER = "diqad-demo", "db-demo"  # the world's benchmark, and the one without campaigns (two_campaigns)


def api(user):
    client = APIClient()
    client.raise_request_exception = False
    client.force_login(user)
    return client


def items_of(client, slug):
    response = client.get("/api/v1/items/", {"benchmark": slug, "limit": 1000})
    assert response.status_code == 200
    return response.json()["results"]


def gold_reads(client, world):
    """What of campaign 1's gold and reports the client is shown: name -> shown."""
    campaign, gold = world.campaign.pk, world.gold.pk
    listed = client.get("/api/v1/gold-versions/", {"campaign": campaign})
    reads = {
        "gold versions": listed.status_code == 200 and bool(listed.json()["results"]),
        "gold version": client.get(f"/api/v1/gold-versions/{gold}/").status_code == 200,
        "gold labels": client.get(f"/api/v1/gold-versions/{gold}/labels/").status_code == 200,
        "campaign report": client.get("/api/v1/reports/", {"benchmark": LABELLED, "campaign": campaign}
                                      ).status_code == 200,
        "campaign report page": client.get(reverse("report-page", args=[LABELLED]), {"campaign": campaign}
                                           ).status_code == 200,
        "benchmark report": client.get("/api/v1/reports/", {"benchmark": LABELLED}).status_code == 200,
        "benchmark report page": client.get(reverse("report-page", args=[LABELLED])).status_code == 200,
    }
    for fmt in ("csv", "json"):
        download = client.get(reverse("report-download", args=[LABELLED, fmt]), {"campaign": campaign})
        reads[f"campaign report as {fmt}"] = download.status_code == 200
    return reads


@pytest.mark.django_db
def test_a_researcher_reads_every_campaigns_gold_and_report(two_campaigns):
    """Not a member of any campaign, the researcher reads campaign 1's gold versions and its report (the API and
    the page), and the home page links the reports."""
    world = two_campaigns
    client = api(world.users["researcher"])
    reads = gold_reads(client, world)
    assert all(reads.values()), reads
    assert client.get("/api/v1/predictions/", {"run": world.run.pk}).json()["results"]
    versions = client.get("/api/v1/gold-versions/").json()["results"]
    assert {row["campaign"] for row in versions} == {world.campaign.pk, world.campaign2.pk}
    home = client.get("/").content.decode()
    assert reverse("report-page", args=[LABELLED]) in home and reverse("report-page", args=[OTHER]) in home


@pytest.mark.parametrize("role", ["annotator", "qc"])
@pytest.mark.django_db
def test_a_researcher_who_labels_on_a_benchmark_reads_none_of_its_gold(two_campaigns, role):
    """Labelling in campaign 2 (and a viewer there, which would show them its items): no source gold, content hash
    or full meta of the benchmark's items, none of its campaigns' gold or reports; the other benchmark as before."""
    world = two_campaigns
    researcher, staff = world.users["researcher"], world.users["staff"]
    for item in Item.objects.filter(task__benchmark__slug=LABELLED):  # meta that names the answer's source
        item.meta = {**item.meta, "source_a": f"MARK-{item.pk}"}
        item.save(update_fields=["meta"])
    actions.add_member(world.campaign2, actor=staff, user=researcher, role=role)
    client = api(researcher)
    assert not any(gold_reads(client, world).values())
    assert client.get("/api/v1/gold-versions/").json()["results"] == []
    # Model runs on the benchmark show whether the model matched its gold.
    run = world.run.pk
    assert client.get("/api/v1/runs/", {"benchmark": LABELLED}).json()["results"] == []
    assert client.get(f"/api/v1/runs/{run}/").status_code == 404
    assert client.get(f"/api/v1/runs/{run}/summary/").status_code == 404
    assert client.get("/api/v1/predictions/", {"run": run}).json()["results"] == []

    actions.add_member(world.campaign2, actor=staff, user=researcher, role="viewer")
    shown = items_of(client, LABELLED)
    assert shown
    detail = client.get(f"/api/v1/items/{shown[0]['id']}/").json()
    for row in [*shown, detail]:
        assert "source_gold" not in row and "content_hash" not in row, row
        assert row["meta"] == shown_meta(Item.objects.get(pk=row["id"])) and "source_a" not in row["meta"]
    assert not any(gold_reads(client, world).values())
    home = client.get("/").content.decode()
    assert reverse("report-page", args=[LABELLED]) not in home

    other = items_of(client, OTHER)
    assert other and all("source_gold" in row and "content_hash" in row for row in other)
    assert reverse("report-page", args=[OTHER]) in home


@pytest.mark.django_db
def test_staff_who_label_still_read_everything(two_campaigns):
    world = two_campaigns
    staff = world.users["staff"]
    actions.add_member(world.campaign2, actor=staff, user=staff, role="annotator")
    client = api(staff)
    reads = gold_reads(client, world)
    assert all(reads.values()), reads
    assert client.get("/api/v1/predictions/", {"run": world.run.pk}).json()["results"]
    rows = items_of(client, LABELLED)
    assert rows and all("source_gold" in row and row["meta"] == Item.objects.get(pk=row["id"]).meta for row in rows)
