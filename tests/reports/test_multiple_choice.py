"""The multiple-choice report on the DialogBench sample: 3 constructed raters and 2 constructed runs,
every figure checked against metrics/statsmodels computed here from the same answers."""
import csv
import io
import json
from collections import defaultdict

import numpy as np
import pytest
from statsmodels.stats.contingency_tables import mcnemar

from benchmarks.actions import import_items
from benchmarks.models import Benchmark, Item
from metrics import m_of_k_correct, mean_of_raters_accuracy, paired_bootstrap_gap
from reports.contract import ReportOptions
from reports.render import render
from reports.render.tables import dialogbench_table, group_table
from reports.service import make_report
from tests.conftest import DEMO_DATA
from tests.reports import factories

OPTIONS = ReportOptions(n_resamples=400, seed=3)


def wrong(letter, n_options, step=1):
    return "ABCD"[("ABCD".index(letter) + step) % n_options]


def rater_answers(n, gold, n_options):
    """Rater 1 always right, rater 2 wrong on every third item, rater 3 right on even items only."""
    return [gold, wrong(gold, n_options) if n % 3 == 0 else gold, gold if n % 2 == 0 else wrong(gold, n_options, 2)]


def loglik_prediction(n, gold, n_options):
    letters = "ABCD"[:n_options]
    best = gold if n % 2 == 0 else wrong(gold, n_options)  # acc pick
    logprobs = {k: -1.0 if k == best else -3.0 - i for i, k in enumerate(letters)}
    answer = gold if n % 4 != 1 else wrong(gold, n_options)  # the run's rule is per_token
    return {"answer": answer, "answer_per_token": answer, "answer_norm": gold if n % 3 else wrong(gold, n_options),
            "options": factories.options_for(logprobs)}


def chat_prediction(n, gold, n_options):
    if n in (2, 7):
        return {"answer": "", "parse_status": "unparsable", "raw_output": "I am not sure."}
    return {"answer": gold if n % 2 else "A", "parse_status": "parsed", "raw_output": "..."}


@pytest.fixture
def mc(db):
    import_items(DEMO_DATA / "dialogbench_sample.jsonl", "dialogbench", "db")
    bench = Benchmark.objects.get(slug="db")
    items = Item.objects.filter(task__benchmark=bench).select_related("task").order_by("task__slug", "external_id")
    facts = []
    for n, item in enumerate(items):
        gold, k = item.source_gold["answer"], len(item.fields["options"])
        facts.append({"item": item, "gold": gold, "n_options": k, "answers": rater_answers(n, gold, k),
                      "loglik": loglik_prediction(n, gold, k), "chat": chat_prediction(n, gold, k)})
    campaign = factories.human_campaign(bench, {f["item"].pk: f["answers"] for f in facts})
    factories.frozen_gold(campaign)
    tasks = list(bench.tasks.all())
    factories.model_run(bench, tasks, "loglik-model", {f["item"].pk: f["loglik"] for f in facts})
    factories.model_run(bench, tasks, "chat-model", {f["item"].pk: f["chat"] for f in facts}, mode="generate")
    by_task = defaultdict(list)
    for f in facts:
        by_task[f["item"].task.slug].append(f)
    return {"benchmark": bench, "campaign": campaign, "by_task": dict(sorted(by_task.items())),
            "report": make_report("db", options=OPTIONS)}


def model_row(report, task, model):
    return next(m for m in report["multiple_choice"]["models"] if m["task"] == task and m["model"] == model)


def test_human_accuracy_by_both_rules(mc):
    rows = {t["task"]: t for t in mc["report"]["multiple_choice"]["tasks"]}
    for slug, facts in mc["by_task"].items():
        gold = [f["gold"] for f in facts]
        majority = m_of_k_correct([f["answers"] for f in facts], gold, 2)
        raters = mean_of_raters_accuracy([[f["answers"][r] for f in facts] for r in range(3)], gold)
        assert rows[slug]["human_majority"] == pytest.approx(majority.accuracy)
        assert rows[slug]["human_mean_of_raters"] == pytest.approx(raters.accuracy)
        assert (rows[slug]["k"], rows[slug]["m"]) == (3, 2)
        assert rows[slug]["chance"] == pytest.approx(np.mean([1 / f["n_options"] for f in facts]))
    overall = mc["report"]["multiple_choice"]["overall"]
    assert overall["human_majority"] == pytest.approx(np.mean([r["human_majority"] for r in rows.values()]))


def test_model_accuracies_gap_interval_and_mcnemar(mc):
    report = mc["report"]
    for t_index, (slug, facts) in enumerate(mc["by_task"].items()):
        gold = [f["gold"] for f in facts]
        human = m_of_k_correct([f["answers"] for f in facts], gold, 2).item_correct
        loglik = model_row(report, slug, "loglik-model")
        flags = [f["loglik"]["answer"] == g for f, g in zip(facts, gold, strict=True)]
        assert loglik["accuracy"] == pytest.approx(np.mean(flags))
        norm = [f["loglik"]["answer_norm"] == g for f, g in zip(facts, gold, strict=True)]
        assert loglik["acc_norm"] == pytest.approx(np.mean(norm))
        best = [max(f["loglik"]["options"], key=lambda o: o["logprob"])["key"] for f in facts]
        assert loglik["acc"] == pytest.approx(np.mean([b == g for b, g in zip(best, gold, strict=True)]))
        # The interval is metrics' paired bootstrap with the task's seed (report seed + task index).
        expected = paired_bootstrap_gap(human, flags, n_resamples=OPTIONS.n_resamples, seed=OPTIONS.seed + t_index)
        got = (loglik["gap"], loglik["gap_low"], loglik["gap_high"])
        assert got == pytest.approx((expected.gap, expected.low, expected.high))
        pairs = list(zip(human, flags, strict=True))
        table = [[sum(h and m for h, m in pairs), sum(h and not m for h, m in pairs)],
                 [sum(m and not h for h, m in pairs), sum(not h and not m for h, m in pairs)]]
        assert loglik["mcnemar_p"] == pytest.approx(mcnemar(table, exact=True).pvalue)

        chat = model_row(report, slug, "chat-model")
        assert chat["parse_failures"] == sum(f["chat"]["parse_status"] == "unparsable" for f in facts)
        chat_flags = [f["chat"]["answer"] == g for f, g in zip(facts, gold, strict=True)]
        assert chat["accuracy"] == pytest.approx(np.mean(chat_flags))
        assert chat["acc"] is None and "log-likelihood" in chat["undefined"]["acc"]
    overall = {m["model"]: m for m in report["multiple_choice"]["overall"]["models"]}
    per_task = [model_row(report, slug, "loglik-model")["accuracy"] for slug in mc["by_task"]]
    assert overall["loglik-model"]["accuracy"] == pytest.approx(np.mean(per_task))
    assert overall["loglik-model"]["gap_low"] <= overall["loglik-model"]["gap"] <= overall["loglik-model"]["gap_high"]


def test_accuracy_by_correct_answer_position(mc):
    positions = [p for p in mc["report"]["multiple_choice"]["positions"] if p["source"] == "gold_position"]
    for slug, facts in mc["by_task"].items():
        gold = [f["gold"] for f in facts]
        human = m_of_k_correct([f["answers"] for f in facts], gold, 2).item_correct
        for letter in set(gold):
            row = next(p for p in positions if p["task"] == slug and p["position"] == letter)
            idx = [n for n, g in enumerate(gold) if g == letter]
            assert row["n_items"] == len(idx)
            assert row["human_majority"] == pytest.approx(np.mean([human[n] for n in idx]))
            chat = [facts[n]["chat"]["answer"] == letter for n in idx]
            assert row["models"]["chat-model"] == pytest.approx(np.mean(chat))
    picked = [p for p in mc["report"]["multiple_choice"]["positions"]
              if p["source"] == "picked" and p["model"] == "chat-model"]
    assert sum(p["counts"].get("unparsable", 0) for p in picked) == 2


def test_dimension_and_domain_breakdowns(mc):
    mcq = mc["report"]["multiple_choice"]
    tasks = {t["task"]: t for t in mcq["tasks"]}
    for row in mcq["by_dimension"]:
        assert row["human_majority"] == pytest.approx(np.mean([tasks[t]["human_majority"] for t in row["tasks"]]))
        for model in ("loglik-model", "chat-model"):
            gaps = [model_row(mc["report"], t, model)["gap"] for t in row["tasks"]]
            assert row["gaps"][model] == pytest.approx(np.mean(gaps))
    assert sum(r["n_items"] for r in mcq["by_domain"]) == 12


def test_mean_of_the_dimensions_beside_the_mean_of_the_tasks(mc):
    """KoDialogBench's Table 4 averages its tasks (each the mean of its test sets), not the sets: with tasks of
    unequal size per dimension the two means differ, and the report gives both."""
    mcq = mc["report"]["multiple_choice"]
    dimension_of = {t["task"]: t["dimension"] for t in mcq["tasks"]}
    assert len(set(dimension_of.values())) > 1 and len(set(dimension_of.values())) < len(dimension_of)
    means = mcq["overall"]["mean_of_dimensions"]
    for model in ("loglik-model", "chat-model"):
        by_dimension = defaultdict(list)
        for task, dimension in dimension_of.items():
            by_dimension[dimension].append(model_row(mc["report"], task, model)["accuracy_all_items"])
        expected = np.mean([np.mean(v) for v in by_dimension.values()])
        assert means["models"][model] == pytest.approx(expected)
    by_dimension = defaultdict(list)
    for t in mcq["tasks"]:
        by_dimension[t["dimension"]].append(t["human_majority"])
    assert means["human_majority"] == pytest.approx(np.mean([np.mean(v) for v in by_dimension.values()]))
    overall = {m["model"]: m["accuracy_all_items"] for m in mcq["overall"]["models"]}
    assert any(means["models"][m] != pytest.approx(overall[m]) for m in overall)  # the two means differ here
    table = group_table(json.loads(render(mc["report"], "json")), "by_dimension", "Dimension")
    assert table.rows[-1][0].value == "mean of the dimensions"
    assert "Gap, loglik-model" in table.header


def test_latex_table_has_the_dialogbench_shape(mc):
    report = mc["report"]
    table = dialogbench_table(json.loads(render(report, "json")))
    # The paper's column order (Tables 2 and 3): SF IC KRG CRG DI MRG PRG RC ED NLI DS OD.
    assert table.header == ["", "IC", "MRG", "ED", "NLI", "OD", "Avg"]
    assert [row[0].value for row in table.rows] == ["Human (2 of 3)", "Human (mean of raters)", "Chance",
                                                    "loglik-model [per_token]", "chat-model [generation]"]
    latex = render(report, "latex")
    body = latex.split(r"\label{tab:dialogbench}")[1].split(r"\bottomrule")[0]
    lines = [line for line in body.splitlines() if line.endswith(r"\\")]
    assert lines[0] == r" & IC & MRG & ED & NLI & OD & Avg \\"
    assert len(lines) == 6 and all(line.count("&") == 6 for line in lines)
    assert r"\begin{tabular}{lrrrrrr}" in latex


def test_csv_reads_back_with_the_csv_module(mc):
    text = render(mc["report"], "csv")
    rows = list(csv.DictReader(io.StringIO(text)))
    assert set(rows[0]) == {"section", "task", "question", "model", "subset", "metric", "value", "undefined_reason",
                            "rule", "flag"}
    gap = next(r for r in rows if r["section"] == "multiple_choice.models" and r["task"] == "emotion_detection"
               and r["model"] == "loglik-model" and r["metric"] == "gap")
    assert float(gap["value"]) == pytest.approx(model_row(mc["report"], "emotion_detection", "loglik-model")["gap"])
    undefined = [r for r in rows if r["value"] == ""]
    assert undefined and all(r["undefined_reason"] for r in undefined)


def test_html_has_svg_plots_and_json_reads_back(mc):
    html = render(mc["report"], "html")
    assert html.count("<svg") >= 3  # gap per task, position bias, agreement
    assert "Gap per task" in html and "Position bias" in html and "NaN" not in html
    data = json.loads(render(mc["report"], "json"))
    assert data["scope"] == {"benchmark": "db", "campaign_id": None, "gold": "db@gold-v1",
                             "human_campaigns": [mc["campaign"].pk]}
    assert data["provenance"]["gold"]["n_labels"] == 12
    assert {m["model"] for m in data["provenance"]["models"]} == {"loglik-model", "chat-model"}


def test_item_lists(mc):
    lists = mc["report"]["item_lists"]
    for entry in lists["humans_right_models_wrong"]:
        assert all(answer != entry["gold"] for answer in entry["model_answers"].values())
    for entry in lists["models_right_humans_wrong"]:
        assert all(answer == entry["gold"] for answer in entry["model_answers"].values())
    assert lists["counts"]["humans_right_models_wrong"] == len(lists["humans_right_models_wrong"])


def test_models_on_the_whole_set_and_the_gap_on_the_human_sample(db):
    """DialogBench scores models on every item of a task and humans on a sample (Ou et al. 2024, section 4: 50
    items per task): the study's model figure is the accuracy on all items, the gap is paired on the sample.
    Here humans answer the even-numbered items only; a forced-position run pools its positions too."""
    import_items(DEMO_DATA / "dialogbench_sample.jsonl", "dialogbench", "db")
    bench = Benchmark.objects.get(slug="db")
    items = list(Item.objects.filter(task__benchmark=bench).select_related("task")
                 .order_by("task__slug", "external_id"))
    sample = {item.pk: rater_answers(n, item.source_gold["answer"], len(item.fields["options"]))
              for n, item in enumerate(items) if n % 2 == 0}
    factories.human_campaign(bench, sample)  # the items' published labels are the gold, sampled or not
    predictions = {item.pk: loglik_prediction(n, item.source_gold["answer"], len(item.fields["options"]))
                   for n, item in enumerate(items)}
    tasks = list(bench.tasks.all())
    factories.model_run(bench, tasks, "loglik-model", predictions)
    forced = {}
    for item in items:
        for letter in item.fields["options"]:  # right when the gold is forced to A or B only
            forced[item.pk, letter] = {"gold": letter, "answer": letter if letter in "AB" else "A"}
    factories.model_run(bench, tasks, "forced-model", forced, position_policy="gold_at_each_position")
    report = make_report("db", options=OPTIONS)
    for slug in {item.task.slug for item in items}:
        mine = [item for item in items if item.task.slug == slug]
        right = {item.pk: predictions[item.pk]["answer"] == item.source_gold["answer"] for item in mine}
        row = model_row(report, slug, "loglik-model")
        answered = [item.pk for item in mine if item.pk in sample]
        assert row["n_items"] == len(answered) and row["n_items_all"] == len(mine)
        assert row["accuracy"] == pytest.approx(np.mean([right[i] for i in answered]))
        assert row["accuracy_all_items"] == pytest.approx(np.mean(list(right.values())))
        pooled = next(p for p in report["multiple_choice"]["positions"]
                      if p["task"] == slug and p["source"] == "forced_position" and p["position"] == "all")
        pairs = [(item.pk, letter) for item in mine for letter in item.fields["options"]]
        assert pooled["n_items"] == len(pairs)
        assert pooled["accuracy"] == pytest.approx(np.mean([letter in "AB" for _, letter in pairs]))
    table = dialogbench_table(json.loads(render(report, "json")))
    model = next(r for r in table.rows if r[0].value == "loglik-model [per_token]")
    overall = next(m for m in report["multiple_choice"]["overall"]["models"] if m["model"] == "loglik-model")
    assert model[-1].value == pytest.approx(overall["accuracy_all_items"])
    assert overall["accuracy_all_items"] == pytest.approx(np.mean(
        [model_row(report, t, "loglik-model")["accuracy_all_items"] for t in {i.task.slug for i in items}]))
