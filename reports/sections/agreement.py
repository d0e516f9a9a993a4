"""Agreement between raters: per campaign x task x label question, and per batch on the primary question."""
from __future__ import annotations

from collections import defaultdict
from itertools import pairwise

import numpy as np

from benchmarks.formschema import question
from metrics import fleiss_kappa, krippendorff_alpha, landis_koch_band, percent_agreement
from metrics.agreement_intervals import METHOD, fleiss_kappa_interval, krippendorff_alpha_interval

from ..contract import ReportOptions
from ..figures import new_row, put
from ..forms import LABEL_TYPES, agreement_spec
from ..readable import flag
from ..rows import GROUPS, Rows


def agreement_row(ratings_by_item, spec, options, full=True, **keys):
    """Fleiss' kappa of one question; `full` adds Krippendorff's alpha (and interval alpha for scales)
    and raw agreement."""
    categories, level, domain = agreement_spec(spec)
    row = new_row(**keys, n_items=len(ratings_by_item))
    try:
        fleiss = fleiss_kappa(ratings_by_item, categories=categories, given="labels")
    except ValueError:  # labels outside the form (an edited form): let the data name the categories
        fleiss = fleiss_kappa(ratings_by_item, categories=list(dict.fromkeys(
            v for item in ratings_by_item for v in item if v is not None)), given="labels")
    put(row, "fleiss_kappa", fleiss.value, fleiss.undefined_reason)
    row.update(n_raters=fleiss.n_raters, fleiss_n_items=fleiss.n_items, fleiss_n_left_out=fleiss.n_left_out)
    flag(row, [(fleiss.n_items, options.min_agreement_items, "items"),
               (fleiss.n_raters or 0, options.min_raters, "raters per item")])
    if row["small_sample"] and fleiss.value is not None:
        put(row, "band", None, "small sample: no Landis-Koch band")
    else:
        row["band"] = landis_koch_band(fleiss.value)
    if not full:
        return row
    alpha = krippendorff_alpha(ratings_by_item, level=level, value_domain=domain)
    put(row, "krippendorff_alpha", alpha.value, alpha.undefined_reason)
    row.update(krippendorff_level=level, krippendorff_n_items=alpha.n_items)
    if spec["type"] == "scale":
        interval = krippendorff_alpha(ratings_by_item, level="interval")
        put(row, "krippendorff_alpha_interval", interval.value, interval.undefined_reason)
    share = percent_agreement(ratings_by_item)
    put(row, "percent_agreement", share.value, share.undefined_reason)
    resampling = dict(confidence=options.confidence, n_resamples=options.n_resamples, seed=options.seed)
    for key, interval in (
            # unused categories change no kappa: the data's own suffice
            ("fleiss_kappa",
             fleiss_kappa_interval(ratings_by_item, **resampling) if fleiss.value is not None else None),
            ("krippendorff_alpha", krippendorff_alpha_interval(ratings_by_item, level, domain, **resampling)
             if alpha.value is not None else None)):
        for end in ("low", "high", "jackknife_low", "jackknife_high"):
            put(row, f"{key}_{end}", getattr(interval, end, None),
                (interval.undefined_reason if interval else None) or "the statistic is undefined")
    row["interval_method"] = METHOD
    return row



def item_groups(rows: Rows):
    """The current labels as the section reads them: per campaign x task (campaigns by id, tasks by slug), its
    items in the order of their first label, each item's labels in row order. Yields (campaign id, task id, row
    indices, item bounds): the labels of the n-th item are rows[bounds[n]:bounds[n + 1]]."""
    current = np.flatnonzero(rows.annotation_array("current"))
    if not current.size:
        return
    campaign = rows.annotation_array("campaign_id")[current]
    position = rows.annotation_array("item_position")[current]
    campaigns, campaign_code = np.unique(campaign, return_inverse=True)
    # Each (campaign, item) pair named by the row of its first label.
    _, first, pair = np.unique(campaign_code * len(rows.position) + position, return_index=True, return_inverse=True)
    first_row = first[pair]
    task_ids = np.array(rows.data.items["task_id"], dtype=np.int64)
    by_slug = sorted(rows.tasks, key=lambda t: rows.tasks[t]["slug"])
    slug_rank = np.zeros(max(rows.tasks) + 1, dtype=np.int64)
    slug_rank[by_slug] = np.arange(len(by_slug))
    task_rank = slug_rank[task_ids[position]]
    order = np.lexsort((first_row, task_rank, campaign_code))  # stable: an item's labels stay in row order
    campaign_code, task_rank, first_row = campaign_code[order], task_rank[order], first_row[order]
    new_group = np.r_[True, (campaign_code[1:] != campaign_code[:-1]) | (task_rank[1:] != task_rank[:-1])]
    new_item = np.r_[True, first_row[1:] != first_row[:-1]]
    group_starts = np.r_[np.flatnonzero(new_group), order.size]
    item_starts = np.flatnonzero(new_item)
    label_rows = current[order]
    for start, end in pairwise(group_starts.tolist()):
        bounds = item_starts[(item_starts >= start) & (item_starts < end)] - start
        yield (int(campaigns[campaign_code[start]]), by_slug[task_rank[start]], label_rows[start:end].tolist(),
               np.r_[bounds, end - start].tolist())


def agreement_section(rows: Rows, options: ReportOptions):
    """Per campaign x task x label question, and per batch x task on the primary question."""
    data, ann = rows.data, rows.data.annotations
    campaign_rows, batch_rows = [], []
    batches = {b["id"]: b for b in data.batches}
    for campaign_id, task_id, label_rows, bounds in item_groups(rows):
        task, campaign = rows.tasks[task_id], rows.campaigns[campaign_id]
        keys = dict(rater_group=rows.group[campaign_id], campaign_id=campaign_id, campaign=campaign["name"],
                    task=task["slug"])
        primary = question(task["form"], task["form"]["primary"])
        by_question = {}
        for spec in task["form"]["questions"]:
            if spec["type"] not in LABEL_TYPES or spec["key"] not in ann["answers"]:
                continue
            column = ann["answers"][spec["key"]]
            values = [column[i] for i in label_rows]
            by_question[spec["key"]] = ratings = [values[a:b] for a, b in pairwise(bounds)]
            question_keys = dict(keys, question=spec["key"], primary=spec is primary)
            campaign_rows.append(rows.by_inputs(
                "agreement", lambda ratings=ratings, spec=spec, question_keys=question_keys: agreement_row(
                    ratings, spec, options, **question_keys),
                ratings, spec, question_keys))
        if primary["key"] not in by_question:
            continue
        by_batch = defaultdict(list)
        batch_of = ann["batch_id"]
        for start, ratings in zip(bounds, by_question[primary["key"]], strict=False):  # bounds end with the last
            by_batch[batch_of[label_rows[start]]].append(ratings)
        for batch_id, ratings in sorted(by_batch.items(), key=lambda kv: batches[kv[0]]["number"]):
            batch = batches[batch_id]
            # Batches are many (a 100,000-item campaign has 50): their rows carry Fleiss' kappa, the QC's figure.
            batch_keys = dict(keys, batch=batch["number"], round=batch["round"], state=batch["state"],
                              question=primary["key"])
            batch_rows.append(rows.by_inputs(
                "agreement_batch", lambda ratings=ratings, primary=primary, batch_keys=batch_keys: agreement_row(
                    ratings, primary, options, full=False, **batch_keys),
                ratings, primary, batch_keys))
    return {"campaigns": campaign_rows, "batches": batch_rows, "groups": GROUPS}
