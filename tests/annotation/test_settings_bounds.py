"""Every number a manager sets has bounds, checked with the settings through every door (the API, the action,
the creation of a campaign); an active-selection judge must be a run that can judge the campaign's benchmark
(issue 41, item 5)."""
import pytest

from annotation import actions
from annotation.models import CampaignSettings
from benchmarks.models import Benchmark
from core.errors import ActionError
from modeleval.models import EvalRun, ModelSpec, RunState

from .conftest import api, make_campaign

pytestmark = pytest.mark.django_db

# The figures (on SQLite no column type refuses them), and values that fit PostgreSQL's column types.
TOO_BIG = [("overlap", 10 ** 9), ("overlap", 30_000), ("overlap", 1001), ("batch_size", 2 ** 31),
           ("batch_size", 2 ** 31 - 1), ("lease_minutes", 10 ** 12), ("lease_minutes", 2 ** 31 - 1),
           ("min_reading_seconds", 10 ** 9), ("max_rounds", 10 ** 6), ("max_rounds", 30_000), ("seed", -1),
           ("seed", 2 ** 63), ("qc_sample_size", 10 ** 9), ("max_extra_annotators", 10 ** 4), ("items_per_task", 0),
           ("items_per_task", 2 ** 31 - 1), ("active_budget", 2 ** 31 - 1), ("lease_minutes", 0)]


@pytest.mark.parametrize(("name", "value"), TOO_BIG)
def test_out_of_bounds_settings_are_refused_and_write_nothing(staff, people, diqad, name, value):
    campaign = make_campaign(staff, people, diqad)
    before = list(CampaignSettings.objects.values())
    answer = api(staff).post(f"/api/v1/campaigns/{campaign.pk}/settings/", {name: value}, format="json")
    assert answer.status_code == 400 and answer.json()["code"] in ("invalid", "invalid_settings"), answer.content
    assert name in str(answer.json())
    with pytest.raises(ActionError) as refused:
        actions.update_settings(campaign, actor=staff, changes={name: value})
    assert name in refused.value.extra["errors"]
    with pytest.raises(ActionError):
        make_campaign(staff, people, diqad, **{name: value})
    assert list(CampaignSettings.objects.values()) == before


@pytest.mark.parametrize("values", [
    {"overlap": 123, "batch_size": 100_000, "lease_minutes": 1440, "min_reading_seconds": 3600, "max_rounds": 100,
     "seed": 2 ** 63 - 1, "qc_sample_size": 100_000, "max_extra_annotators": 100, "items_per_task": 10_000_000},
    {"overlap": 1, "batch_size": 1, "lease_minutes": 1, "min_reading_seconds": 0, "max_rounds": 1, "seed": 0},
])
def test_the_bounds_hold_every_protocol_reproduced_here(staff, people, diqad, values):
    campaign = make_campaign(staff, people, diqad, **values)
    assert {name: getattr(campaign.settings_versions.get(), name) for name in values} == values


def test_an_active_selection_judge_must_be_a_run_that_can_judge_the_benchmark(staff, people, diqad):
    campaign = make_campaign(staff, people, diqad)
    active = {"selection_mode": "active", "active_budget": 4}
    for run in (999_999, 2 ** 31 - 1):
        answer = api(staff).post(f"/api/v1/campaigns/{campaign.pk}/settings/", {**active, "active_judge_run": run},
                                 format="json")
        assert answer.status_code == 400 and "active_judge_run" in str(answer.json()), answer.content
    model, benchmark = ModelSpec.objects.create(name="judge", source="packaged"), Benchmark.objects.get(slug=diqad)
    running = EvalRun.objects.create(model=model, benchmark=benchmark, mode="rating", state=RunState.RUNNING)
    with pytest.raises(ActionError) as refused:
        actions.update_settings(campaign, actor=staff, changes={**active, "active_judge_run": running.pk})
    assert "active_judge_run" in refused.value.extra["errors"]  # not finished: it has no readings to draw by
    finished = EvalRun.objects.create(model=model, benchmark=benchmark, mode="rating", state=RunState.FINISHED)
    changed = actions.update_settings(campaign, actor=staff, changes={**active, "active_judge_run": finished.pk})
    assert changed.active_judge_run == finished.pk
