"""A run's results show its benchmark's gold, so who may not read them (a researcher who labels on the benchmark,
benchmarks.permissions.gold_benchmarks) may not start a run on it either: before, such a run was started, then
hidden from the person who started it (not listed, not read, not cancelled)."""
import pytest
from django.contrib.auth.models import User

from annotation import actions as annotation_actions
from modeleval.models import EvalRun
from tests.modeleval.conftest import client_for, researcher  # noqa: F401 (fixtures)
from tests.reliability.test_run_limits import nothing_sent, world  # noqa: F401 (fixtures)


@pytest.mark.django_db
def test_a_researcher_who_labels_on_a_benchmark_starts_no_run_on_it(world, researcher):  # noqa: F811
    api = client_for(researcher)
    start = {"model": "tiny", "benchmark": "db-demo", "limit": 1}
    started = api.post("/api/v1/runs/", start, format="json")
    assert started.status_code == 201, started.content
    assert api.get(f"/api/v1/runs/{started.json()['id']}/").status_code == 200  # read while they label nowhere
    staff = User.objects.create_user("boss", is_staff=True)
    campaign = annotation_actions.create_campaign(actor=staff, name="labelled here", benchmark="db-demo",
                                                  protocol="production", settings={})
    labels = annotation_actions.add_member(campaign, actor=staff, user=researcher, role="annotator")
    for url, body in (("/api/v1/runs/", start), ("/api/v1/runs/train/", {"model": "tiny", "benchmark": "db-demo"})):
        refused = api.post(url, body, format="json")
        assert refused.status_code == 403 and refused.json()["code"] == "forbidden", (url, refused.content)
        assert "you label on benchmark db-demo" in refused.json()["detail"]
    assert EvalRun.objects.filter(created_by=researcher).count() == 1
    # Once they label there no more, it is open to them again.
    annotation_actions.set_member_active(labels, actor=staff, active=False)
    assert api.post("/api/v1/runs/", start, format="json").status_code == 201
