"""Agreement between raters: per campaign x task x label question, and per batch on the primary question."""
from __future__ import annotations

from collections import defaultdict

from benchmarks.formschema import question
from metrics import fleiss_kappa, krippendorff_alpha, landis_koch_band, percent_agreement

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
        fleiss = fleiss_kappa(ratings_by_item, categories=categories)
    except ValueError:  # labels outside the form (an edited form): let the data name the categories
        fleiss = fleiss_kappa(ratings_by_item, categories=list(dict.fromkeys(
            v for item in ratings_by_item for v in item if v is not None)))
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
    return row


def agreement_section(rows: Rows, options: ReportOptions):
    """Per campaign x task x label question, and per batch x task on the primary question."""
    data, ann = rows.data, rows.data.annotations
    by_campaign = defaultdict(lambda: defaultdict(list))  # (campaign, task) -> item -> row indices
    for i in rows.current:
        item = ann["item_id"][i]
        by_campaign[ann["campaign_id"][i], rows.item_task[item]][item].append(i)
    campaign_rows, batch_rows = [], []
    batches = {b["id"]: b for b in data.batches}
    order = sorted(by_campaign.items(), key=lambda kv: (kv[0][0], rows.tasks[kv[0][1]]["slug"]))
    for (campaign_id, task_id), per_item in order:
        task, campaign = rows.tasks[task_id], rows.campaigns[campaign_id]
        keys = dict(rater_group=rows.group[campaign_id], campaign_id=campaign_id, campaign=campaign["name"],
                    task=task["slug"])
        primary = question(task["form"], task["form"]["primary"])
        by_question = {}
        for spec in task["form"]["questions"]:
            if spec["type"] not in LABEL_TYPES or spec["key"] not in ann["answers"]:
                continue
            column = ann["answers"][spec["key"]]
            by_question[spec["key"]] = ratings = [[column[i] for i in idx] for idx in per_item.values()]
            campaign_rows.append(agreement_row(ratings, spec, options, **keys, question=spec["key"],
                                               primary=spec is primary))
        if primary["key"] not in by_question:
            continue
        by_batch = defaultdict(list)
        for idx, ratings in zip(per_item.values(), by_question[primary["key"]]):
            by_batch[ann["batch_id"][idx[0]]].append(ratings)
        for batch_id, ratings in sorted(by_batch.items(), key=lambda kv: batches[kv[0]]["number"]):
            batch = batches[batch_id]
            # Batches are many (a 100,000-item campaign has 50): their rows carry Fleiss' kappa, the QC's figure.
            batch_rows.append(agreement_row(ratings, primary, options, full=False, **keys, batch=batch["number"],
                                            round=batch["round"], state=batch["state"], question=primary["key"]))
    return {"campaigns": campaign_rows, "batches": batch_rows, "groups": GROUPS}
