"""The report's tables as plain structures (title, header, rows of cells) that HTML and LaTeX
both typeset. A cell is text, or a number with the reason it is missing."""
from dataclasses import dataclass, field, replace

from django.utils.translation import gettext, gettext_noop, pgettext

from studies.dialogbench import recipe as dialogbench
from studies.vocabulary import Rule

from ..texts import shown

# DialogBench's own task abbreviations, in the paper's column order.
DIALOGBENCH = dialogbench.ABBREVIATIONS
DIQAD_COLUMNS = [("Acc", "gold_accuracy"), ("UAR", "gold_uar"), ("Kappa", "gold_kappa"), ("Spearman", "gold_spearman"),
                 ("Pearson", "gold_pearson"), ("P", "gold_precision"), ("R", "gold_recall"), ("F1", "gold_f1")]
# Table 4 (cross-domain): the figures of each domain.
DIQAD_DOMAIN_COLUMNS = [("Acc", "accuracy"), ("UAR", "uar"), ("Spearman", "spearman"), ("Pearson", "pearson"),
                        ("F1", "f1")]


@dataclass
class Cell:
    value: object
    reason: str | None = None
    style: str = "number"  # number (3 decimals), percent (x100, 2 decimals), p (p-value), int, text
    flag: str | None = None  # "small sample: ..." when the figure rests on too few items or raters
    note: str | None = None  # what a defined figure cannot say by itself (reports.figures.note)

    def text(self):
        v = self.value
        if v is None:
            return "--"
        if self.style == "text" or isinstance(v, str):
            return str(v)
        if self.style == "int" or isinstance(v, bool):
            return str(int(v))
        if self.style == "percent":
            return f"{100 * v:.2f}"
        if self.style == "decimal":
            return f"{v:.2f}"
        if self.style == "p":
            return f"{v:.2g}" if v < 0.001 else f"{v:.3f}"
        return f"{v:.3f}"


@dataclass
class Table:
    key: str
    title: str
    header: list
    rows: list = field(default_factory=list)
    note: str = ""
    narrow: bool = False  # typeset with less space between columns (a wide table meant for a page)

    def note_marks(self):
        """{note: its mark} for the notes of the table's cells, lettered a, b, ... in order of appearance."""
        notes = dict.fromkeys(c.note for row in self.rows for c in row if c.note)
        return {text: chr(ord("a") + n) for n, text in enumerate(notes)}


def figure_cell(value, reason, style="number", flag=None):
    """A figure that may be missing: the reason is kept only where it is (a present figure is not marked)."""
    return Cell(value, reason if value is None else None, style, flag)


def cell(row, key, style="number", flag_key="small_sample"):
    """A figure of a row; a figure of a small-sample row carries the row's flag (`flag_key`: the row's flag for
    this figure), and its note."""
    value = row.get(key)
    small = row.get(flag_key) if value is not None else None
    return Cell(value, (row.get("undefined") or {}).get(key), style, small,
                (row.get("notes") or {}).get(key) if value is not None else None)


# The utterance-length table's columns: each figure of each unit.
LENGTH_COLUMNS = {
    "words_mean": gettext_noop("words, mean"), "words_std": gettext_noop("words, sd"),
    "words_median": gettext_noop("words, median"), "words_min": gettext_noop("words, min"),
    "words_max": gettext_noop("words, max"), "chars_mean": gettext_noop("characters, mean"),
    "chars_std": gettext_noop("characters, sd"), "chars_median": gettext_noop("characters, median"),
    "chars_min": gettext_noop("characters, min"), "chars_max": gettext_noop("characters, max"),
    "tokens_mean": gettext_noop("tokens, mean"), "tokens_std": gettext_noop("tokens, sd"),
    "tokens_median": gettext_noop("tokens, median"), "tokens_min": gettext_noop("tokens, min"),
    "tokens_max": gettext_noop("tokens, max")}


def with_rule(model, rule):
    """A model's name with the rule its figures use, e.g. "llama [acc]"."""
    return f"{model} [{rule}]" if rule else str(model)


def gap_rule_text(report):
    rule = report["options"].get("rule", "run")
    return gettext("each run's own rule (named per model)") if rule == "run" else rule


def campaign_names(report):
    """campaign id -> its name, for the tables people read (the ids stay in JSON and CSV)."""
    return {c["campaign_id"]: c["name"] for c in report.get("campaigns", [])}


def in_language(table):
    """`table` with its title, header, note and the reasons and flags of its cells in the reader's language (a row
    label or a composed note is put in it where the table is built)."""
    rows = [[replace(c, reason=shown(c.reason), flag=shown(c.flag), note=shown(c.note)) for c in row]
            for row in table.rows]
    return replace(table, title=shown(table.title), header=[shown(h) for h in table.header], note=shown(table.note),
                   rows=rows)


def order_tasks(slugs):
    known = list(DIALOGBENCH)
    return sorted(slugs, key=lambda s: (known.index(s) if s in known else len(known), s))


def dialogbench_table(report):
    """Tasks as columns, humans and models as rows (accuracy x 100), the mean of tasks last."""
    mc = report.get("multiple_choice")
    if not mc:
        return None
    tasks = {t["task"]: t for t in mc["tasks"]}
    slugs = order_tasks(tasks)
    header = ["", *[DIALOGBENCH.get(s, s) for s in slugs], "Avg"]
    rules = {(t["m"], t["k"]) for t in mc["tasks"] if t["k"]}
    majority = (gettext("Human (%(m)s of %(k)s)") % dict(zip("mk", rules.pop(), strict=True)) if len(rules) == 1
                else gettext("Human (majority)"))
    overall = mc["overall"]
    rows = [[Cell(majority, style="text"), *[cell(tasks[s], "human_majority", "percent") for s in slugs],
             cell(overall, "human_majority", "percent")],
            [Cell(gettext("Human (mean of raters)"), style="text"),
             *[cell(tasks[s], "human_mean_of_raters", "percent") for s in slugs],
             cell(overall, "human_mean_of_raters", "percent")],
            [Cell(gettext("Chance"), style="text"), *[cell(tasks[s], "chance", "percent") for s in slugs],
             cell(overall, "chance", "percent")]]
    for m in overall["models"]:
        per_task = {r["task"]: r for r in mc["models"] if r["model"] == m["model"]}
        rows.append([Cell(with_rule(m["model"], m.get("rule")), style="text"),
                     *[cell(per_task[s], "accuracy_all_items", "percent") if s in per_task
                       else Cell(None, gettext("not run on this task")) for s in slugs],
                     average_of_tasks(m, m["n_tasks"], overall["n_tasks"], "accuracy_all_items")])
    for m in mc.get("headline", []):
        if m["position_policy"] != "as_is":
            ran = sum(m["per_task"].get(s) is not None for s in slugs)
            rule = gettext("%(rule)s, pooled over positions") % {"rule": m["rule"]}
            rows.append([Cell(with_rule(m["model"], rule), style="text"),
                         *[figure_cell(m["per_task"].get(s), gettext("not run on this task"), "percent")
                           for s in slugs],
                         average_of_tasks(m, ran, overall["n_tasks"], "mean_of_tasks")])
    partial = any(m["n_tasks"] != overall["n_tasks"] for m in overall["models"])
    return Table("dialogbench", gettext("Accuracy per task (%%); models scored by %(rule)s") % {
        "rule": gap_rule_text(report)}, header, rows,
                 " ".join((
                     gettext("Each model's rule in brackets (acc, acc_norm, per_token, generation with extraction); "
                             "Avg is the unweighted mean of the tasks (left out, --, for a model not run on every "
                             "task).") if partial else
                     gettext("Each model's rule in brackets (acc, acc_norm, per_token, generation with extraction); "
                             "Avg is the unweighted mean of the tasks."),
                     gettext("Models on every item of the task they scored (the study's figure), humans on the items "
                             "they answered; the paired gap on the items both answered is in the next table.")
                     if has_gaps(mc) else
                     gettext("Models on every item of the task they scored (the study's figure), humans on the items "
                             "they answered."),
                     gettext("A run with the answer at each position (DialogBench's released Qwen and Baichuan "
                             "evaluators) shows its accuracy pooled over every (item, position), marked so; the others "
                             "are scored on the options as the items give them."))))


def average_of_tasks(m, ran, of, key):
    """A model's Avg cell: an average over fewer tasks than the people's is not shown beside theirs."""
    if ran == of:
        return cell(m, key, "percent")
    return Cell(None, gettext("run on %(ran)s of the %(of)s tasks: its mean is not comparable with the Avg of the "
                              "people") % {"ran": ran, "of": of})


def has_gaps(mc):
    """Whether there is a human-model gap to show: models, and people's answers on some task."""
    return bool(mc and mc["models"] and any(t["human_majority"] is not None for t in mc["tasks"]))


# The overall gap two ways: what is averaged, and the prefix of its keys in an overall model row.
INTERVALS = {"within-task": (gettext_noop("mean of tasks"), ""),
             "item-level": (gettext_noop("pooled items"), "pooled_")}


def interval_kind(kind, lead):
    """An overall interval's kind as a table shows it, "; leads" where it is the one matching how items were drawn."""
    return (gettext("%(kind)s; leads") if kind == lead else "%(kind)s") % {"kind": gettext(kind)}


def overall_gap_kinds(m):
    """The overall gap's two readings of a model row, the one matching how the items were drawn first:
    [(kind, label, key prefix)]."""
    lead = m.get("interval_lead")
    kinds = ["item-level", "within-task"] if lead == "item-level" else ["within-task", "item-level"]
    return [(kind, gettext("all tasks, %(what)s (%(kind)s)") % {"what": gettext(INTERVALS[kind][0]),
                                                                  "kind": interval_kind(kind, lead)},
             INTERVALS[kind][1]) for kind in kinds]


def mc_detail_table(report):
    mc = report.get("multiple_choice")
    if not mc or not mc["models"]:
        return None
    header = ["Task", "Model", "Rule", "Items", "Accuracy", "All items", "Accuracy on all", Rule.ACC, Rule.ACC_NORM,
              "Gap", "Low", "High", "McNemar p", "Parse failures", "Missing"]
    rows = [[Cell(m["task"], style="text"), Cell(m["model"], style="text"), Cell(m["rule"], style="text"),
             Cell(m["n_items"], style="int"), cell(m, "accuracy", "percent"), cell(m, "n_items_all", "int"),
             cell(m, "accuracy_all_items", "percent"), cell(m, Rule.ACC, "percent"),
             cell(m, Rule.ACC_NORM, "percent"),
             cell(m, "gap", "percent"), cell(m, "gap_low", "percent"), cell(m, "gap_high", "percent"),
             cell(m, "mcnemar_p", "p"), cell(m, "parse_failures", "int"), cell(m, "n_missing", "int")]
            for m in mc["models"]]
    for m in mc["overall"]["models"]:
        for _, label, pooled in overall_gap_kinds(m):
            per_task = Cell(None, gettext("per task")) if pooled else None
            rows.append([Cell(label, style="text"), Cell(m["model"], style="text"), Cell(m["rule"], style="text"),
                         Cell(m["n_items"], style="int"), per_task or cell(m, "accuracy", "percent"),
                         Cell(None, gettext("per task")), per_task or cell(m, "accuracy_all_items", "percent"),
                         per_task or cell(m, Rule.ACC, "percent"), per_task or cell(m, Rule.ACC_NORM, "percent"),
                         cell(m, f"{pooled}gap", "percent"), cell(m, f"{pooled}gap_low", "percent"),
                         cell(m, f"{pooled}gap_high", "percent"),
                         cell(m, "pooled_mcnemar_p", "p") if pooled else Cell(None, gettext("see the pooled row")),
                         Cell(None, gettext("per task")), cell(m, "n_missing", "int")])
    return Table("mc_models", gettext("Models against the human majority (%%); gap scored by %(rule)s") % {
        "rule": gap_rule_text(report)},
                 header, rows,
                 gettext("Accuracy and gap on the items both the people and the model answered (paired; Missing: "
                         "items people answered that the model has no prediction for, left out of both sides); All "
                         "items and Accuracy on all: every item of the task the model scored, the study's own figure. "
                         "Gap = human (majority) minus model accuracy on the same items. Per task: paired percentile "
                         "bootstrap over the task's items, exact McNemar.") + " " + overall_gap_note(mc, row=True))


def overall_gap_note(mc, row):
    """What the two overall intervals are, which one leads (`row`: the table marks the row that leads, else its
    Interval column says so) and why."""
    whys = list(dict.fromkeys(gettext("%(kind)s for %(model)s: %(why)s") % {
        "kind": gettext(m["interval_lead"]), "model": m["model"], "why": shown(m["interval_lead_why"])}
                              for m in mc["overall"]["models"] if m.get("interval_lead")))
    if row:
        note = gettext("All tasks: the mean of the tasks with the within-task interval (items resampled inside each "
                       "task, tasks averaged), and the pooled items with the item-level interval (items resampled "
                       "across the tasks) and the pooled exact McNemar; the row marked leads has the interval that "
                       "matches how the items were drawn.")
    else:
        note = gettext("All tasks: the mean of the tasks with the within-task interval (items resampled inside each "
                       "task, tasks averaged), and the pooled items with the item-level interval (items resampled "
                       "across the tasks) and the pooled exact McNemar; the row whose Interval says leads has the "
                       "interval that matches how the items were drawn.")
    return " ".join([note, *([gettext("Which leads, and why: %(whys)s.") % {"whys": "; ".join(whys)}]
                                   if whys else [])])


def gap_table(report):
    """The paired human-model gap per task and over all tasks, on the items both answered: the table the
    accuracy-per-task table's note points to, compact enough for a paper."""
    mc = report.get("multiple_choice")
    if not has_gaps(mc):
        return None
    level = f"{report['options']['confidence']:.0%}"
    header = ["Task", "Model", "Items", "Missing", "Human", "Model", "Gap", "Interval",
              gettext("%(level)s low") % {"level": level}, gettext("%(level)s high") % {"level": level}, "McNemar p"]
    order = order_tasks([t["task"] for t in mc["tasks"]])
    rows = [[Cell(DIALOGBENCH.get(m["task"], m["task"]), style="text"),
             Cell(with_rule(m["model"], m["rule"]), style="text"), Cell(m["n_compared"], style="int"),
             Cell(m["n_missing"], style="int"), cell(m, "human_majority", "percent"), cell(m, "accuracy", "percent"),
             cell(m, "gap", "percent"), Cell(gettext("paired"), style="text"), cell(m, "gap_low", "percent"),
             cell(m, "gap_high", "percent"), cell(m, "mcnemar_p", "p")]
            for m in sorted(mc["models"], key=lambda m: order.index(m["task"]))]
    for m in mc["overall"]["models"]:
        for kind, _, pooled in overall_gap_kinds(m):
            rows.append([Cell(gettext("all, %(what)s") % {"what": gettext(INTERVALS[kind][0])}, style="text"),
                         Cell(with_rule(m["model"], m["rule"]), style="text"),
                         Cell(m["n_compared"], style="int"), Cell(m["n_missing"], style="int"),
                         cell(m, f"{pooled}human_majority", "percent"), cell(m, f"{pooled}accuracy", "percent"),
                         cell(m, f"{pooled}gap", "percent"),
                         Cell(interval_kind(kind, m.get("interval_lead")), style="text"),
                         cell(m, f"{pooled}gap_low", "percent"), cell(m, f"{pooled}gap_high", "percent"),
                         cell(m, "pooled_mcnemar_p", "p") if pooled else Cell(None, gettext("see the pooled row"))])
    return Table("gap", gettext("Human majority minus model on the items both answered (%%); models scored by "
                                "%(rule)s") % {"rule": gap_rule_text(report)}, header, rows, narrow=True,
                 note=gettext("Items: items both the people and the model answered; Missing: items people answered "
                              "that the model has no prediction for, left out of both sides. Human: the majority of "
                              "the raters right (m of k). Per task: paired %(level)s percentile bootstrap over the "
                              "task's items (human and model answers kept together) and exact two-sided McNemar.")
                 % {"level": level} + " " + overall_gap_note(mc, row=False))


def model_figure(row, value, reason):
    """A model's figure in a {model: figure} row: the reason only when it is missing, the row's flag only when not."""
    return Cell(value, reason if value is None else None, "percent",
                row.get("small_sample") if value is not None else None)


def group_table(report, key, label):
    mc = report.get("multiple_choice")
    if not mc or not mc[key]:
        return None
    models = list(dict.fromkeys(m for r in mc[key] for m in r["models"]))
    rules = mc[key][0].get("model_rules", {})
    header = [label, "Items", "Human (majority)", "Human (mean of raters)",
              *[with_rule(m, rules.get(m)) for m in models]]
    with_gaps = all("gaps" in r for r in mc[key])
    if with_gaps:
        header += [gettext("Gap, %(model)s") % {"model": m} for m in models]

    def gap_cells(r):
        return [model_figure(r, r["gaps"].get(m), "no human answers, or no item both answered, on some task")
                for m in models] if with_gaps else []

    missing = ("not run, or no prediction, on every task of the dimension" if key == "by_dimension"
               else "no prediction on these items")
    rows = [[Cell(r[label.lower()], style="text"), Cell(r.get("n_items", r.get("n_tasks")), style="int"),
             cell(r, "human_majority", "percent"), cell(r, "human_mean_of_raters", "percent"),
             *[model_figure(r, r["models"].get(m), missing) for m in models],
             *gap_cells(r)] for r in mc[key]]
    means = mc["overall"].get("mean_of_dimensions") if key == "by_dimension" else None
    notes = [gettext("%(rule)s.") % {"rule": shown(mc[key][0]["rule"])}]
    if means:
        rows.append([Cell(gettext("mean of the dimensions"), style="text"), Cell(means["n_dimensions"], style="int"),
                     cell(means, "human_majority", "percent"), cell(means, "human_mean_of_raters", "percent"),
                     *[Cell(means["models"].get(m), gettext("not run on some task"), "percent") for m in models],
                     *([Cell(None, gettext("per dimension"))] * len(models) if with_gaps else [])])
        notes.append(gettext("The last row is the unweighted mean of the dimensions (KoDialogBench's Table 4 average "
                             "when the dimensions are its tasks); the tasks' own mean is the Avg of the "
                             "accuracy-per-task table."))
    if with_gaps:
        notes.append(gettext("Gap: the mean of the tasks' paired human-model gaps on the items humans answered."))
    return Table(key, gettext("Accuracy by %(subset)s (%%)") % {"subset": gettext(label).lower()}, header, rows,
                 " ".join(notes))


def position_table(report):
    mc = report.get("multiple_choice")
    rows_in = [p for p in (mc or {}).get("positions", []) if p["source"] == "gold_position"]
    if not rows_in:
        return None
    models = list(dict.fromkeys(m for r in rows_in for m in r["models"]))
    rules = {m: rule for r in rows_in for m, rule in r.get("model_rules", {}).items()}
    header = ["Task", "Position", "Items", "Human (majority)", *[with_rule(m, rules.get(m)) for m in models]]
    rows = [[Cell(r["task"], style="text"), Cell(r["position"], style="text"), Cell(r["n_items"], style="int"),
             cell(r, "human_majority", "percent"),
             *[model_figure(r, r["models"].get(m), "not run, or no prediction, on these items") for m in models]]
            for r in rows_in]
    forced = [p for p in mc["positions"] if p["source"] == "forced_position"]
    for r in forced:
        where = gettext("every position, pooled") if r["position"] == "all" else r["position"]
        rows.append([Cell(r["task"], style="text"),
                     Cell(gettext("%(where)s (forced, %(model)s)") % {"where": where, "model": r["model"]},
                          style="text"),
                     Cell(r["n_items"], style="int"), Cell(None, "models only"),
                     *[cell(r, "accuracy", "percent") if m == r["model"] else Cell(None, "") for m in models]])
    return Table("positions", "Accuracy by position of the correct answer (%)", header, rows)


def agreement_table(report, section="campaigns"):
    rows_in = report["agreement"][section]
    if not rows_in:
        return None
    batch = section == "batches"
    header = ["Group", "Campaign", *(["Batch", "Round"] if batch else []), "Task", "Question", "Items", "Raters",
              "Fleiss' kappa", *([] if batch else ["Low", "High", "Jackknife low", "Jackknife high"]), "Band",
              *([] if batch else ["Krippendorff's alpha", "Low", "High", "Jackknife low", "Jackknife high", "Level",
                                  "Agreement"])]

    def ends(r, key):
        return [cell(r, f"{key}_{end}") for end in ("low", "high", "jackknife_low", "jackknife_high")]

    rows = [[Cell(shown(r["rater_group"]), style="text"), Cell(r["campaign"], style="text"),
             *([Cell(r["batch"], style="int"), Cell(r["round"], style="int")] if batch else []),
             Cell(r["task"], style="text"), Cell(r["question"], style="text"), Cell(r["n_items"], style="int"),
             Cell(r["n_raters"], "no item has 2 ratings", "int"), cell(r, "fleiss_kappa"),
             *([] if batch else ends(r, "fleiss_kappa")), replace(cell(r, "band", "text"), value=shown(r.get("band"))),
             *([] if batch else [cell(r, "krippendorff_alpha"), *ends(r, "krippendorff_alpha"),
                                 Cell(shown(r["krippendorff_level"]), style="text"), cell(r, "percent_agreement")])]
            for r in rows_in]
    return Table(f"agreement_{section}", gettext("Agreement per batch") if batch
                 else gettext("Agreement per campaign, task and question"),
                 header, rows,
                 gettext("Fleiss' kappa uses the items with the modal number of ratings; alpha accepts missing ones. A "
                         "small-sample row has no Landis-Koch band.")
                 + ("" if batch else " " + gettext("Intervals at %(level)s: %(method)s.") % {
                     "level": f"{report['options']['confidence']:.0%}",
                     "method": shown(rows_in[0].get("interval_method", ""))}))


def annotator_table(report):
    rows_in = report["annotators"]
    if not rows_in:
        return None
    header = ["Campaign", "Annotator", "Labels", "Acc. vs gold", "Acc. vs QC", "Peer agreement", "Peer kappa",
              "Median reading (s)", "Rounds caused", "Rejected rounds"]
    names = campaign_names(report)
    rows = [[Cell(names.get(r["campaign_id"], r["campaign_id"]), style="text"), Cell(r["annotator"], style="text"),
             Cell(r["n_annotations"], style="int"), cell(r, "accuracy_vs_gold", "percent"),
             cell(r, "accuracy_vs_qc", "percent"), cell(r, "peer_agreement", "percent"),
             cell(r, "peer_kappa"), cell(r, "median_reading_seconds"), cell(r, "rounds_caused", "int"),
             cell(r, "rejected_rounds", "int")] for r in rows_in]
    return Table("annotators", "Annotators", header, rows,
                 "Rounds caused: rejected QC rounds in which the QC corrected at least one of their labels. "
                 "People only: raters that are positions in an imported file are left out.")


def correlation_table(report):
    """Qualities as rows; Spearman (p) of each model against the mean human rating; the human ceiling."""
    ratings = report.get("ratings")
    if not ratings:
        return None
    models = list(dict.fromkeys(m["model"] for m in ratings["models"]))
    by = {(m["task"], m["quality"], m["model"]): m for m in ratings["models"]}
    seeded = {m["model"] for m in ratings["models"] if m.get("seeds")}
    header = ["Task", "Quality", "Items", *[gettext("%(model)s rho") % {"model": m} for m in models],
              *[gettext("%(model)s rho sd") % {"model": m} for m in models if m in seeded],
              *[gettext("%(model)s p") % {"model": m} for m in models], "Human ceiling", "Raters"]
    rows = []
    for q in ratings["qualities"]:
        found = [by.get((q["task"], q["quality"], m)) for m in models]
        rows.append([Cell(q["task"], style="text"), Cell(q["label"], style="text"), Cell(q["n_rated"], style="int"),
                     *[cell(f, "spearman") if f else Cell(None, "not run") for f in found],
                     *[cell(f, "spearman_std") if f else Cell(None, "not run")
                       for m, f in zip(models, found, strict=True) if m in seeded],
                     *[cell(f, "spearman_p", "p") if f else Cell(None, "not run") for f in found],
                     cell(q, "human_ceiling_spearman"),
                     Cell(gettext("%(n)s positions") % {"n": q["n_rating_positions"]} if q.get("n_rating_positions")
                          else q.get("n_raters"), style="text")])
    note = shown(q["ceiling_rule"]) + (gettext("; a run repeated over few-shot seeds shows the mean rho over its seeds "
                                               "and their standard deviation (sd, ddof 1)") if seeded else "")
    return Table("correlations", "Spearman against the mean human rating", header, rows, note)


def diqad_tables(report):
    """DiQAD's columns for each quality that has gold: Acc, UAR, Kappa, Spearman, Pearson, P, R, F1 (x100)."""
    ratings = report.get("ratings")
    if not ratings:
        return []
    tables = []
    for q in ratings["qualities"]:
        models = [m for m in ratings["models"]
                  if m["task"] == q["task"] and m["quality"] == q["quality"] and m["n_gold"]]
        if not models:
            continue
        # Every figure here is against gold, on the items with gold the model scored (a trained classifier's test
        # split): they are what the small-sample flag counts.
        rows = [[Cell(m["model"], style="text"),
                 *[cell(m, key, "percent", flag_key="gold_small_sample") for _, key in DIQAD_COLUMNS],
                 Cell(m["n_gold"], style="int")] for m in models]
        tables.append(Table(f"diqad_{q['task']}_{q['quality']}", gettext("%(task)s / %(quality)s against gold (x100)")
                            % {"task": q["task"], "quality": q["label"]},
                            ["Model", *[name for name, _ in DIQAD_COLUMNS], "Items"], rows,
                            gettext("Spearman and Pearson: %(of)s; Items: the items with gold the model scored, every "
                                    "figure's sample; %(note)s") % {"of": shown(models[0]["gold_correlation_of"]),
                                                                    "note": shown(ratings["note"])}))
        tables.append(cross_domain_table(q, models))
    return tables


def cross_domain_table(q, models):
    """DiQAD's Table 4: per domain, each model's figures on that domain's gold items, and under them each
    classifier trained without that domain ("w/o"); said to be absent where no item carries a domain."""
    key = f"diqad_{q['task']}_{q['quality']}_domains"
    title = gettext("%(task)s / %(quality)s: cross-domain (x100)") % {"task": q["task"], "quality": q["label"]}
    header = ["Domain", "Model", *[name for name, _ in DIQAD_DOMAIN_COLUMNS], "Items"]
    by = {(m["model"], d["domain"]): d for m in models for d in m.get("gold_by_domain", [])}
    domains = sorted({domain for _, domain in by} - {""})
    if not domains:
        return Table(key, title, header, [], "DiQAD's Table 4 compares domains: none of these items carries one "
                                             "(meta.domain), so it cannot be produced")
    rows = []
    for domain in domains:
        listed = [(m["model"], m) for m in models if not m.get("holdout_domain")]
        listed += [(gettext("w/o %(domain)s: %(model)s") % {"domain": domain, "model": m["model"]}, m)
                  for m in models if m.get("holdout_domain") == domain]
        rows += [[Cell(domain, style="text"), Cell(label, style="text"),
                  *[cell(by[m["model"], domain], name, "percent") for _, name in DIQAD_DOMAIN_COLUMNS],
                  Cell(by[m["model"], domain]["n"], style="int")]
                 for label, m in listed if (m["model"], domain) in by]
    return Table(key, title, header, rows, "each model's figures on the gold items of one domain; a classifier "
                                           "trained without the domain (holdout_domain) is its \"w/o\" row, as "
                                           "DiQAD's Table 4 sets ERNIE trained without a domain under ERNIE")


def judge_name(judge):
    """Who judged a pairwise task's matches: the people, or a judge run by its name."""
    return gettext("humans") if judge == "humans" else judge


def pairwise_tables(report):
    pairwise = report.get("pairwise")
    if not pairwise:
        return []
    tables = []
    for task in pairwise["tasks"]:
        rows = []
        for judge, entry in task["judges"].items():
            bt = {i["model"]: i for i in entry["bradley_terry"]["intervals"]}
            elo_ratings = (entry.get("elo") or {}).get("ratings") or {}
            shuffled = entry.get("elo_over_orders") or {}
            for system in sorted(set(bt) | set(elo_ratings), key=str):
                fit = bt.get(system, {})
                small = entry.get("small_sample")
                rows.append([Cell(judge_name(judge), style="text"), Cell(system, style="text"),
                             Cell(elo_ratings.get(system), "no matches", flag=small),
                             Cell((shuffled.get("mean") or {}).get(system), "no matches", flag=small),
                             Cell((shuffled.get("std") or {}).get(system), "no matches", flag=small),
                             Cell(fit.get("score"), entry["bradley_terry"]["undefined_reason"], flag=small),
                             Cell(fit.get("low"), "no interval", flag=small),
                             Cell(fit.get("high"), "no interval", flag=small),
                             cell(entry, "agreement_with_humans", "percent"), cell(entry, "kappa_with_humans")])
        orders = next((e["elo_over_orders"]["n_orders"] for e in task["judges"].values() if e.get("elo_over_orders")),
                      None)
        header = ["Judge", "System", "Elo", gettext("Elo, mean of %(n)s orders") % {"n": orders} if orders
                  else gettext("Elo, mean of shuffled orders"), "sd", "Bradley-Terry", "Low", "High",
                  "Equal to humans (%)", "Kappa"]
        note = gettext("Elo: start 1000, scale 400, K 32, matches applied in the order of the items' ids; beside it "
                       "the mean and sd over seeded shuffles of the matches; Bradley-Terry does not depend on the "
                       "order.") + " " + gettext("Matches: %(matches)s") % {"matches": "; ".join(
                           f"{judge_name(judge)}: {shown(entry['matches_from'])}"
                           for judge, entry in task["judges"].items() if entry.get("matches_from"))}
        tables.append(Table(f"pairwise_{task['task']}", gettext("Pairwise: %(task)s") % {"task": task["task"]}, header,
                            rows, note))
        botchat = task.get("botchat") or {}
        if botchat:
            rows = [[Cell(judge, style="text"), Cell(r["model"], style="text"), Cell(r["n"], style="int"),
                     *[Cell(r[key], style="int") for key in ("win", "both", "neither", "lose", "unknown", "n_read")],
                     *[figure_cell(r[key], "no answer read", "percent", table.get("small_sample"))
                       for key in ("win_rate", "tie_rate", "lose_rate", "win_tie_rate", "not_bad_rate")],
                     Cell(r["score"], flag=table.get("small_sample"))]
                    for judge, table in botchat.items() for r in table["systems"]]
            decided = ", ".join(f"{judge}: {table.get('n_decided_by_loop', 0)}" for judge, table in botchat.items())
            tables.append(Table(
                f"botchat_{task['task']}",
                gettext("BotChat arena: %(task)s (each order of showing a result)") % {"task": task["task"]},
                ["Judge", "System", "Comparisons", "Win", "Both", "Neither", "Lose", "Unread", "Read", "Win (%)",
                 "Tie (%)", "Lose (%)", "Win+Tie (%)", "NotBad (%)", "Score"], rows,
                gettext("as open-compass/BotChat analyze.py: per comparison the system shown first wins when only the "
                        "other conversation is judged AI-involved; Both = neither judged AI (a good tie), Neither = "
                        "both judged AI (a bad tie); NotBad = Win + Both; Score = (3 Win + Both - Neither - 3 Lose) / "
                        "comparisons, in [-3, 3]; unread answers stay in the denominator of Win, Tie, Lose, NotBad "
                        "and Score, as analyze.py's table keeps them, and are left out of Win+Tie's (over the read "
                        "answers), as its calc_win_rate counts; pairs the loop detector decided count in both orders, "
                        "the looping dialogue losing and both looping a Neither (comparisons decided so: "
                        "%(decided)s)") % {"decided": decided}))
            rows = [[Cell(judge, style="text"), Cell(r["model"], style="text"), Cell(r["opponent"], style="text"),
                     *[Cell(r[key], style="int") for key in ("n", "unknown", "n_read", "win", "tie", "lose")],
                     *[figure_cell(r[key], "no answer read", "percent", table.get("small_sample"))
                       for key in ("win_rate", "tie_rate", "win_tie_rate")],
                     figure_cell(r.get("win_tie_rate_study_walk"), "no order of showing the system won once",
                                 "percent", table.get("small_sample"))]
                    for judge, table in botchat.items() for r in table.get("versus", [])]
            tables.append(Table(
                f"botchat_versus_{task['task']}", gettext("BotChat one against one: %(task)s") % {"task": task["task"]},
                ["Judge", "System", "Against", "Comparisons", "Unread", "Read", "Win", "Tie", "Lose", "Win (%)",
                 "Tie (%)", "Win+Tie (%)", "Win+Tie, study's walk (%)"], rows,
                "as analyze.py calc_win_rate (the paper's Table 2 reads the Win+Tie against GPT-4 or the real "
                "dialogue): both orders of showing pooled, over the read answers only; the study's walk adds up "
                "only the orders of showing in which the system shown first won at least once, as calc_win_rate's "
                "loop over its win counter does"))
        if task.get("judge_agreement"):
            rows = [[Cell(a["judge_a"], style="text"), Cell(a["judge_b"], style="text"),
                     Cell(a["n_compared"], style="int"), cell(a, "agreement", "percent"), cell(a, "kappa")]
                    for a in task["judge_agreement"]]
            tables.append(Table(f"judge_agreement_{task['task']}",
                                gettext("Judge against judge: %(task)s") % {"task": task["task"]},
                                ["Judge", "Other judge", "Items", "Same verdict (%)", "Kappa"], rows,
                                "win / tie / lose of the combined verdicts on the items both judges decided"))
    return tables


def utterance_length_table(report):
    selfchat = (report.get("pairwise") or {}).get("selfchat")
    if not selfchat:
        return None
    figures = [f"{unit}_{figure}" for unit in ("words", "chars", "tokens")
               for figure in ("mean", "std", "median", "min", "max")]
    rows = [[Cell(r["system"], style="text"), Cell(r["n_dialogues"], style="int"), Cell(r["n_utterances"], style="int"),
             Cell(shown(r.get("words_counted_by") or "spaces"), style="text"),
             *[cell(r, key, "int" if key.endswith(("min", "max")) else "number") for key in figures]]
            for r in selfchat["utterance_length"]]
    header = ["System", "Dialogues", "Utterances", "Words counted by", *[LENGTH_COLUMNS[key] for key in figures]]
    return Table("utterance_length", "Utterance length per system", header, rows, selfchat["note"])


def item_list_tables(report):
    lists = report["item_lists"]
    tables = []
    for key, title in (("humans_right_models_wrong", "Humans right, every model wrong"),
                       ("models_right_humans_wrong", "Every model right, humans wrong")):
        if lists[key]:
            rows = [[Cell(i["task"], style="text"), Cell(i["external_id"], style="text"),
                     Cell(str(i["gold"]), style="text"),
                     Cell(", ".join(f"{k}: {v}" for k, v in i["human_answers"].items()), style="text"),
                     Cell(", ".join(f"{k}: {v}" for k, v in i["model_answers"].items()), style="text")]
                    for i in lists[key]]
            tables.append(Table(key, gettext("%(title)s (%(n)s items, first %(shown)s shown)") % {
                "title": gettext(title), "n": lists["counts"][key], "shown": lists["limit"]},
                                ["Task", "Item", "Gold", "Human answers", "Model answers"], rows))
    return tables


def paper_tables(report):
    """Each study table laid beside ours (reports.sections.paper): per model the paper's row, ours and the
    difference, in the paper's unit; our models no row names, alone. What each of our figures is goes in the note."""
    section = report.get("paper")
    if not section:
        return []
    tables = []
    for study in section["studies"]:
        for table in study["tables"]:
            columns = table["columns"]
            style = "number" if table["unit"] in ("spearman", "coefficient") else "decimal"
            # Rows per domain (DiQAD's Table 4) say their domain in a column of its own, or they read alike.
            by_domain = any(e.get("domain") is not None for e in (*table["beside"], *table["ours_alone"]))

            def domain(entry, by_domain=by_domain):
                return [Cell(entry.get("domain") or "", style="text")] if by_domain else []
            rows, said = [], []
            for entry in table["beside"]:
                paper_label = entry["paper_model"] + (f" ({entry['config']})" if entry.get("config") else "")
                rows += [[Cell(paper_label, style="text"), *domain(entry),
                          Cell(gettext("paper, Table %(table)s") % {"table": table["table"]}, style="text"),
                          *[figure_cell(entry["paper"].get(c), gettext("not in the paper"), style) for c in columns]],
                         [Cell(shown(entry["label"]), style="text"), *domain(entry),
                          Cell(gettext("ours"), style="text"),
                          *[figure_cell(entry["values"].get(c), entry["undefined"].get(c), style) for c in columns]],
                         [Cell("", style="text"), *domain(entry), Cell(gettext("difference"), style="text"),
                          *[figure_cell(entry["difference"].get(c), gettext("one of the two is missing"), style)
                            for c in columns]]]
                said.append(gettext("%(model)s: %(figure)s") % {"model": shown(entry["label"]),
                                                                 "figure": shown(entry["figure"])})
            for entry in table["ours_alone"]:
                rows.append([Cell(shown(entry["label"]), style="text"), *domain(entry),
                             Cell(gettext("ours alone"), style="text"),
                             *[figure_cell(entry["values"].get(c), entry["undefined"].get(c), style) for c in columns]])
                said.append(gettext("%(model)s: %(note)s; %(figure)s") % {
                    "model": shown(entry["label"]), "note": shown(entry["note"]), "figure": shown(entry["figure"])})
            note = gettext("%(paper)s, Table %(table)s (%(unit)s); %(note)s; the difference is ours minus the "
                           "paper's. Ours: %(ours)s. %(n)s row(s) of the paper's table have no run here.") % {
                "paper": study["paper"], "table": table["table"], "unit": shown(table["unit"]),
                "note": shown(table["note"]), "ours": pgettext("list separator", "; ").join(said),
                "n": table["paper_rows_without_ours"]}
            tables.append(Table(f"paper_{study['study']}_{table['table']}",
                                gettext("%(study)s: the paper's Table %(table)s beside ours (%(title)s)") % {
                                    "study": study["study"], "table": table["table"], "title": table["title"]},
                                ["Model", *(["Domain"] if by_domain else []), "Figure", *columns], rows, note))
    return tables


def all_tables(report):
    tables = [dialogbench_table(report), *paper_tables(report), mc_detail_table(report),
              group_table(report, "by_dimension", "Dimension"),
              group_table(report, "by_domain", "Domain"), position_table(report), correlation_table(report),
              *diqad_tables(report), *pairwise_tables(report), utterance_length_table(report),
              agreement_table(report, "campaigns"), agreement_table(report, "batches"), annotator_table(report),
              *item_list_tables(report)]
    return [t for t in tables if t is not None]
