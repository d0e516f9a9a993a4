"""The report as one long CSV table: a row per figure, identified by section, task, question, model
and subset (the row's other identifiers as key=value pairs), with the reason when it is undefined."""
import csv
import io
import numbers

from benchmarks.spreadsheet import safe_cell

from ..build import public
from .anchored import _reasoned, csv_lines
from .judge_card import csv_lines as judge_card_lines
from .sequential import sequential_csv_lines

COLUMNS = ["section", "task", "question", "model", "subset", "metric", "value", "undefined_reason", "rule", "flag"]
# Keys that identify a row rather than measure something.
IDENTIFIERS = {"task", "question", "quality", "model", "run_id", "campaign_id", "campaign", "rater_group", "batch",
               "round", "state", "annotator", "annotator_id", "source", "position", "dimension", "domain", "mode",
               "rule", "name", "label", "primary", "krippendorff_level", "band", "tie_rule", "system", "small_sample",
               "gap_interval", "pooled_gap_interval", "ceiling_rule", "judge", "estimand", "scoring", "annotator_kind",
               "rule_text", "test", "gold_small_sample", "gold_correlation_of"}
# Text figures written as they are (which overall interval leads, and why).
TEXT_FIGURES = ("interval_lead", "interval_lead_why", "verdict", "reaches", "next_labels", "betting_verdict", "lead")
SUBSET_KEYS = ("rater_group", "campaign", "batch", "round", "annotator", "dimension", "domain", "source", "position",
               "judge", "estimand")
def _is_value(value):
    return value is None or isinstance(value, (numbers.Number, bool))


def _lines(section, row, task=None, model=None):
    ids = {"task": row.get("task", task), "question": row.get("question", row.get("quality")),
           "model": row.get("model", model),
           "subset": ";".join(f"{k}={row[k]}" for k in SUBSET_KEYS if row.get(k) not in (None, ""))}
    undefined = row.get("undefined", {})
    # The scoring rule of a model figure (model rows name it; {model: figure} dicts through model_rules).
    rule = row.get("rule") if ids["model"] and section.startswith("multiple_choice") else ""
    small = row.get("small_sample") or ""
    notes = row.get("notes") or {}
    for key, value in row.items():
        if key in IDENTIFIERS or key in ("undefined", "notes"):
            continue
        if _is_value(value) or key in TEXT_FIGURES:
            # The flag column: the row's small-sample flag and what the figure's note says.
            # Figures against gold rest on the items with gold (their own flag, where the row has one).
            own = key.startswith("gold_") and "gold_small_sample" in row
            flagged = (row["gold_small_sample"] or "") if own else small
            caution = "; ".join(filter(None, (flagged, notes.get(key)))) if value is not None else ""
            yield {"section": section, **ids, "metric": key, "value": value, "undefined_reason": undefined.get(key, ""),
                   "rule": rule, "flag": caution}
        elif isinstance(value, dict) and value and all(_is_value(v) for v in value.values()) and key != "model_rules":
            # {model: figure} or {letter: count}
            for sub, v in value.items():
                named = ({"model": sub, "metric": "accuracy"} if key == "models" else
                         {"model": sub, "metric": "gap"} if key == "gaps" else {"metric": f"{key}.{sub}"})
                yield {"section": section, **ids, **named, "value": v, "undefined_reason": "",
                       "rule": row.get("model_rules", {}).get(sub, "") if key in ("models", "gaps") else rule,
                       "flag": small if v is not None else ""}


def rows(report):
    report = public(report)
    gold = report["gold"]
    for metric, value in (("gold", gold["citation"]), ("gold_why", gold["why"]), ("gold_chosen_by", gold["chosen_by"]),
                          ("gold_declined", (gold["declined"] or {}).get("citation")),
                          *[(f"gold_left_out.{left['reason']}", left["count"]) for left in gold["left_out"]],
                          *[("gold_excluded_campaign", e["campaign_id"]) for e in gold["excluded_campaigns"]]):
        yield {"section": "gold", "task": None, "question": None, "model": None, "subset": "", "metric": metric,
               "value": value, "undefined_reason": "" if value is not None else "none"}
    for section in ("campaigns", "batches"):
        for row in report["agreement"][section]:
            yield from _lines(f"agreement.{section}", row)
    for row in report["annotators"]:
        yield from _lines("annotators", row)
    mc = report["multiple_choice"]
    if mc:
        for key in ("tasks", "models", "by_dimension", "by_domain", "positions"):
            for row in mc[key]:
                yield from _lines(f"multiple_choice.{key}", row)
        humans = {k: v for k, v in mc["overall"].items() if k not in ("models", "mean_of_dimensions")}
        yield from _lines("multiple_choice.overall", humans, task="overall")
        for row in mc["overall"]["models"]:
            yield from _lines("multiple_choice.overall", row, task="overall")
        if mc["overall"].get("mean_of_dimensions"):
            yield from _lines("multiple_choice.mean_of_dimensions", mc["overall"]["mean_of_dimensions"],
                              task="overall")
    if report["ratings"]:
        for key in ("qualities", "models"):
            for row in report["ratings"][key]:
                yield from _lines(f"ratings.{key}", row)
    if report["pairwise"]:
        for task in report["pairwise"]["tasks"]:
            yield from _lines("pairwise.tasks", {k: v for k, v in task.items()
                                                 if k not in ("judges", "judge_agreement", "botchat")})
            for agreement in task.get("judge_agreement", []):
                yield from _lines("pairwise.judge_agreement",
                                  {k: v for k, v in agreement.items() if k not in ("judge_a", "judge_b")},
                                  task=task["task"],
                                  model=f"{agreement['judge_a']} vs {agreement['judge_b']}")
            for judge, table in (task.get("botchat") or {}).items():
                for record in table["systems"]:
                    for metric in ("n", "win", "both", "neither", "lose", "unknown", "n_read", "win_rate", "tie_rate",
                                   "lose_rate", "win_tie_rate", "not_bad_rate", "score"):
                        yield {"section": "pairwise.botchat", "task": task["task"], "question": None, "model": judge,
                               "subset": f"system={record['model']}", "metric": metric, "value": record[metric],
                               "undefined_reason": "" if record[metric] is not None else "no answer read"}
                for record in table.get("versus", []):
                    for metric in ("n", "unknown", "n_read", "win", "tie", "lose", "win_rate", "tie_rate",
                                   "win_tie_rate", "win_tie_rate_study_walk", "n_read_study_walk"):
                        yield {"section": "pairwise.botchat_versus", "task": task["task"], "question": None,
                               "model": judge, "subset": f"system={record['model']};against={record['opponent']}",
                               "metric": metric, "value": record[metric],
                               "undefined_reason": "" if record[metric] is not None else "no answer read"}
            for judge, entry in task["judges"].items():
                yield from _lines("pairwise.judges", entry, task=task["task"], model=judge)
                for system, rating in ((entry.get("elo") or {}).get("ratings") or {}).items():
                    yield {"section": "pairwise.elo", "task": task["task"], "question": None, "model": judge,
                           "subset": f"system={system}", "metric": "elo", "value": rating, "undefined_reason": ""}
                shuffled = entry.get("elo_over_orders") or {}
                for figure in ("mean", "std"):
                    for system, value in (shuffled.get(figure) or {}).items():
                        yield {"section": "pairwise.elo", "task": task["task"], "question": None, "model": judge,
                               "subset": f"system={system};orders={shuffled['n_orders']}",
                               "metric": f"elo_{figure}_over_orders", "value": value, "undefined_reason": ""}
                bt = entry["bradley_terry"]
                for interval in bt["intervals"]:
                    for metric in ("score", "low", "high"):
                        yield {"section": "pairwise.bradley_terry", "task": task["task"], "question": None,
                               "model": judge, "subset": f"system={interval['model']}", "metric": metric,
                               "value": interval[metric],
                               "undefined_reason": (bt["undefined_reason"] or "") if interval[metric] is None else ""}
    selfchat = (report["pairwise"] or {}).get("selfchat")
    if selfchat:
        for row in selfchat["utterance_length"]:
            yield from _lines("pairwise.utterance_length", row, model=row["system"])
        for curve in selfchat["pass_at_n"]:
            for point in curve["points"] or []:
                yield {"section": "pairwise.pass_at_n", "task": None, "question": None, "model": curve["system"],
                       "subset": f"judged_by={curve['judged_by']};n={point['n']}", "metric": "pass_at_n",
                       "value": point["share"],
                       "undefined_reason": "" if point["share"] is not None else "no judgements"}
    yield from csv_lines(report, _lines)
    yield from sequential_csv_lines(report, _lines, _reasoned)
    yield from judge_card_lines(report, _lines)
    for study in (report.get("paper") or {}).get("studies", []):
        for table in study["tables"]:
            section = f"paper.{study['study']}.table{table['table']}"
            for entry in table["beside"]:
                for figure, values in (("paper", entry["paper"]), ("ours", entry["values"]),
                                       ("difference", entry["difference"])):
                    for column in table["columns"]:
                        yield {"section": section, "task": None, "question": column, "model": entry["label"],
                               "subset": f"paper_model={entry['paper_model']};figure={figure}", "metric": table["unit"],
                               "value": values.get(column), "undefined_reason": "" if values.get(column) is not None
                               else entry["undefined"].get(column, "missing")}
            for entry in table["ours_alone"]:
                for column in table["columns"]:
                    yield {"section": section, "task": None, "question": column, "model": entry["label"],
                           "subset": "figure=ours;no paper row", "metric": table["unit"],
                           "value": entry["values"].get(column), "undefined_reason": "" if entry["values"].get(column)
                           is not None else entry["undefined"].get(column, "missing")}
    for key, count in report["item_lists"]["counts"].items():
        yield {"section": "item_lists", "task": None, "question": None, "model": None, "subset": "",
               "metric": key, "value": count, "undefined_reason": ""}


def render_csv(report):
    out = io.StringIO()
    writer = csv.DictWriter(out, COLUMNS, lineterminator="\n")
    writer.writeheader()
    for row in rows(report):
        # csv writes None as "" and True/False as words; undefined figures keep their reason column.
        writer.writerow({key: safe_cell(value) for key, value in row.items()})
    return out.getvalue()
