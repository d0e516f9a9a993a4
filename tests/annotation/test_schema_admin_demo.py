"""The OpenAPI schema of the annotation views generates without warnings; the admin follows a batch's
history; the demo builds its campaigns and can run twice."""
import pytest
from django.core.management import call_command
from drf_spectacular.drainage import GENERATOR_STATS
from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.validation import validate_schema

from annotation import actions
from annotation.models import Annotation, Campaign, Membership

from .conftest import submit_score


def test_schema_has_every_annotation_path_and_no_warnings_from_annotation_views():
    GENERATOR_STATS.reset()
    with GENERATOR_STATS.silence():
        schema = SchemaGenerator().get_schema(request=None, public=True)
    ours = [m for m in [*GENERATOR_STATS._warn_cache, *GENERATOR_STATS._error_cache] if "annotation" in m]
    assert ours == []
    validate_schema(schema)
    paths = schema["paths"]
    for path in ("/api/v1/campaigns/{id}/next/", "/api/v1/assignments/{id}/submit/", "/api/v1/batches/{id}/hand_in/",
                 "/api/v1/batches/{id}/events/", "/api/v1/disagreements/{id}/resolve/",
                 "/api/v1/campaigns/{id}/baseline/", "/api/v1/gold-versions/{id}/freeze/"):
        assert path in paths
    submit = paths["/api/v1/assignments/{id}/submit/"]["post"]
    assert {"201", "200", "400", "409"} <= set(submit["responses"])


@pytest.mark.django_db
def test_admin_shows_a_batch_with_its_events(client, staff, people, diqad):
    staff.is_superuser = True
    staff.save()
    campaign = actions.create_campaign(actor=staff, name="c", benchmark=diqad, protocol="production",
                                       settings={"overlap": 1})
    actions.add_member(campaign, actor=staff, user=people["ann1"], role="annotator")
    [batch] = actions.cut_batches(campaign, actor=staff)
    while lease := actions.lease_next_item(campaign, annotator=people["ann1"]):
        submit_score(lease.assignment, people["ann1"], 2)
    # No hand-in call: with the default settings the last label hands the batch in.
    client.force_login(staff)
    page = client.get(f"/admin/annotation/batch/{batch.pk}/change/").content.decode()
    for kind in ("batch_created", "batch_started", "handed_in"):
        assert kind in page
    for url in ("campaign", "annotation", "assignment", "event", "qcreview", "goldversion", "disagreement"):
        assert client.get(f"/admin/annotation/{url}/").status_code == 200
    assert client.get(f"/admin/annotation/campaign/{campaign.pk}/change/").status_code == 200


@pytest.mark.django_db
def test_demo_builds_campaigns_and_runs_twice(tmp_path):
    call_command("demo", "--fed", str(tmp_path / "absent.json"))
    call_command("demo", "--fed", str(tmp_path / "absent.json"))
    production = Campaign.objects.get(benchmark__slug="diqad-demo")
    baseline = Campaign.objects.get(benchmark__slug="dialogbench-demo")
    assert production.protocol == "production" and baseline.protocol == "human_baseline"
    assert (production.batches.count(), baseline.batches.count()) == (2, 1)
    roles = set(Membership.objects.filter(campaign=production).values_list("user__username", "role"))
    assert {("annotator1", "annotator"), ("qc1", "qc"), ("expert1", "expert"), ("trainer1", "trainer"),
            ("researcher1", "viewer"), ("admin", "manager")} <= roles
    assert not Annotation.objects.exists()
