"""Raw annotations of a campaign as CSV and JSON lines: one row per label, every round."""
import csv
import io
import json

import pytest

from annotation import actions
from benchmarks.spreadsheet import safe_cell

from .conftest import api, make_campaign, send_back, submit_score

pytestmark = pytest.mark.django_db
EXPORT = "/api/v1/campaigns/{}/annotations/export/?format={}"


@pytest.fixture
def rejected_once(staff, people, diqad):
    """Batch 1 labelled by an annotator whose name a spreadsheet would read as a formula, rejected by QC,
    and labelled again in round 2: round 1's labels are superseded."""
    people["ann1"].username = "@ann1"
    people["ann1"].save()
    campaign = make_campaign(staff, people, diqad, roles={"ann1": "annotator", "qc": "qc", "viewer": "viewer",
                                                          "expert": "expert", "ann2": "annotator"},
                             overlap=1, batch_size=4, qc_sample_size=4, min_reading_seconds=0, seed=1)
    batch = actions.cut_batches(campaign, actor=staff)[0]
    scores = iter([2, -1, 1, 0])
    while (lease := actions.lease_next_item(campaign, annotator=people["ann1"])) and \
            lease.assignment.batch_item.batch == batch:
        submit_score(lease.assignment, people["ann1"], next(scores))
    actions.release_assignment(lease.assignment, annotator=people["ann1"])
    send_back(batch, people, "too generous", handed_in_by="ann1")
    for _ in range(2):
        lease = actions.lease_next_item(campaign, annotator=people["ann1"])
        submit_score(lease.assignment, people["ann1"], 1)
    return campaign


def test_csv_has_one_row_per_label_with_round_reading_time_and_superseded_flag(rejected_once, people):
    response = api(people["viewer"]).get(EXPORT.format(rejected_once.pk, "csv"))
    assert response.status_code == 200, response.content
    assert response["Content-Type"].startswith("text/csv")
    assert f"annotations-campaign-{rejected_once.pk}.csv" in response["Content-Disposition"]
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert len(rows) == 6 == rejected_once.annotations.count()
    assert {r["annotator"] for r in rows} == {"'@ann1"}  # read as text, not as a formula
    assert sorted((r["round"], r["superseded"]) for r in rows) == [("1", "true")] * 4 + [("2", "false")] * 2
    assert "-1" in {r["value"] for r in rows}  # an exclusion code is a number, not '-1
    first = rows[0]
    assert first["task"] == "diqad-quality" and first["item_external_id"] and first["batch"] == "1"
    assert float(first["reading_seconds"]) >= 0 and first["submitted_at"]
    assert json.loads(first["answers"])["score"] == int(first["value"])


def test_json_lines_keep_the_values_as_stored(rejected_once, people):
    response = api(people["qc"]).get(EXPORT.format(rejected_once.pk, "jsonl"))
    assert response.status_code == 200 and response["Content-Type"].startswith("application/x-ndjson")
    rows = [json.loads(line) for line in response.content.decode().splitlines()]
    assert len(rows) == 6 and {r["annotator"] for r in rows} == {"@ann1"}
    assert sorted(r["value"] for r in rows if r["superseded"]) == [-1, 0, 1, 2]
    assert all(isinstance(r["answers"], dict) and r["reading_seconds"] is not None for r in rows)
    assert {r["round"] for r in rows if not r["superseded"]} == {2}


def test_same_readers_as_the_annotations_api(rejected_once, people, staff):
    """Label readers of the campaign (and staff) export; its annotators, outsiders and strangers do not."""
    for name in ("viewer", "qc", "expert"):
        assert api(people[name]).get(EXPORT.format(rejected_once.pk, "csv")).status_code == 200, name
    assert api(staff).get(EXPORT.format(rejected_once.pk, "jsonl")).status_code == 200
    refused = api(people["ann2"]).get(EXPORT.format(rejected_once.pk, "csv"))
    assert refused.status_code == 403 and refused["Content-Type"].startswith("application/json")
    assert api(people["outsider"]).get(EXPORT.format(rejected_once.pk, "csv")).status_code == 404
    assert api().get(EXPORT.format(rejected_once.pk, "csv")).status_code in (401, 403)


def test_a_gold_panels_experts_vote_blind_and_may_not_export(staff, people, dialogbench):
    panel = make_campaign(staff, people, dialogbench, protocol="gold_panel",
                          roles={"expert": "expert", "viewer": "viewer"})
    assert api(people["expert"]).get(EXPORT.format(panel.pk, "csv")).status_code == 403
    assert api(people["viewer"]).get(EXPORT.format(panel.pk, "csv")).status_code == 200


def test_dashboard_links_the_export_for_label_readers_only(client, rejected_once, people):
    people["viewer"].set_password("pw")
    people["viewer"].save()
    client.force_login(people["viewer"])
    page = client.get(f"/campaigns/{rejected_once.pk}/dashboard/").content.decode()
    assert f"/api/v1/campaigns/{rejected_once.pk}/annotations/export/?format=csv" in page and "format=jsonl" in page
    client.force_login(people["ann2"])
    assert client.get(f"/campaigns/{rejected_once.pk}/dashboard/").status_code == 403


@pytest.mark.parametrize(("cell", "written"), [
    ("=1+1", "'=1+1"), ("+1", "+1"), ("+1e", "'+1e"), ("-cmd", "'-cmd"), ("@SUM(A1)", "'@SUM(A1)"), ("\tx", "'\tx"),
    ("plain", "plain"), (-1, -1), (2.5, 2.5), ("", "")])
def test_spreadsheet_cells(cell, written):
    assert safe_cell(cell) == written
