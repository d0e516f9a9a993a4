"""Rating tasks: the human ceiling, each model's correlation with the mean human rating, and its
agreement with gold."""
from __future__ import annotations

import numpy as np

from benchmarks.formschema import excluding_values, rating_values
from metrics import (
    as_number,
    classification_metrics,
    cohen_kappa,
    correlations,
    leave_one_out_correlations,
    mean_rating_per_item,
)
from modeleval import modes
from studies.huynh.recipe import seed_variant

from ..contract import ReportOptions
from ..figures import mean_or_none, new_row, put
from ..readable import flag
from ..rows import Rows
from ..texts import CEILING_OF_POSITIONS, SEED_RULE

RATING_MODES = modes.modes_where(section=modes.Section.RATINGS)  # with classifiers trained here (DiQAD)


def rating_class(answer, rating, values):
    """The model's rating as one of the valid values: its answer when valid, else the nearest to its
    expected rating."""
    for v in values:
        spelled = ("yes" if v else "no") if isinstance(v, bool) else str(v)
        if answer not in (None, "") and answer in (spelled, str(v)):
            return v
    if rating is None:
        return None
    return min(values, key=lambda v: (abs(float(v) - rating), float(v)))



def rating_quality(rows: Rows, task, spec, runs, options: ReportOptions):
    key, values = spec["key"], rating_values(spec)
    items = rows.items_of[task["id"]]
    per_item = rows.human_answers(key) if key in rows.data.annotations["answers"] else {}
    excluded = excluding_values(spec)
    per_item = {i: {r: v for r, v in a.items() if v not in excluded} for i, a in per_item.items()}
    means = dict(zip(items, mean_rating_per_item([[as_number(v) for v in per_item.get(i, {}).values()]
                                                   for i in items]).means, strict=True))
    gold = rows.gold_for(task, key)
    row = new_row(task=task["slug"], quality=key, label=spec.get("label", key), scale=values,
                  n_items=len(items), n_rated=sum(m is not None for m in means.values()),
                  n_gold=sum(g is not None for g in gold.values()))
    ceiling = leave_one_out_correlations(per_item, items)
    row["human_raters"] = []
    positions = [r for r, _ in ceiling if r in rows.position_raters]
    row["n_raters"], row["n_rating_positions"] = len(ceiling) - len(positions), len(positions)
    for rater, corr in ceiling:
        if rater in rows.position_raters:
            continue  # a position is not a person: no per-rater row
        entry = new_row(rater=rows.data.users.get(rater, str(rater)), n=corr.n)
        for name, value in (("spearman", corr.spearman.value), ("spearman_p", corr.spearman.pvalue),
                            ("pearson", corr.pearson.value)):
            put(entry, name, value, corr.undefined_reason)
        row["human_raters"].append(entry)
    put(row, "human_ceiling_spearman", mean_or_none([c.spearman.value for _, c in ceiling]),
        "fewer than 2 raters with overlapping items")
    put(row, "human_ceiling_pearson", mean_or_none([c.pearson.value for _, c in ceiling]),
        "fewer than 2 raters with overlapping items")
    row["ceiling_rule"] = CEILING_OF_POSITIONS(rule=CEILING_RULE) if positions else CEILING_RULE
    flag(row, [(row["n_rated"], options.min_items, "rated items"),
               (len(ceiling), options.min_raters, "raters or positions")])
    models = []
    pred = rows.data.predictions
    for run in runs:
        # A run with seeds drew its few-shot examples once per seed, each draw a variant (Huynh et al.):
        # its figures are the mean and standard deviation of the per-seed correlations.
        variants = [seed_variant(s) for s in run["settings"].get("seeds") or []] or [first_variant(run)]
        per_seed = []
        for variant in variants:
            where = rows.predictions[run["id"], variant]
            on = [i for i in items if i in where]
            ratings = {i: pred["rating"][where[i]] for i in on}
            per_seed.append((variant, where, on, ratings,
                             correlations([ratings[i] for i in on], [means[i] for i in on])))
        _, where, on, ratings, corr = per_seed[0]
        mrow = new_row(task=task["slug"], quality=key, model=rows.run_label[run["id"]], run_id=run["id"],
                       mode=run["mode"], n_predictions=len(on),
                       # a classifier trained without one domain (DiQAD's Table 4, "w/o" rows)
                       holdout_domain=(run.get("model__trained_by__settings") or {}).get("holdout_domain") or "")
        if variant:
            seeded_figures(mrow, per_seed)
        else:
            for name in ("spearman", "pearson", "kendall_tau_b"):
                put(mrow, name, getattr(corr, name).value, corr.undefined_reason)
                put(mrow, f"{name}_p", getattr(corr, name).pvalue, corr.undefined_reason)
        mrow["n_pairs"] = corr.n
        flag(mrow, [(corr.n, options.min_items, "items")])
        scored = [i for i in on if gold.get(i) is not None and gold[i] in values]
        no_gold = ("no gold labels for this quality" if not any(g is not None for g in gold.values())
                   else "no predicted item has gold")
        if scored:
            truth = [gold[i] for i in scored]
            guess = [rating_class(pred["answer"][where[i]], ratings[i], values) for i in scored]
            metrics_ = classification_metrics(truth, guess, labels=values)
            kappa = cohen_kappa(truth, guess, labels=values)
            # DiQAD correlates the model's predictions, the classes it predicts, with the human labels.
            vs_gold = correlations([as_number(g) for g in guess], [as_number(t) for t in truth])
            put(mrow, "gold_accuracy", metrics_.accuracy, metrics_.undefined_reason)
            put(mrow, "gold_uar", metrics_.uar, metrics_.undefined_reason)
            put(mrow, "gold_kappa", kappa.value, kappa.undefined_reason)
            put(mrow, "gold_spearman", vs_gold.spearman.value, vs_gold.undefined_reason)
            put(mrow, "gold_pearson", vs_gold.pearson.value, vs_gold.undefined_reason)
            put(mrow, "gold_precision", metrics_.macro_precision, metrics_.undefined_reason)
            put(mrow, "gold_recall", metrics_.macro_recall, metrics_.undefined_reason)
            put(mrow, "gold_f1", metrics_.macro_f1, metrics_.undefined_reason)
            mrow["gold_majority_class_rate"] = metrics_.majority_class_rate
            mrow["gold_per_class"] = [c.to_dict() for c in metrics_.per_class]
            mrow["gold_confusion_matrix"] = metrics_.confusion_matrix
            mrow["gold_by_domain"] = domain_figures(scored, truth, guess, rows.domain, values, options)
        else:
            for name in GOLD_KEYS:
                put(mrow, name, None, no_gold)
        mrow["n_gold"] = len(scored)
        mrow["gold_correlation_of"] = GOLD_CORRELATION
        flag(mrow, [(len(scored), options.min_items, "items with gold")], key="gold_small_sample")
        models.append(mrow)
    ratings_by_run = {r["id"]: {i: pred["rating"][j] for i, j in rows.predictions[r["id"], first_variant(r)].items()}
                      for r in runs}
    return row, models, {"means": means, "ratings": ratings_by_run}


def domain_figures(items, truth, guess, domain_of, values, options: ReportOptions):
    """DiQAD's cross-domain analysis (its Table 4): Acc, UAR, Spearman, Pearson and F1 against gold on each item
    domain's share of the items (items without a domain under ""), flagged where a domain has too few items. The
    correlations are of the predicted classes with the gold labels, as in the whole test set's row."""
    by_domain = {}
    for item, t, g in zip(items, truth, guess, strict=True):
        by_domain.setdefault(domain_of.get(item) or "", []).append((t, g))
    out = []
    for domain in sorted(by_domain):
        pairs = by_domain[domain]
        figures = classification_metrics([t for t, _ in pairs], [g for _, g in pairs], labels=values)
        corr = correlations([as_number(g) for _, g in pairs], [as_number(t) for t, _ in pairs])
        entry = new_row(domain=domain, n=len(pairs))
        put(entry, "accuracy", figures.accuracy, figures.undefined_reason)
        put(entry, "uar", figures.uar, figures.undefined_reason)
        put(entry, "f1", figures.macro_f1, figures.undefined_reason)
        put(entry, "spearman", corr.spearman.value, corr.undefined_reason)
        put(entry, "pearson", corr.pearson.value, corr.undefined_reason)
        flag(entry, [(len(pairs), options.min_items, "items")])
        out.append(entry)
    return out


def first_variant(run):
    seeds = run["settings"].get("seeds") or []
    return seed_variant(seeds[0]) if seeds else ""


def seeded_figures(mrow, per_seed):
    """Mean and sample standard deviation (ddof 1) over the seeds of each correlation, and each seed's own."""
    mrow["seeds"] = [{"variant": variant, "n": corr.n, **{name: getattr(corr, name).value
                                                         for name in ("spearman", "pearson", "kendall_tau_b")}}
                     for variant, _, _, _, corr in per_seed]
    mrow["seed_rule"] = SEED_RULE(n=len(per_seed))
    for name in ("spearman", "pearson", "kendall_tau_b"):
        values = [s[name] for s in mrow["seeds"]]
        defined = all(v is not None for v in values)
        put(mrow, name, float(np.mean(values)) if defined else None, "undefined for some seed")
        put(mrow, f"{name}_std", float(np.std(values, ddof=1)) if defined and len(values) > 1 else None,
            "one seed, or undefined for some seed")
        put(mrow, f"{name}_p", None, "a mean over seeds has no single p-value; each seed's is in seeds")


CEILING_RULE = "mean over raters of each rater's correlation with the mean of the other raters"
GOLD_CORRELATION = ("the predicted class against the gold label (DiQAD's Spearman and Pearson: model predictions "
                    "against human labels, SciPy)")
GOLD_KEYS = ("gold_accuracy", "gold_uar", "gold_kappa", "gold_spearman", "gold_pearson", "gold_precision",
             "gold_recall", "gold_f1")


def rating_section(rows: Rows, options: ReportOptions):
    qualities, models, scatter = [], [], []
    for task in rows.data.tasks:
        if rows.kind[task["id"]] != "rating":
            continue
        runs = rows.runs_for(task["id"], RATING_MODES)
        for spec in task["form"]["questions"]:
            if rating_values(spec) is None:
                continue
            mine = [r for r in runs if (r["settings"].get("quality") or task["form"]["primary"]) == spec["key"]]
            row, model_rows, points = rating_quality(rows, task, spec, mine, options)
            qualities.append(row)
            models += model_rows
            for run in mine:
                pts = [(points["means"][i], r) for i, r in points["ratings"][run["id"]].items()
                       if points["means"].get(i) is not None and r is not None]
                scatter.append({"task": task["slug"], "quality": spec["key"], "model": rows.run_label[run["id"]],
                                "points": pts})
    if not qualities:
        return None
    return {"qualities": qualities, "models": models, "_scatter": scatter,
            "note": "gold_uar is the true mean of per-class recalls; precision, recall and F1 are macro averages"}
