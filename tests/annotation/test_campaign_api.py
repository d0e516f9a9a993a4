"""Setting a campaign up through the API, as a manager's page would."""
import pytest

from .conftest import api


@pytest.mark.django_db
def test_campaign_setup_through_the_api(staff, people, dialogbench):
    boss = api(staff)
    created = boss.post("/api/v1/campaigns/", {
        "name": "DialogBench baseline", "benchmark": dialogbench, "protocol": "human_baseline",
        "tasks": ["emotion_detection", "dialogue_nli"],
        "settings": {"items_per_task": 2, "seed": 11, "overall_threshold": "0.95", "guidelines": "# Work alone"},
    }, format="json")
    assert created.status_code == 201, created.content
    campaign = created.json()
    assert campaign["tasks"] == ["dialogue_nli", "emotion_detection"] and campaign["my_roles"] == ["manager", "viewer"]
    assert (campaign["settings"]["overlap"], campaign["settings"]["items_per_task"]) == (3, 2)  # protocol defaults
    assert campaign["settings"]["overall_threshold"] == "0.9500" and campaign["settings"]["qc_sample_size"] == 100

    bad = boss.post("/api/v1/campaigns/", {"name": "x", "benchmark": dialogbench, "protocol": "production",
                                           "tasks": ["nope"]}, format="json")
    assert bad.status_code == 400 and bad.json()["code"] == "invalid_campaign"
    assert api(people["manager"]).post("/api/v1/campaigns/", {}, format="json").status_code == 403

    added = boss.post("/api/v1/memberships/", {"campaign": campaign["id"], "user": "ann1", "role": "annotator"},
                      format="json")
    assert added.status_code == 201
    again = boss.post("/api/v1/memberships/", {"campaign": campaign["id"], "user": "ann1", "role": "annotator"},
                      format="json")
    assert again.status_code == 409 and again.json()["code"] == "duplicate"
    cut = boss.post(f"/api/v1/campaigns/{campaign['id']}/cut_batches/")
    assert cut.status_code == 201 and cut.json()[0]["progress"]["total"] == 4
    assert boss.post(f"/api/v1/campaigns/{campaign['id']}/cut_batches/").json()["code"] == "nothing_to_cut"

    mine = api(people["ann1"]).get("/api/v1/campaigns/").json()
    assert [(c["name"], c["my_roles"]) for c in mine["results"]] == [("DialogBench baseline", ["annotator"])]
    assert api(people["outsider"]).get("/api/v1/campaigns/").json()["count"] == 0
    progress = boss.get(f"/api/v1/campaigns/{campaign['id']}/progress/").json()
    assert (progress["total"], progress["done"], progress["by_state"]) == (4, 0, {"open": 1})
    lease = api(people["ann1"]).post(f"/api/v1/campaigns/{campaign['id']}/next/").json()
    assert lease["status"] == "leased" and lease["assignment"]["progress"]["state"] == "annotating"
    assert lease["assignment"]["guidelines"]["markdown"] == "# Work alone"
    assert api(people["ann1"]).get(f"/api/v1/assignments/{lease['assignment']['id']}/").json()["id"] == \
        lease["assignment"]["id"]
