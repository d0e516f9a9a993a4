"""JUDGE-BENCH's judge run here (mode judge, preset judgebench): DICES-350 crowdsourced imported, the packaged model
asked each item's own prompt as the study's models.py asks it, its replies read by the study's extract_answer, its
kappa against the people's majority as the study's eval_responses.py computes it, and the study's published table
for DICES-350 beside ours in the report (JSON and HTML)."""
import json

import pytest
from sklearn.metrics import cohen_kappa_score

import studies
from benchmarks.actions import import_items
from benchmarks.models import Benchmark, Item
from modeleval import actions
from modeleval.errors import RunError
from modeleval.models import ModelSpec, ParseStatus, Prediction
from reports.contract import ReportOptions
from reports.render import render
from reports.service import make_report
from studies import judgebench
from tests.conftest import DEMO_DATA, SHARED_DATA

from .test_scoring import sync_run

CROWD = SHARED_DATA / "judgebench" / "dices_350_crowdsourced.json"
LABELS = ["No", "Yes", "Unsure"]


@pytest.fixture
def dices(db):
    if not CROWD.is_file():
        print(f"skipping: JUDGE-BENCH's DICES not found at {CROWD}")
        pytest.skip(f"JUDGE-BENCH's DICES not found at {CROWD} (set HB_SHARED_DATA)")
    summary = import_items(CROWD, None, "dices-350")
    assert (summary.items_created, summary.labels.raters) == (350, 123)
    return Benchmark.objects.get(slug="dices-350")


def test_a_judge_run_takes_the_study_s_settings_and_lists_its_differences(dices):
    spec, _ = ModelSpec.objects.get_or_create(name="stand-in", source="stand-in", sha256="0" * 64)
    run = actions.start_run(model=spec, benchmark=dices, mode="judge", enqueue=False, limit=2)
    assert run.prompt_template == judgebench.ADDITIONAL_PROMPT and run.prompt_version == judgebench.TEMPLATE_VERSION
    assert (run.settings["max_new_tokens"], run.settings["backend"]) == (25, "local")
    protocol = studies.protocol(run.mode, run.settings)
    assert protocol["preset"] == "judgebench"
    assert {d["setting"] for d in protocol["differences"]} == {
        "an unreadable reply", "the judge's model", "what the people were asked", "batching and precision"}


def test_items_without_a_judge_prompt_are_refused(db):
    import_items(DEMO_DATA / "diqad_sample.jsonl", "diqad", "dq")
    spec, _ = ModelSpec.objects.get_or_create(name="stand-in", source="stand-in", sha256="0" * 64)
    with pytest.raises(RunError, match="no item carries one") as refused:
        actions.start_run(model=spec, benchmark=Benchmark.objects.get(slug="dq"), mode="judge", enqueue=False)
    assert refused.value.code == "mode_unsuited"


@pytest.mark.model
@pytest.mark.slow
def test_the_packaged_model_judges_twenty_dices_items_and_its_kappa_lies_beside_the_paper(packaged, dices):
    items = list(Item.objects.filter(task__benchmark=dices).order_by("pk").values_list("pk", flat=True)[:20])
    run = sync_run(packaged, dices, mode="judge", item_ids=items)
    rows = list(Prediction.objects.filter(run=run).select_related("item").order_by("item__pk"))
    assert len(rows) == 20
    people, judge = [], []
    for row in rows:
        meta = row.item.meta
        sent = judgebench.judge_prompt(meta["judge_prompts"]["safety"], meta["instance"],
                                       judgebench.Metric("categorical", tuple(LABELS)))
        # The study's models.py: one user message in the chat template, no generation prompt added.
        assert sent in row.prompt and sent.endswith("Answer with one of No, Yes, Unsure. Do not explain your answer.")
        assert not row.prompt.rstrip().endswith("assistant")
        answer, valid = judgebench.extract_answer(row.raw_output, judgebench.Metric("categorical", tuple(LABELS)))
        assert row.parse_status == (ParseStatus.PARSED if valid else ParseStatus.UNPARSABLE)
        assert row.answer == (answer if valid else row.probabilities["stand_in"]) and row.answer in LABELS
        assert row.gold == row.item.source_gold["safety"]
        people.append(LABELS.index(row.gold))
        judge.append(LABELS.index(row.answer))
    kappa = 1.0 if people == judge else cohen_kappa_score(people, judge)
    valid = sum(r.parse_status == ParseStatus.PARSED for r in rows)

    report = json.loads(render(make_report("dices-350", options=ReportOptions(n_resamples=20)), "json"))
    (study,) = [s for s in report["paper"]["studies"] if s["study"] == "judgebench"]
    (table,) = study["tables"]
    assert table["table"] == "dices-350-crowdsourced" and table["paper_file"].endswith(judgebench.RESULTS_COMMIT)
    assert table["beside"] == [] and table["paper_rows_without_ours"] == 11  # the packaged model is in no row
    (ours,) = table["ours_alone"]
    print("packaged model on 20 DICES-350 items: kappa", ours["values"]["kappa"], "valid", valid, "of 20")
    assert ours["values"]["kappa"] == pytest.approx(kappa, abs=1e-12)
    assert ours["values"]["valid_share"] == valid / 20 and ours["n_items"] == 20
    assert ours["values"]["krippendorff_alpha"] == pytest.approx(0.16086021565770392, abs=0.005)
    assert "packaged model" in ours["note"]
    html = render(make_report("dices-350", options=ReportOptions(n_resamples=20)), "html")
    assert "judgebench: the paper&#x27;s Table dices-350-crowdsourced beside ours" in html or \
        "judgebench: the paper's Table dices-350-crowdsourced beside ours" in html
    assert "results/regular/dices-350-crowdsourced.json" in html
