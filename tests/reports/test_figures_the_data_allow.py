"""No figure reads better than the data allow: people and models compared on the items both answered, the
overall interval that matches how the items were drawn leading, the gap table the LaTeX footnote points to,
and DiQAD's correlations of the predicted class counted on the items they are from. Statistics are checked
against statsmodels and scipy."""
import csv
import io
import re
import shutil
import subprocess

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.contingency_tables import mcnemar

from metrics import paired_bootstrap_gap, stratified_interval
from reports.build import build_report, public
from reports.contract import ReportOptions
from reports.render import render
from reports.render.tables import diqad_tables
from tests.reports.test_build import SCORE_FORM, data
from tests.reports.test_misleading import PAIRS, eight_items

OPTIONS = ReportOptions(n_resamples=500, seed=4)


def without_predictions(d, items):
    """The report data with the predictions of `items` deleted."""
    keep = [n for n, item in enumerate(d.predictions["item_id"]) if item not in items]
    d.predictions = {column: [values[n] for n in keep] for column, values in d.predictions.items()}
    return d


def overall_of(report, model="m"):
    return next(m for m in report["multiple_choice"]["overall"]["models"] if m["model"] == model)


# ---------------------------------------------------------------- missing predictions


def test_people_and_a_model_are_compared_on_the_items_both_answered():
    """Task t3's two predictions deleted: that task has no figure for the model (it showed accuracy 0.0 and a
    gap of 0.5 before), the mean of the tasks is undefined, and the pooled gap and McNemar use the 6 items both
    answered (before: 8 items, the missing two counted wrong, pooled gap 0.625 and p 0.0625)."""
    report = build_report(without_predictions(eight_items(), {4, 5}), OPTIONS)
    by_task = {m["task"]: m for m in report["multiple_choice"]["models"]}
    t3 = by_task["t3"]
    for key in ("accuracy", "acc", "acc_norm", "acc_per_token", "gap", "mcnemar_p", "human_majority"):
        assert t3.get(key) is None and "no prediction" in t3["undefined"][key], key
    assert (t3["n_items"], t3["n_predictions"], t3["n_compared"], t3["n_missing"]) == (2, 0, 0, 2)
    # The tasks the model answered keep their figures, on their items.
    human = np.array([bool(h) for h, _ in PAIRS])
    model = np.array([bool(m) for _, m in PAIRS])
    t1 = by_task["t1"]
    expected = paired_bootstrap_gap(human[:2], model[:2], n_resamples=500, seed=4)
    assert (t1["gap"], t1["gap_low"], t1["gap_high"]) == (expected.gap, expected.low, expected.high)
    overall = overall_of(report)
    assert overall["gap"] is None and "t3" in overall["undefined"]["gap"]
    assert overall["gap_low"] is None and overall["accuracy"] is None
    answered = np.array([n not in (4, 5) for n in range(8)])
    pooled = paired_bootstrap_gap(human[answered], model[answered], n_resamples=500, seed=4)
    assert (overall["pooled_gap"], overall["pooled_gap_low"], overall["pooled_gap_high"]) == (
        pooled.gap, pooled.low, pooled.high)
    assert pooled.gap == pytest.approx(4 / 6)
    assert (overall["pooled_human_majority"], overall["pooled_accuracy"]) == (1.0, pytest.approx(2 / 6))
    table = [[2, 4], [0, 0]]  # human right: model right on 2, wrong on 4 (items 0-3); no human-wrong item is left
    assert overall["pooled_mcnemar_p"] == pytest.approx(mcnemar(table, exact=True).pvalue) == pytest.approx(0.125)
    assert (overall["n_items"], overall["n_compared"], overall["n_missing"]) == (8, 6, 2)
    assert "no prediction on 2 of the 8 items" in overall["notes"]["pooled_gap"]
    # Every format says it: the CSV's flag column, the gap table's "Missing" column, the HTML note mark.
    rows = list(csv.DictReader(io.StringIO(render(report, "csv"))))
    pooled_row = next(r for r in rows if r["section"] == "multiple_choice.overall" and r["metric"] == "pooled_gap")
    assert "no prediction on 2 of the 8 items" in pooled_row["flag"]
    accuracy = next(r for r in rows if r["section"] == "multiple_choice.models" and r["task"] == "t3"
                    and r["metric"] == "accuracy")
    assert accuracy["value"] == "" and "no prediction" in accuracy["undefined_reason"]
    latex = render(report, "latex")
    assert re.search(r"\nt3 & m \[per\\_token\] & 0 & 2 & -- & -- & -- & paired & -- & -- & -- ", latex)
    assert "no prediction on 2 of the 8 items" in render(report, "html")


def test_a_partial_prediction_set_is_scored_on_what_was_predicted():
    """One of t3's two items predicted (item 4: people wrong, model right; item 5, both right, deleted): the model
    is compared with the people on item 4 only (before: accuracy 0.5 and gap 0, item 5 counted wrong)."""
    report = build_report(without_predictions(eight_items(), {5}), OPTIONS)
    t3 = next(m for m in report["multiple_choice"]["models"] if m["task"] == "t3")
    assert (t3["accuracy"], t3["gap"]) == (1.0, -1.0)
    assert (t3["n_compared"], t3["n_missing"], t3["human_majority"]) == (1, 1, 0.0)
    # The item lists do not call a missing prediction a model's miss.
    listed = {i["item_id"] for i in report["item_lists"]["humans_right_models_wrong"]}
    assert listed == {0, 1, 2, 3}


def test_an_average_over_fewer_tasks_than_the_peoples_is_left_out():
    """A model run on 3 of the 4 tasks: its Avg beside the people's 4-task Avg is left out, with the reason."""
    d = eight_items()
    d.runs[0]["task_ids"] = [1, 2, 4]
    report = build_report(without_predictions(d, {4, 5}), OPTIONS)
    overall = overall_of(report)
    assert overall["n_tasks"] == 3 and report["multiple_choice"]["overall"]["n_tasks"] == 4
    latex = render(report, "latex")
    dialogbench = latex.split(r"\label{tab:dialogbench}")[1].split(r"\end{table}")[0]
    model_row = next(line for line in dialogbench.splitlines() if line.startswith("m [per"))
    assert model_row.endswith("& -- \\\\"), model_row
    assert "left out, --, for a model not run on every task" in dialogbench
    html = render(report, "html")
    assert "run on 3 of the 4 tasks" in html
    # So with a dimension's mean: its four tasks are one dimension here.
    dimension, = report["multiple_choice"]["by_dimension"]
    assert dimension["n_tasks"] == 4 and dimension["models"] == {"m": None}
    assert "not run, or no prediction, on every task of the dimension" in html


# ---------------------------------------------------------------- which overall interval leads


def test_the_overall_interval_that_leads_matches_how_the_items_were_drawn():
    # Items not drawn per task (a production campaign's items): the item-level interval leads.
    report = build_report(eight_items(), OPTIONS)
    overall = overall_of(report)
    human = [bool(h) for h, _ in PAIRS]
    model = [bool(m) for _, m in PAIRS]
    pooled = paired_bootstrap_gap(human, model, n_resamples=500, seed=4)
    assert overall["interval_lead"] == "item-level" and "not drawn as a sample of each task" in \
        overall["interval_lead_why"]
    assert (overall["pooled_gap_low"], overall["pooled_gap_high"]) == (pooled.low, pooled.high)
    # The within-task interval beside it is the stratified one (the tasks' own resamples, averaged).
    within = stratified_interval([paired_bootstrap_gap_replicates(human[n:n + 2], model[n:n + 2], seed=4 + n // 2)
                                  for n in range(0, 8, 2)])
    assert (overall["gap_low"], overall["gap_high"]) == within
    # The tables put the leading row first and name both.
    html, latex = render(report, "html"), render(report, "latex")
    assert html.index("all tasks, pooled items (item-level; leads)") < html.index(
        "all tasks, mean of tasks (within-task)")
    assert latex.index("all, pooled items & m [per\\_token] & 8 & 0 & ") < latex.index("all, mean of tasks & ")
    assert "& item-level; leads & " in latex and "& within-task & " in latex
    for text in (html, latex):
        assert "items resampled across the tasks" in text and "items resampled inside each task" in text
    assert "item-level for m: the people's items were not drawn" in latex
    intervals = {p["topic"]: p["text"] for p in report["how_to_read"]}["intervals"]
    assert "leads" in intervals and "item-level" in intervals

    # Drawn per task (a human baseline's items_per_task) but two items per task: still item-level, and why.
    drawn = eight_items()
    drawn.campaigns[0]["settings"][0]["items_per_task"] = 2
    overall = overall_of(build_report(drawn, OPTIONS))
    assert overall["interval_lead"] == "item-level" and "fewer than 30 items" in overall["interval_lead_why"]
    # Drawn per task with enough items per task (the reader's minimum): the within-task interval leads.
    drawn = eight_items()
    drawn.campaigns[0]["settings"][0]["items_per_task"] = 2
    report = build_report(drawn, ReportOptions(n_resamples=500, seed=4, min_items=2))
    overall = overall_of(report)
    assert overall["interval_lead"] == "within-task" and "drawn as a sample of each task" in \
        overall["interval_lead_why"]
    latex = render(report, "latex")
    assert latex.index("all, mean of tasks & ") < latex.index("all, pooled items & ")
    assert "& within-task; leads & " in latex and "& item-level & " in latex


def paired_bootstrap_gap_replicates(human, model, seed):
    from metrics import paired_bootstrap_gaps

    return paired_bootstrap_gaps(human, [model], 500, seed).replicates[:, 0]


# ---------------------------------------------------------------- the LaTeX gap table and McNemar's note


def test_latex_has_the_gap_table_its_footnote_points_to():
    report = build_report(eight_items(), OPTIONS)
    latex = render(report, "latex")
    tables = latex.split(r"\begin{table}")[1:]
    assert r"\label{tab:dialogbench}" in tables[0] and "the paired gap on the items both answered is in the next " \
                                                       "table" in tables[0].replace("\n", " ")
    gap = tables[1]
    marked = re.sub(r"\\textsuperscript\{[^}]*\}", "", gap)  # the small-sample and note marks aside
    assert r"\label{tab:gap}" in gap and "Human majority minus model on the items both answered" in gap
    by_task = {m["task"]: m for m in report["multiple_choice"]["models"]}
    for n, task in enumerate(("t1", "t2", "t3", "t4")):
        h, m = [bool(x) for x, _ in PAIRS[2 * n:2 * n + 2]], [bool(y) for _, y in PAIRS[2 * n:2 * n + 2]]
        pairs = list(zip(h, m, strict=True))
        table = [[sum(a and b for a, b in pairs), sum(a and not b for a, b in pairs)],
                 [sum(b and not a for a, b in pairs), sum(not a and not b for a, b in pairs)]]
        assert by_task[task]["mcnemar_p"] == pytest.approx(mcnemar(table, exact=True).pvalue)
        row = f"{task} & m [per\\_token] & 2 & 0 & {100 * np.mean(h):.2f} & {100 * np.mean(m):.2f} & " \
              f"{100 * (np.mean(h) - np.mean(m)):.2f} & "
        assert row in marked, row
    overall = overall_of(report)
    pooled = f"& {100 * overall['pooled_gap']:.2f} & item-level; leads & {100 * overall['pooled_gap_low']:.2f} & "
    assert pooled in marked


def test_mcnemar_without_discordant_items_says_so_in_every_format():
    """t4: both sides right on both items, no discordant item: its p = 1 carries the note (before: dropped)."""
    report = build_report(eight_items(), OPTIONS)
    by_task = {m["task"]: m for m in report["multiple_choice"]["models"]}
    t4 = by_task["t4"]
    assert t4.get("notes", {}).get("mcnemar_p") == "no discordant items: the test has nothing to compare (p = 1)"
    assert (t4["human_only"], t4["model_only"], t4["mcnemar_p"]) == (0, 0, mcnemar([[2, 0], [0, 0]]).pvalue) == \
        (0, 0, 1.0)
    assert "notes" not in by_task["t1"]
    gap = render(report, "latex").split(r"\label{tab:gap}")[1].split(r"\end{table}")[0]
    t4_line = next(line for line in gap.splitlines() if line.startswith("t4 &"))
    assert t4_line.endswith(r"1.000\textsuperscript{\dag,a} \\")
    assert "(a) no discordant items: the test has nothing to compare (p = 1)." in gap
    html = render(report, "html")
    assert 'title="no discordant items: the test has nothing to compare (p = 1)">a</sup>' in html
    rows = list(csv.DictReader(io.StringIO(render(report, "csv"))))
    p_row = next(r for r in rows if r["section"] == "multiple_choice.models" and r["task"] == "t4"
                 and r["metric"] == "mcnemar_p")
    assert "no discordant items" in p_row["flag"] and p_row["flag"].startswith("small sample")


def test_the_latex_export_compiles(tmp_path):
    """The LaTeX export, the gap table with its marks and notes and a DiQAD table included, compiles with pdflatex
    and booktabs, as its header says it needs."""
    engine = shutil.which("pdflatex")
    if engine is None:
        print("skipping: no pdflatex (apt-get install texlive-latex-base texlive-latex-recommended)")
        pytest.skip("no pdflatex: the LaTeX export is not compiled here")
    kpsewhich = shutil.which("kpsewhich")
    probe = subprocess.run([kpsewhich, "booktabs.sty"], capture_output=True, text=True) if kpsewhich else None
    if probe is None or not probe.stdout.strip():
        print("skipping: pdflatex has no booktabs.sty (apt-get install texlive-latex-recommended)")
        pytest.skip("no booktabs.sty")
    report = build_report(without_predictions(eight_items(), {4, 5}), OPTIONS)
    body = render(report, "latex") + render(diqad_report()[0], "latex")
    document = ("\\documentclass{article}\n\\usepackage[T1]{fontenc}\n\\usepackage{booktabs}\n\\begin{document}\n"
                + body + "\n\\end{document}\n")
    (tmp_path / "report.tex").write_text(document, encoding="utf-8")
    done = subprocess.run([engine, "-interaction=nonstopmode", "-halt-on-error", "report.tex"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-3000:]
    assert (tmp_path / "report.pdf").stat().st_size > 0
    assert "Undefined control sequence" not in done.stdout


def cjk_latex():
    """The LaTeX export of a report whose tasks have Chinese and Korean names (DialogBench's, KoDialogBench's)."""
    d = without_predictions(eight_items(), {4, 5})
    for task, name in zip(d.tasks, ["情感识别", "意图分类", "对话推理", "감정 인식"], strict=False):
        task["slug"] = task["name"] = name
    return render(build_report(d, OPTIONS), "latex")


def test_a_latex_export_with_chinese_and_korean_text_names_xecjk():
    from reports.render.latex import preamble

    latex = cjk_latex()
    assert "情感识别" in latex and "감정 인식" in latex
    assert "compile with xelatex and \\usepackage{xeCJK}" in latex.split("\n", 5)[2]
    assert "\\usepackage{xeCJK}" in preamble(latex)
    assert "xeCJK" not in render(build_report(eight_items(), OPTIONS), "latex")


def test_the_latex_export_with_chinese_and_korean_text_compiles_with_xelatex(tmp_path):
    """The export with Chinese and Korean task names compiles with xelatex and the preamble its header names."""
    engine, kpsewhich = shutil.which("xelatex"), shutil.which("kpsewhich")
    if engine is None or kpsewhich is None:
        print("skipping: no xelatex (apt-get install texlive-xetex texlive-lang-cjk)")
        pytest.skip("no xelatex: the LaTeX export with CJK text is not compiled here")
    for package in ("xeCJK.sty", "ctexhook.sty", "booktabs.sty"):  # xeCJK loads ctexhook (texlive-lang-chinese)
        if not subprocess.run([kpsewhich, package], capture_output=True, text=True).stdout.strip():
            print(f"skipping: xelatex has no {package} (apt-get install texlive-lang-cjk texlive-lang-chinese "
                  "texlive-latex-recommended)")
            pytest.skip(f"no {package}")
    from reports.render.latex import preamble

    latex = cjk_latex()
    document = "\n".join(["\\documentclass{article}", *preamble(latex), "\\begin{document}", latex,
                          "\\end{document}", ""])
    (tmp_path / "report.tex").write_text(document, encoding="utf-8")
    done = subprocess.run([engine, "-interaction=nonstopmode", "-halt-on-error", "report.tex"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:]
    assert (tmp_path / "report.pdf").stat().st_size > 0
    assert "Missing character" not in (tmp_path / "report.log").read_text(errors="replace")


# ---------------------------------------------------------------- DiQAD's correlations


def diqad_report(min_items=30):
    """A trained classifier right on every one of 20 test items, with probability-weighted expected ratings that
    are not its classes; no person rated these items."""
    gold = [2, 1, 0, 2, 1] * 4
    expected = {2: 1.8, 1: 1.1, 0: 0.3}
    items = [(n, 1, g, {}) for n, g in enumerate(gold)]
    ratings = [expected[g] + (0.05 if n % 3 == 0 else 0) * (1 if g < 2 else -1) for n, g in enumerate(gold)]
    d = data([(1, "quality", SCORE_FORM)], items, [],
             [(3, n, str(g), r) for n, (g, r) in enumerate(zip(gold, ratings, strict=True))],
             [(3, "classifier", "classify", {}, [1])])
    return build_report(d, ReportOptions(n_resamples=10, min_items=min_items)), gold, ratings


def test_diqad_correlates_the_predicted_class_and_counts_the_test_items():
    report, gold, ratings = diqad_report()
    row = report["ratings"]["models"][0]
    # DiQAD: Spearman and Pearson of the model's predictions (its classes) against the human labels (SciPy).
    assert row["gold_spearman"] == pytest.approx(stats.spearmanr(gold, gold).statistic) == 1.0
    assert row["gold_pearson"] == pytest.approx(stats.pearsonr(gold, gold).statistic) == 1.0
    # The expected ratings gave lower figures (what the table showed before).
    assert stats.spearmanr(ratings, gold).statistic < 0.99 and stats.pearsonr(ratings, gold).statistic < 0.999
    assert "predicted class against the gold label" in row["gold_correlation_of"]
    # The figures against gold rest on the 20 test items; no person rated them.
    assert row["n_gold"] == 20 and row["n_pairs"] == 0
    assert row["gold_small_sample"] == "small sample: 20 items with gold < 30"
    table = diqad_tables(public(report))[0]
    assert table.header[-1] == "Items" and table.rows[0][-1].text() == "20"
    assert {c.flag for c in table.rows[0][1:-1]} == {"small sample: 20 items with gold < 30"}
    assert table.note.startswith("Spearman and Pearson: the predicted class against the gold label")
    latex = render(report, "latex")
    assert "small sample: 20 items with gold < 30" in latex and "0 items < 30" not in latex
    rows = list(csv.DictReader(io.StringIO(render(report, "csv"))))
    spearman = next(r for r in rows if r["metric"] == "gold_spearman")
    assert spearman["flag"] == "small sample: 20 items with gold < 30"
    # Enough test items: no flag on the gold figures.
    report, _, _ = diqad_report(min_items=20)
    assert report["ratings"]["models"][0]["gold_small_sample"] is None


def test_a_run_without_per_token_picks_has_no_per_token_figure():
    """lm-eval's samples hold no token counts: a run imported from them stores no per-token pick, and its
    acc_per_token is undefined with the reason, never 0.0 (every item counted wrong)."""
    d = eight_items()
    d.predictions["answer_per_token"] = ["" for _ in d.predictions["answer_per_token"]]
    report = build_report(d, OPTIONS)
    for row in report["multiple_choice"]["models"]:
        assert row["acc_per_token"] is None and "without token counts" in row["undefined"]["acc_per_token"]
        assert row["acc"] is not None
