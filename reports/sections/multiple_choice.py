"""Multiple-choice tasks: humans (m of k, mean of raters) against every model, the paired gap with its
interval, positions, dimensions, domains and the item lists."""
from __future__ import annotations

from collections import Counter, defaultdict

import numpy as np
from django.utils.translation import gettext_noop

from metrics import (
    PAIRED_GAP,
    STRATIFIED,
    human_baseline,
    majority_size,
    mcnemar_exact,
    paired_bootstrap_gaps,
    stratified_interval,
)
from modeleval.modes import Section, modes_where, reads
from studies.kodialogbench.recipe import averages as set_and_task_averages
from studies.vocabulary import Rule

from ..contract import ReportOptions
from ..figures import mean_or_none, new_row, note, put
from ..readable import GENERATION, RULE_COLUMNS, flag, run_rule
from ..rows import Rows
from ..texts import NO_ITEM_BOTH_ANSWERED, UNDEFINED_ON_EVERY_TASK, UNDEFINED_ON_SOME_TASK, UNDEFINED_ON_TASKS

MC_MODES = modes_where(section=Section.MULTIPLE_CHOICE)


def answer_column(run):
    """Which prediction column holds lm-eval's acc pick for a log-likelihood run."""
    return "answer" if run["settings"].get("rule") == Rule.ACC else "acc_pick"


def rule_column(run, rule):
    """The prediction column holding a run's pick under `rule` (reports.readable.run_rule)."""
    if rule == GENERATION or rule == run["settings"].get("rule"):
        return "answer"
    return answer_column(run) if rule == Rule.ACC else RULE_COLUMNS[rule]


def mc_task(rows: Rows, task, t_index, options: ReportOptions):
    """One multiple-choice task: humans by both rules, every model, gaps, positions."""
    task_id = task["id"]
    with_gold = [i for i in rows.items_of[task_id] if rows.gold[i] is not None]
    answered = [i for i in with_gold if rows.human.get(i)]
    items = answered or with_gold  # compare on the human sample; models-only tasks on all gold items
    gold = [rows.gold[i] for i in items]
    gold_text = np.array([str(g) for g in gold], dtype=object)  # model answers are option keys as text
    positions = np.array([rows.position[i] for i in items], dtype=int)
    labels = [rows.human.get(i, {}) for i in items]
    raters = sorted({a for answers in labels for a in answers})
    columns = {r: [answers.get(r) for answers in labels] for r in raters}
    k = rows.overlap() or (Counter(map(len, labels)).most_common(1)[0][0] if answered else 0)
    baseline = human_baseline(labels, gold, k) if answered else None
    m = majority_size(k)
    majority = baseline.majority if baseline else None
    per_rater = baseline.mean_of_raters if baseline else None
    human = np.array(majority.item_correct if majority else [], dtype=bool)
    no_humans = "no human answers on this task's items"

    row = new_row(task=task["slug"], name=task["name"], dimension=task["dimension"], n_items=len(items),
                  n_items_with_gold=len(with_gold), n_human_raters=len(raters), k=k, m=m)
    n_opts = [rows.n_options.get(i) for i in items]
    put(row, "chance", mean_or_none([1 / n for n in n_opts if n]), "no item lists its options")
    put(row, "human_majority", majority.accuracy if majority else None, no_humans)
    put(row, "human_mean_of_raters", per_rater.accuracy if per_rater else None, no_humans)
    row["human_raters_std"] = per_rater.std if per_rater else None
    row["human_raters"] = [{"rater": rows.data.users.get(r.rater, str(r.rater)), "accuracy": r.accuracy,
                            "n_answered": r.n_answered} for r in per_rater.raters] if per_rater else []

    row["n_without_human_answers"] = len(with_gold) - len(answered)
    flag(row, [(len(items), options.min_items, "items")])
    runs = rows.runs_for(task_id, MC_MODES)
    rules = {r["id"]: run_rule(r, options.rule) for r in runs}
    answers = {r["id"]: rows.aligned(r["id"], rule_column(r, rules[r["id"]]), positions) for r in runs}
    flags = {r["id"]: answers[r["id"]] == gold_text for r in runs}
    # People and a model are compared on the items both answered: an item the model has no prediction for is
    # left out of its figures and counted (an unparsable answer is an answer, and wrong).
    predicted = {r["id"]: np.array([s is not None for s in rows.aligned(r["id"], "parse_status", positions)],
                                   dtype=bool) for r in runs}
    # Models are scored on the whole task set, humans on their sample: a model's accuracy over every gold
    # item it has a prediction for is the study's own figure, reported beside the paired one.
    all_positions = np.array([rows.position[i] for i in with_gold], dtype=int)
    all_gold = np.array([str(rows.gold[i]) for i in with_gold], dtype=object)
    gaps, replicates = paired_gaps(human, runs, flags, predicted, options, t_index) if answered else ({}, {})
    model_rows = []
    for run in runs:
        mask = predicted[run["id"]]
        status = rows.aligned(run["id"], "parse_status", positions)
        loglik = reads(run["mode"]).by_rule
        n_compared = int(mask.sum())
        mrow = new_row(task=task["slug"], model=rows.run_label[run["id"]], run_id=run["id"], mode=run["mode"],
                       rule=rules[run["id"]], n_items=len(items), n_predictions=n_compared,
                       n_missing=len(items) - n_compared, parse_failures=int(np.sum(status == "unparsable")))
        no_predictions = "no prediction on the task's items" + (" that people answered" if answered else "")
        flag(mrow, [(n_compared, options.min_items, "items")])
        put(mrow, "accuracy", float(flags[run["id"]][mask].mean()) if n_compared else None, no_predictions)
        scored = np.array([s is not None for s in rows.aligned(run["id"], "parse_status", all_positions)], dtype=bool)
        right = rows.aligned(run["id"], rule_column(run, rules[run["id"]]), all_positions) == all_gold
        mrow["n_items_all"] = int(scored.sum())
        put(mrow, "accuracy_all_items", float(right[scored].mean()) if scored.any() else None, "no predictions")
        picks = ((Rule.ACC, answer_column(run)), (Rule.ACC_NORM, "answer_norm"), ("acc_per_token", "answer_per_token"))
        for key, column in picks:
            picked = rows.aligned(run["id"], column, positions)[mask]
            if loglik and n_compared and not any(picked):  # no pick stored under the rule (lm-eval's samples hold
                put(mrow, key, None, "no pick under this rule: imported without token counts")  # no token counts)
                continue
            put(mrow, key, float(np.mean(picked == gold_text[mask])) if loglik and n_compared else None,
                "log-likelihood runs only" if not loglik else no_predictions)
        if run["id"] in gaps:
            gap, low, high, method = gaps[run["id"]]
            mrow.update(n_compared=n_compared, human_majority=float(human[mask].mean()), gap=gap, gap_low=low,
                        gap_high=high, gap_interval=method)
            test = mcnemar_exact(human[mask], flags[run["id"]][mask])
            mrow.update(mcnemar_p=test.pvalue, human_only=test.human_only, model_only=test.model_only)
            note(mrow, "mcnemar_p", test.note)
            compared = per_rater if mask.all() else human_baseline([labels[n] for n in np.flatnonzero(mask)],
                                                                     [gold[n] for n in np.flatnonzero(mask)],
                                                                     k).mean_of_raters
            put(mrow, "gap_mean_of_raters", compared.accuracy - mrow["accuracy"]
                if compared.accuracy is not None else None, "no rater answered")
        else:
            mrow["n_compared"] = 0
            for key in ("human_majority", "gap", "gap_low", "gap_high", "mcnemar_p", "gap_mean_of_raters"):
                put(mrow, key, None, no_predictions if answered else no_humans)
        model_rows.append(mrow)
    return {"row": row, "models": model_rows, "items": items, "gold": gold, "human": human, "per_rater": per_rater,
            "columns": columns, "flags": flags, "predicted": predicted, "answers": answers, "runs": runs,
            "replicates": replicates,
            "rules": {rows.run_label[r["id"]]: rules[r["id"]] for r in runs},
            "positions": position_rows(rows, task, gold, human, runs, flags, predicted, answers, rules, options)}


def paired_gaps(human, runs, flags, predicted, options: ReportOptions, t_index):
    """run id -> (gap, low, high, method) and run id -> its bootstrap replicates, on the items both the people and
    the run answered: one set of resamples (seed `options.seed + t_index`) for the runs that answered the same
    items, each equal to `metrics.paired_bootstrap_gap` on those items."""
    groups = defaultdict(list)
    for run in runs:
        if predicted[run["id"]].any():
            groups[predicted[run["id"]].tobytes()].append(run["id"])
    gaps, replicates = {}, {}
    for members in groups.values():
        mask = predicted[members[0]]
        paired = paired_bootstrap_gaps(human[mask], [flags[r][mask] for r in members], options.n_resamples,
                                       options.seed + t_index, options.confidence)
        for j, run_id in enumerate(members):
            gaps[run_id], replicates[run_id] = (*paired.gaps[j], paired.method), paired.replicates[:, j]
    return gaps, replicates


def position_rows(rows: Rows, task, gold, human, runs, flags, predicted, answers, rules, options):
    """Accuracy by the gold answer's position (letter), for humans and models (on the items each predicted), the
    letters each model picks, and accuracy with the gold forced to each position (position-policy runs)."""
    out = []
    by_letter = defaultdict(list)
    for n, g in enumerate(gold):
        by_letter[str(g)].append(n)
    for letter in sorted(by_letter):
        idx = by_letter[letter]
        row = new_row(task=task["slug"], source="gold_position", position=letter, n_items=len(idx))
        put(row, "human_majority", float(human[idx].mean()) if human.size else None, "no human answers")
        row["models"] = {rows.run_label[r["id"]]: mean_or_none(flags[r["id"]][idx][predicted[r["id"]][idx]])
                         for r in runs}
        row["model_rules"] = {rows.run_label[r["id"]]: rules[r["id"]] for r in runs}
        out.append(flag(row, [(len(idx), options.min_items, "items")]))
    pred = rows.data.predictions
    for run in runs:
        picks = Counter(a or "unparsable" for a in answers[run["id"]] if a is not None)
        out.append(new_row(task=task["slug"], source="picked", model=rows.run_label[run["id"]], rule=rules[run["id"]],
                           counts=dict(sorted(picks.items()))))
    for run in rows.runs_for(task["id"], MC_MODES, as_is=False):
        variants = sorted({v for (r, v) in rows.predictions if r == run["id"] and v})
        task_items = set(rows.items_of[task["id"]])
        pooled = []
        for variant in variants:
            idx = [j for i, j in rows.predictions[run["id"], variant].items() if i in task_items]
            correct = [bool(pred["gold"][j]) and pred["answer"][j] == pred["gold"][j] for j in idx]
            pooled += correct
            row = new_row(task=task["slug"], source="forced_position", position=variant,
                          model=rows.run_label[run["id"]], run_id=run["id"], rule=run_rule(run, "run"),
                          n_items=len(idx))
            put(row, "accuracy", float(np.mean(correct)) if idx else None, "no predictions")
            out.append(flag(row, [(len(idx), options.min_items, "items")]))
        if variants:
            # Every (item, forced position) pair counted once: the accuracy over all positions.
            row = new_row(task=task["slug"], source="forced_position", position="all", model=rows.run_label[run["id"]],
                          run_id=run["id"], rule=run_rule(run, "run"), n_items=len(pooled))
            put(row, "accuracy", float(np.mean(pooled)) if pooled else None, "no predictions")
            out.append(flag(row, [(len(pooled), options.min_items, "items")]))
    return out


def compared(res, m):
    """The items of one task result both the people and model row `m` answered (a mask over res["items"])."""
    return res["predicted"][m["run_id"]]


def pooled_gaps(per_label, options: ReportOptions, rows: Rows | None = None):
    """label -> ((gap, low, high), human flags, model flags) over the pooled items that both the people and the
    label's runs answered, for the labels with human answers on every task: paired_bootstrap_gap of each, with one
    set of resamples for the labels compared on the same items (the same seed draws the same indices); with `rows`,
    kept from the computation before when the flags are the same (a changed label that moves no majority)."""
    groups = defaultdict(list)
    for label, per_task in per_label.items():
        if per_task and all(res["human"].size for res, _ in per_task) and any(compared(*p).any() for p in per_task):
            groups[tuple((res["row"]["task"], compared(res, m).tobytes()) for res, m in per_task)].append(label)
    out = {}
    for members in groups.values():
        human = np.concatenate([res["human"][compared(res, m)] for res, m in per_label[members[0]]])
        models = [np.concatenate([res["flags"][m["run_id"]][compared(res, m)] for res, m in per_label[label]])
                  for label in members]
        def gaps_of(human=human, models=models):
            return paired_bootstrap_gaps(human, models, options.n_resamples, options.seed, options.confidence).gaps
        gaps = rows.by_inputs("pooled_gaps", gaps_of, human, models) if rows is not None else gaps_of()
        out.update((label, (gap, human, model)) for label, gap, model in zip(members, gaps, models, strict=True))
    return out


ITEM_LEVEL, WITHIN_TASK = "item-level", "within-task"


def interval_lead(row, per_task, drawn_per_task, options: ReportOptions):
    """Which overall interval leads, and why: the one that matches how the people's items were drawn. Items drawn
    as a sample of each task (a human baseline's `items_per_task`) match the within-task interval, provided every
    task has enough items for a bootstrap inside it (with few, its spread shrinks: by sqrt((n - 1) / n) and by
    the few values a task's mean can take); anything else matches the item-level interval."""
    if row.get("pooled_gap") is None:
        return None, "no overall interval: see the reasons of the gap"
    if row.get("gap_low") is None:
        return ITEM_LEVEL, "the within-task interval is undefined (some task has no item both answered)"
    if not drawn_per_task:
        return ITEM_LEVEL, ("the people's items were not drawn as a sample of each task (they are every item of "
                            "the tasks, or come from campaigns without items_per_task): the item-level interval "
                            "resamples them as one set, as they were drawn")
    small = [res["row"]["task"] for res, m in per_task if m["n_compared"] < options.min_items]
    if small:
        return ITEM_LEVEL, (f"the items were drawn per task, but {len(small)} task(s) have fewer than "
                            f"{options.min_items} items both answered ({', '.join(small)}): inside so few items the "
                            "within-task interval is too narrow, so the wider item-level interval leads")
    return WITHIN_TASK, ("the people's items were drawn as a sample of each task, and the within-task interval "
                         "resamples them inside each task as they were drawn")


def overall_rows(results, labels, keys, options: ReportOptions, drawn_per_task=False, rows: Rows | None = None):
    """Unweighted mean over task results of each model's figures; the gap's interval two ways (within
    tasks, and over the pooled items), the one matching how the items were drawn named as the lead
    (`interval_lead`), and the exact McNemar test on the pooled items. People and each model are compared on
    the items both answered."""
    out = []
    per_label = {label: [(res, m) for res in results for m in res["models"] if m["model"] == label]
                 for label in labels}
    pooled = pooled_gaps(per_label, options, rows)
    for label, per_task in per_label.items():
        rules = sorted({m["rule"] for _, m in per_task})
        row = new_row(model=label, rule=", ".join(rules), n_tasks=len(per_task),
                      tasks=[res["row"]["task"] for res, _ in per_task])
        for key in keys:
            missing = [m["task"] for _, m in per_task if m[key] is None]
            put(row, key, None if missing else mean_or_none([m[key] for _, m in per_task]),
                UNDEFINED_ON_TASKS(key=key, tasks=", ".join(missing)))
        row["n_items"] = sum(len(res["items"]) for res, _ in per_task)
        row["n_compared"] = sum(m["n_compared"] for _, m in per_task)
        row["n_missing"] = sum(m["n_missing"] for _, m in per_task)
        if label in pooled:
            if all(m["run_id"] in res["replicates"] for res, m in per_task):
                low, high = stratified_interval([res["replicates"][m["run_id"]] for res, m in per_task],
                                                options.confidence)
                row.update(gap_low=low, gap_high=high, gap_interval=STRATIFIED)
            else:
                for key in ("gap_low", "gap_high"):
                    put(row, key, None, NO_ITEM_BOTH_ANSWERED(why=row["undefined"]["gap"]))
            (gap, gap_low, gap_high), human, model = pooled[label]
            test = mcnemar_exact(human, model)
            row.update(pooled_human_majority=float(human.mean()), pooled_accuracy=float(model.mean()),
                       pooled_gap=gap, pooled_gap_low=gap_low, pooled_gap_high=gap_high,
                       pooled_gap_interval=f"{PAIRED_GAP} (item-level, pooled over the tasks)",
                       pooled_mcnemar_p=test.pvalue, pooled_human_only=test.human_only,
                       pooled_model_only=test.model_only)
            note(row, "pooled_mcnemar_p", test.note)
            if row["n_missing"]:
                note(row, "pooled_gap", f"on the {row['n_compared']} items both answered; the model has no "
                     f"prediction on {row['n_missing']} of the {row['n_items']} items people answered")
        else:
            reason = ("no human answers on some task" if not all(res["human"].size for res, _ in per_task)
                      else "no item both answered")
            for key in ("gap_low", "gap_high", "pooled_human_majority", "pooled_accuracy", "pooled_gap",
                        "pooled_gap_low", "pooled_gap_high", "pooled_mcnemar_p"):
                put(row, key, None, reason)
        row["interval_lead"], row["interval_lead_why"] = interval_lead(row, per_task, drawn_per_task, options)
        out.append(flag(row, [(row["n_compared"], options.min_items, "items")]))
    return out


def mc_section(rows: Rows, options: ReportOptions):
    tasks = [t for t in rows.data.tasks if rows.kind[t["id"]] == "multiple_choice"]
    if not tasks:
        return None
    # The task's place among the tasks seeds its bootstrap: it is part of what the kept figures are kept under.
    results = [rows.per_task("multiple_choice", task["id"], lambda task=task, n=n: mc_task(rows, task, n, options), n)
               for n, task in enumerate(tasks)]
    labels = list(dict.fromkeys(m["model"] for res in results for m in res["models"]))
    human_keys = ("human_majority", "human_mean_of_raters", "chance")
    overall = new_row(n_tasks=len(results), rule="unweighted mean of the tasks",
                      n_items=sum(r["row"]["n_items"] for r in results))
    for key in human_keys:
        put(overall, key, mean_or_none([r["row"][key] for r in results])
            if all(r["row"][key] is not None for r in results) else None, UNDEFINED_ON_SOME_TASK(key=key))
    flag(overall, [(overall["n_items"], options.min_items, "items")])
    model_keys = ("human_majority", "accuracy", "accuracy_all_items", Rule.ACC, Rule.ACC_NORM, "acc_per_token", "gap",
                  "gap_mean_of_raters")
    overall["models"] = overall_rows(results, labels, model_keys, options, rows.drawn_per_task(), rows)
    model_rules = {label: rule for r in results for label, rule in r["rules"].items()}

    dimensions = []
    for dim in sorted({r["row"]["dimension"] for r in results}):
        members = [r for r in results if r["row"]["dimension"] == dim]
        row = new_row(dimension=dim, n_tasks=len(members), tasks=[r["row"]["task"] for r in members],
                      n_items=sum(r["row"]["n_items"] for r in members),
                      rule="unweighted mean of the dimension's tasks; models on all their items, humans on "
                           "their sample")
        for key in human_keys:
            put(row, key, mean_or_none([r["row"][key] for r in members]), UNDEFINED_ON_EVERY_TASK(key=key))
        # A model's mean over only some of the dimension's tasks is not set beside the people's: left out.
        row["models"] = {}
        for label in labels:
            figures = [m["accuracy_all_items"] for r in members for m in r["models"] if m["model"] == label]
            complete = len(figures) == len(members) and None not in figures
            row["models"][label] = mean_or_none(figures) if complete else None
        # The paired gap on the items humans answered, as the tasks' table gives it; undefined when some
        # task of the dimension has no human answers (a mean over the rest would hide that).
        gaps = {label: [m["gap"] for r in members for m in r["models"] if m["model"] == label] for label in labels}
        row["gaps"] = {label: mean_or_none(g) if g and all(x is not None for x in g) else None
                       for label, g in gaps.items()}
        row["model_rules"] = model_rules
        dimensions.append(flag(row, [(row["n_items"], options.min_items, "items")]))
    overall["mean_of_dimensions"] = dimension_means(results, labels, human_keys)
    positions = [p for r in results for p in r["positions"]]
    return {
        "headline": headline_rows(rows, results, positions),
        "tasks": [r["row"] for r in results],
        "models": [m for r in results for m in r["models"]],
        "overall": overall,
        "by_dimension": dimensions,
        "by_domain": domain_rows(rows, results, labels, model_rules, options),
        "positions": positions,
        "_results": results,
    }


HEADLINE_AS_GIVEN = gettext_noop("the options as the items give them, every gold item the run scored")
HEADLINE_POOLED = gettext_noop("the answer at each position, every (item, position) pooled, as DialogBench's released "
                               "Qwen and Baichuan evaluators score")


def headline_rows(rows: Rows, results, positions):
    """The figure per model and task that the DialogBench table (and the paper beside it) shows, and which one: a
    run on the options as given by its accuracy over every gold item it scored; a run with the gold answer moved to
    each position by its accuracy pooled over every (item, position), as the study's released Qwen and Baichuan
    evaluators report. The mean is the unweighted mean of the tasks the run scored."""
    out = []
    for label in dict.fromkeys(m["model"] for r in results for m in r["models"]):
        per_task = {r["row"]["task"]: m["accuracy_all_items"] for r in results for m in r["models"]
                    if m["model"] == label}
        run_id = next(m["run_id"] for r in results for m in r["models"] if m["model"] == label)
        out.append(headline_row(label, run_id, rows, per_task, HEADLINE_AS_GIVEN))
    for run_id in dict.fromkeys(p["run_id"] for p in positions
                                if p["source"] == "forced_position" and p["position"] == "all"):
        per_task = {p["task"]: p["accuracy"] for p in positions if p["source"] == "forced_position"
                    and p["position"] == "all" and p["run_id"] == run_id}
        out.append(headline_row(rows.run_label[run_id], run_id, rows, per_task, HEADLINE_POOLED))
    return out


def headline_row(label, run_id, rows: Rows, per_task, figure):
    run = rows.runs[run_id]
    row = new_row(model=label, run_id=run_id, name=run["model__name"], mode=run["mode"], rule=run_rule(run, "run"),
                  position_policy=run["position_policy"], figure=figure, preset=(run["settings"] or {}).get("preset"),
                  evaluator=(run["settings"] or {}).get("evaluator"), per_task=per_task)
    put(row, "mean_of_tasks", mean_or_none(list(per_task.values())) if per_task and None not in per_task.values()
        else None, "undefined on some task")
    return row


def dimension_means(results, labels, human_keys):
    """The unweighted mean of the dimensions' means (each dimension the mean of its tasks): KoDialogBench's Table 4
    average when its six tasks are the dimensions and its 14 test sets the tasks, beside the mean of the tasks."""
    dimension_of = {r["row"]["task"]: r["row"]["dimension"] for r in results}
    if len(set(dimension_of.values())) < 2:
        return None

    def mean_of_means(value_of):
        values = {task: value_of(task) for task in dimension_of}
        if any(v is None for v in values.values()):
            return None
        return set_and_task_averages(values, dimension_of)["mean_of_task_means"]

    by_task = {r["row"]["task"]: r for r in results}
    out = new_row(n_dimensions=len(set(dimension_of.values())),
                  rule="unweighted mean of the dimensions, each the unweighted mean of its tasks; models on all "
                       "their items, humans on their sample")
    for key in human_keys:
        put(out, key, mean_of_means(lambda task, key=key: by_task[task]["row"][key]),
            UNDEFINED_ON_SOME_TASK(key=key))
    accuracy = {(task, m["model"]): m["accuracy_all_items"] for r in results for task in [r["row"]["task"]]
                for m in r["models"]}
    out["models"] = {label: mean_of_means(lambda task, label=label: accuracy.get((task, label))) for label in labels}
    return out


def domain_rows(rows, results, labels, model_rules, options):
    """Accuracy per item domain, pooled over the items of every task."""
    pooled = defaultdict(lambda: {"human": [], "raters": defaultdict(lambda: [0, 0]), "models": defaultdict(list)})
    for res in results:
        domains = np.array([rows.domain.get(i) or "" for i in res["items"]], dtype=object)
        gold = np.array(res["gold"], dtype=object)
        raters = {r: np.array(column, dtype=object) for r, column in res["columns"].items()}
        given = {r: np.array([a is not None for a in column]) for r, column in raters.items()}
        for domain in set(domains):
            mask = domains == domain
            d = pooled[domain]
            d["human"] += res["human"][mask].tolist() if res["human"].size else []
            for rater, column in raters.items():
                d["raters"][rater][0] += int(np.sum((column[mask] == gold[mask]) & given[rater][mask]))
                d["raters"][rater][1] += int(np.sum(given[rater][mask]))
            for run in res["runs"]:
                answered = mask & res["predicted"][run["id"]]
                d["models"][rows.run_label[run["id"]]] += res["flags"][run["id"]][answered].tolist()
    out = []
    for domain in sorted(pooled):
        d = pooled[domain]
        row = new_row(domain=domain, n_items=max([len(d["human"])] + [len(v) for v in d["models"].values()]),
                      rule="pooled over the domain's items of every task")
        put(row, "human_majority", float(np.mean(d["human"])) if d["human"] else None, "no human answers")
        put(row, "human_mean_of_raters", mean_or_none([c / n for c, n in d["raters"].values() if n]),
            "no human answers")
        row["models"] = {label: float(np.mean(d["models"][label])) if d["models"].get(label) else None
                         for label in labels}
        row["model_rules"] = model_rules
        out.append(flag(row, [(row["n_items"], options.min_items, "items")]))
    return out


def item_lists(rows: Rows, mc, limit):
    """Items the human majority gets right and every model misses, and the reverse (a model without a prediction
    on an item misses nothing there)."""
    lists = {"humans_right_models_wrong": [], "models_right_humans_wrong": []}
    if mc is None:
        return {**lists, "counts": {k: 0 for k in lists}, "limit": limit}
    for res in mc["_results"]:
        if not res["human"].size or not res["runs"]:
            continue
        stacked = np.stack([res["flags"][r["id"]] for r in res["runs"]], axis=1)
        every_model_answered = np.stack([res["predicted"][r["id"]] for r in res["runs"]], axis=1).all(axis=1)
        for key, mask in (("humans_right_models_wrong", res["human"] & ~stacked.any(axis=1) & every_model_answered),
                          ("models_right_humans_wrong", ~res["human"] & stacked.all(axis=1))):
            for n in np.flatnonzero(mask):
                item = res["items"][n]
                lists[key].append({
                    "task": res["row"]["task"], "item_id": item, "external_id": rows.external_id[item],
                    "gold": res["gold"][n], "human_answers": dict(Counter(map(str, rows.human.get(item, {}).values()))),
                    "model_answers": {rows.run_label[r["id"]]: res["answers"][r["id"]][n] for r in res["runs"]}})
    return {"counts": {k: len(v) for k, v in lists.items()}, "limit": limit, **{k: v[:limit] for k, v in lists.items()}}
