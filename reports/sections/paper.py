"""A paper's table beside ours: for each study whose preset a run here followed, the paper's published figures
(studies/papers.py) for the models and tasks a run here shares with it, our figures for them and the
difference (ours minus the paper's, in the paper's unit); a model no row of the table names (the packaged model,
which no paper ran, above all) is shown alone, and said so.

Our figures come from the report's other sections: DialogBench's headline table (multiple_choice.headline),
KoDialogBench's dimensions and sets, DiQAD's gold figures and Huynh et al.'s correlations (ratings), BotChat's
arena tables, its self-chat dialogues and judges (pairwise). `lay_beside` pairs our rows with the paper's (by the
models' names, `paper_tables.matches`, or as a reader says: the `paper_tables` command's --as).
"""
from __future__ import annotations

import re

from django.utils.translation import gettext_noop

import studies
from benchmarks.formschema import question
from benchmarks.importers.judgebench import expert_source
from metrics import judge_agreement
from modeleval.modes import Answer, Section, modes_where, reads
from modeleval.modes.judge import metric_of
from studies import judgebench
from studies.dialogbench import recipe as dialogbench
from studies.huynh import recipe as huynh
from studies.papers import figure, matches, study_tables

from .. import texts
from ..figures import mean_or_none
from ..rows import Rows

SCALE = {"percent": 100, "spearman": 1, "tokens": 1, "coefficient": 1}
PACKAGED_NOTE = gettext_noop("the packaged model (SmolLM2-135M-Instruct): no paper ran it, ours alone")
NO_ROW_NOTE = gettext_noop("no row of this table names this model: ours alone")
CONFIG_NOTE = gettext_noop("the paper's rows of this model chose their examples otherwise (config): a figure is laid "
                           "beside only one made the same way, so ours stands alone")


def normal(text) -> str:
    return re.sub(r"[^a-z0-9]", "", str(text).lower())


def scaled(value, unit):
    return None if value is None else round(value * SCALE[unit], 6)


def our_row(label, *, names, values, undefined=None, run_id=None, packaged=False, figure_text="", **keys):
    """One row of our figures for a paper table: `values` in the paper's unit by column, `undefined` the reason
    where a column has none, `names` what the model is known by (matched with the paper's rows)."""
    return {"label": label, "run_id": run_id, "names": [n for n in names if n], "packaged": packaged,
            "figure": figure_text, "values": values, "undefined": undefined or {}, **keys}


def run_names(run):
    """What a run's model is known by: our name, the endpoint's model name, the source folder's or file's name."""
    return [run["model__name"], run.get("model__api_model"), run["model__source"]]


TRAINED_HERE = modes_where(trained_model=True)  # classifiers trained here (DiQAD's supervised baseline)


def is_packaged(run):
    return run["model__source"] == "packaged"


def preset_runs(rows: Rows, preset, modes=None):
    return [r for r in rows.data.runs if (r["settings"] or {}).get("preset") == preset
            and (modes is None or r["mode"] in modes)]


def lay_beside(study, number, ours, note="", overrides=None):
    """Table `number` of the study's paper beside `ours` (our_row dicts): each of our rows with the paper row that
    names its model (or the row `overrides` {our label: paper model} names), the paper's figures, ours and the
    difference per column; the rows no paper row names, alone."""
    doc = study_tables(study)
    table = next(t for t in doc["tables"] if t["table"] == number)
    columns, unit = table["columns"], table["unit"]
    overrides = overrides or {}
    beside, alone, used = [], [], set()
    for ours_row in ours:
        row = pick(table["rows"], ours_row, overrides.get(ours_row["label"]))
        if row is None:
            other_config = ours_row.get("same_config_only") and pick(
                table["rows"], {**ours_row, "config": None, "same_config_only": False},
                overrides.get(ours_row["label"])) is not None
            why_alone = PACKAGED_NOTE if ours_row["packaged"] else CONFIG_NOTE if other_config else NO_ROW_NOTE
            alone.append({**ours_row, "note": why_alone})
            continue
        used.add(id(row))
        paper = {c: figure(row["values"].get(c)) for c in columns}
        difference = {c: round(ours_row["values"][c] - paper[c], 6)
                      if ours_row["values"].get(c) is not None and paper[c] is not None else None for c in columns}
        beside.append({**ours_row, "paper_model": row["model"],
                       **{key: row[key] for key in ("kind", "group", "config", "domain") if key in row},
                       "paper": paper, "paper_sd": {c: row["values"][c].get("sd") for c in columns
                                                    if isinstance(row["values"].get(c), dict)},
                       "difference": difference})
    return {"study": study, "table": number, "title": table["title"], "unit": unit, "columns": columns,
            "paper": doc["paper"], "paper_file": doc["paper_file"], "note": note, "ours": ours, "beside": beside,
            "ours_alone": alone, "paper_rows_without_ours": sum(id(r) not in used for r in table["rows"])}


def pick(paper_rows, ours_row, named=None):
    """The paper row of our row's model: the one `named`, else the first whose names match, one of our row's
    `config` (how examples were chosen) first, and only such a row when our row is `same_config_only`; of our
    row's kind (pre-trained or instruction-tuned, human) and domain where both say."""
    if ours_row.get("config") or ours_row.get("same_config_only"):
        same = [row for row in paper_rows if row.get("config") == ours_row.get("config")]
        found = pick(same, {**ours_row, "config": None, "same_config_only": False}, named)
        if found is not None or ours_row.get("same_config_only"):
            return found
    for row in paper_rows:
        if ours_row.get("kind") and row.get("kind") and ours_row["kind"] != row["kind"]:
            continue
        if ours_row.get("domain") is not None and row.get("domain") is not None \
                and normal(ours_row["domain"]) != normal(row["domain"]):
            continue
        if (row["model"] == named) if named else matches(row, ours_row["names"]):
            return row
    return None


# --- DialogBench: Tables 2 (English) and 3 (Chinese) ----------------------------------------------------------

def dialogbench_tables(rows: Rows, report, study):
    mc = report.get("multiple_choice")
    headline = [h for h in (mc or {}).get("headline", []) if h["preset"] == study.preset]
    if not headline:
        return []
    number = "3" if str(rows.data.benchmark.get("language", "")).startswith("zh") else "2"
    columns = next(t for t in study_tables("dialogbench")["tables"] if t["table"] == number)["columns"]
    by_abbr = {abbr: slug for slug, abbr in dialogbench.ABBREVIATIONS.items()}
    tasks = [c for c in columns if c in by_abbr]
    ours = []
    for h in headline:
        run = rows.runs[h["run_id"]]
        values = {c: scaled(h["per_task"].get(by_abbr[c]), "percent") for c in tasks}
        undefined = {c: gettext_noop("not run on this task") for c in tasks if values[c] is None}
        ran = [values[c] for c in tasks if values[c] is not None]
        values["Overall"] = round(sum(ran) / len(ran), 6) if len(ran) == len(tasks) else None
        if values["Overall"] is None:
            undefined["Overall"] = texts.PAPER_OVERALL_OF(tasks=len(tasks), ran=len(ran))
        ours.append(our_row(h["model"], names=run_names(run), values=values, undefined=undefined, run_id=h["run_id"],
                            packaged=is_packaged(run), figure_text=h["figure"],
                            kind="pretrained" if reads(h["mode"]).by_rule else "sft"))
    human = {t["task"]: t for t in mc["tasks"]}
    if any(t.get("human_majority") is not None for t in mc["tasks"]):
        values = {c: scaled((human.get(by_abbr[c]) or {}).get("human_majority"), "percent") for c in tasks}
        values["Overall"] = scaled(mc["overall"].get("human_majority"), "percent") \
            if all(values[c] is not None for c in tasks) else None
        rules = {(t["m"], t["k"]) for t in mc["tasks"] if t.get("k")}
        rule = texts.MAJORITY_OF(**dict(zip("mk", rules.pop(), strict=True))) if len(rules) == 1 \
            else gettext_noop("a majority right")
        ours.append(our_row("humans", names=["Human"], values=values, kind="human",
                            undefined={c: gettext_noop("no human answers on this task") for c, v in values.items()
                                       if v is None},
                            figure_text=texts.HUMAN_MAJORITY_FIGURE(rule=rule)))
    note = gettext_noop("ours: each run of the dialogbench preset by its headline figure (named per row: the options "
                        "as given, or pooled over the answer at each position as the released Qwen and Baichuan "
                        "evaluators); a pre-trained row of the paper (perplexity) is laid beside a loglikelihood run, "
                        "an instruction-tuned row beside a generate run")
    return [lay_beside("dialogbench", number, ours, note)]


# --- KoDialogBench: Tables 4 (comprehension, the mean of each task's sets) and 5 (response selection) ----------

def kodialogbench_tables(rows: Rows, report, study):
    mc = report.get("multiple_choice")
    runs = preset_runs(rows, study.preset)
    if not mc or not runs:
        return []
    doc = study_tables("kodialogbench")
    comprehension, selection = doc["tables"]
    by_dimension = {normal(d["dimension"]): d for d in mc["by_dimension"]}
    by_task = {}
    for task in mc["tasks"]:
        by_task[normal(task["task"])] = by_task[normal(task["name"])] = task["task"]
    accuracy = {(m["task"], m["model"]): m["accuracy_all_items"] for m in mc["models"]}
    labels = {rows.run_label[r["id"]]: r for r in runs}
    average = (mc["overall"].get("mean_of_dimensions") or {}).get("models", {})
    tables = []
    for table, read in ((comprehension,
                         lambda c, label: (by_dimension.get(normal(c)) or {}).get("models", {}).get(label)),
                        (selection, lambda c, label: accuracy.get((by_task.get(normal(c)), label)))):
        columns = [c for c in table["columns"] if c != "Average"]
        ours = []
        for label, run in labels.items():
            values = {c: scaled(read(c, label), "percent") for c in columns}
            complete = all(values[c] is not None for c in columns)
            if table is comprehension:
                values["Average"] = scaled(average.get(label), "percent") if complete else None
            else:
                values["Average"] = round(sum(values.values()) / len(columns), 6) if complete else None
            undefined = {c: gettext_noop("no such set or task here") for c, v in values.items() if v is None}
            if any(v is not None for v in values.values()):
                ours.append(our_row(label, names=run_names(run), values=values, undefined=undefined,
                                    run_id=run["id"], packaged=is_packaged(run),
                                    figure_text=gettext_noop("accuracy on every gold item the run scored")))
        humans = {c: (by_dimension.get(normal(c)) or {}).get("human_mean_of_raters") if table is comprehension else
                  next((t["human_mean_of_raters"] for t in mc["tasks"] if t["task"] == by_task.get(normal(c))), None)
                  for c in columns}
        if any(v is not None for v in humans.values()):
            values = {c: scaled(v, "percent") for c, v in humans.items()}
            values["Average"] = (round(sum(values.values()) / len(columns), 6)
                                 if all(v is not None for v in values.values()) else None)
            ours.append(our_row("humans", names=["Human"], values=values,
                                undefined={c: gettext_noop("no human answers") for c, v in values.items() if v is None},
                                figure_text=gettext_noop("the mean of the raters' accuracies (the paper: 3 native "
                                                         "speakers on the same 50 items per set)")))
        note = gettext_noop("a column is ours where a task's dimension (Table 4) or a task (Table 5) has its name; the "
                            "averages only when every column is ours")
        tables.append(lay_beside("kodialogbench", table["table"], ours, note))
    return [t for t in tables if t["ours"]]


# --- DiQAD: Tables 3 (against gold) and 4 (per domain) ----------------------------------------------------------

UNDEFINED = gettext_noop("undefined")
ACCURACY_ONLY = gettext_noop("per domain, accuracy only")
DIQAD_KEYS = {"Acc": "gold_accuracy", "UAR": "gold_uar", "Kappa": "gold_kappa", "Spearman": "gold_spearman",
              "Pearson": "gold_pearson", "Precision": "gold_precision", "Recall": "gold_recall", "F1": "gold_f1"}


def diqad_tables(rows: Rows, report, study):
    ratings = report.get("ratings")
    runs = {r["id"]: r for r in rows.data.runs
            if (r["settings"] or {}).get("preset") == study.preset or r["mode"] in TRAINED_HERE}
    models = [m for m in (ratings or {}).get("models", []) if m["run_id"] in runs and m["n_gold"]]
    if not models:
        return []
    overall, by_domain = [], []
    for m in models:
        run = runs[m["run_id"]]
        values = {c: scaled(m.get(key), "percent") for c, key in DIQAD_KEYS.items()}
        overall.append(our_row(m["model"], names=run_names(run), values=values, run_id=run["id"],
                               packaged=is_packaged(run), undefined={c: m["undefined"].get(DIQAD_KEYS[c], UNDEFINED)
                                                                     for c, v in values.items() if v is None},
                               figure_text=texts.AGAINST_GOLD(task=m["task"], quality=m["quality"])))
        for d in m.get("gold_by_domain", []):
            by_domain.append(our_row(m["model"], names=run_names(run), run_id=run["id"], packaged=is_packaged(run),
                                     domain=d["domain"], values={"Acc": scaled(d.get("accuracy"), "percent")},
                                     undefined={c: ACCURACY_ONLY for c in ("UAR", "Spearman", "Pearson",
                                                                                          "F1")},
                                     figure_text=texts.DOMAIN_ACCURACY(domain=d["domain"] or gettext_noop("(none)"))))
    note = gettext_noop("UAR here is the true mean of per-class recalls; the paper's UAR column equals 0.6 x its "
                        "Recall column for most rows")
    tables = [lay_beside("diqad", "3", overall, note)]
    if by_domain:
        tables.append(lay_beside("diqad", "4", by_domain, gettext_noop(
                                 "a row per model and item domain. The paper's \"w/o D\" "
                                 "rows test a model trained without domain D on the whole of D, while its all-domain "
                                 "row tests on its random split's items of D: the two rows are not on the same "
                                 "items, so their difference is not a paired one; ours score the items of D that "
                                 "each run scored (a classifier trained with holdout_domain D: every item of D)")))
    return tables


# --- Huynh et al.: Tables 1-4 (FED qualities) and 6 (overall, yes/no) ------------------------------------------

NOT_RATED = gettext_noop("no run rated this quality here")
QUALITY_NAMES = {"semapprop": "semanticallyappropriate", "topicdepth": "depth"}
# Our few-shot strategies by the paper's names for how its examples were chosen (Tables 1-4: three examples).
EXAMPLE_CONFIGS = {"random": "random", "fixed": "manual", "bm25_both": "BM25C+R", "bm25_context": "BM25C"}
# Table 6: overall quality, yes/no, 4 examples by BM25 on the context, or none.
TABLE_6_CONFIGS = {("bm25_context", 4): "4 examples chosen by BM25 on the context", ("none", 0): "zero-shot"}
FED_TASKS = {"turn": "fed-turn", "dialog": "fed-dialog"}


def huynh_config(fewshot, level):
    """The paper's name for how a run chose its examples, in the table of `level` (None: Table 6), or a name of
    ours that no row carries: a run is laid beside a paper row only when both chose their examples alike."""
    strategy, k = fewshot.get("strategy", "none"), int(fewshot.get("k", 0) or 0)
    if strategy == "none" or k == 0:
        strategy, k = "none", 0
    if level is None:
        return TABLE_6_CONFIGS.get((strategy, k), f"{k} examples, {strategy}")
    if strategy in EXAMPLE_CONFIGS and k == huynh.K:
        return EXAMPLE_CONFIGS[strategy]
    return "zero-shot" if k == 0 else f"{k} examples, {strategy}"


def huynh_tables(rows: Rows, report, study):
    """A rating run rates one quality: a model's runs of one few-shot strategy make one row of ours."""
    ratings = report.get("ratings")
    runs = {r["id"]: r for r in preset_runs(rows, study.preset)}
    models = [m for m in (ratings or {}).get("models", []) if m["run_id"] in runs]
    if not models:
        return []
    labels = {(q["task"], q["quality"]): normal(q["label"]) for q in ratings["qualities"]}
    groups = {}
    for m in models:
        run = runs[m["run_id"]]
        strategy = ((run["settings"] or {}).get("fewshot") or {}).get("strategy", "none")
        groups.setdefault((run["model__name"], run["mode"], strategy), []).append(m)
    tables = []
    for table in study_tables("huynh")["tables"]:
        level = table.get("level")
        ours = []
        for (name, mode, strategy), mine in groups.items():
            if level is not None:
                if reads(mode).answer != Answer.RATING:
                    continue
                found = {labels[m["task"], m["quality"]]: m for m in mine if m["task"] == FED_TASKS[level]}
                pick_of = {c: found.get(QUALITY_NAMES.get(normal(c), normal(c))) for c in table["columns"]}
            else:
                if reads(mode).answer != Answer.PROBABILITY:
                    continue
                pick_of = {c: next((m for m in mine if m["task"] == task and labels[m["task"], m["quality"]] ==
                                    "overall"), None) for c, task in (("FT", "fed-turn"), ("FD", "fed-dialog"))}
            if not any(pick_of.values()):
                continue
            run = runs[next(m for m in pick_of.values() if m)["run_id"]]
            values = {c: m.get("spearman") if m else None for c, m in pick_of.items()}
            values.update({c: None for c in table["columns"] if c not in values})
            fewshot = (run["settings"] or {}).get("fewshot") or {}
            ours.append(our_row(f"{name} [{mode}, {strategy}]", names=run_names(run), values=values,
                                packaged=is_packaged(run), config=huynh_config(fewshot, level), same_config_only=True,
                                run_ids=[m["run_id"] for m in pick_of.values() if m],
                                undefined={c: NOT_RATED for c, v in values.items() if v is None},
                                sd={c: m.get("spearman_std") for c, m in pick_of.items() if m},
                                figure_text=texts.EXAMPLES_SPEARMAN(strategy=strategy, k=fewshot.get("k", 0))))
        if ours:
            tables.append(lay_beside("huynh", table["table"], ours, gettext_noop(
                "the paper's examples are named per row (config); a row of ours is laid beside a paper row only when "
                "both chose their examples the same way (random, BM25, manual or none, and as many)")))
    return tables


# --- BotChat: Tables 1 (non-loop rate), 2 (Win+Tie), 3 (judges), 4 (choices) and 5 (tokens) -------------------

NO_NATURALCONV = gettext_noop("NaturalConv is not here")
NO_TOKENIZER = gettext_noop("tokens counted by no tokenizer (the paper: GPT-4's CL100K)")


def system_names(system):
    """A system of the arena by its run label, without the run id and, for the study's released dialogues, the
    `botchat-` of their model names (modeleval.botchat_release)."""
    name = str(system).split("#")[0]
    return [name, name.removeprefix("botchat-")]


def botchat_tables(rows: Rows, report, study):
    pairwise = report.get("pairwise")
    if not pairwise or not preset_runs(rows, study.preset):
        return []
    doc = study_tables("botchat")
    gpt4 = next(r for r in doc["tables"][1]["rows"] if r["model"] == "GPT-4")
    tables = []
    # Table 2: Win+Tie against the real dialogue and against GPT-4, as analyze.py's calc_win_rate.
    ours = []
    for task in pairwise["tasks"]:
        for judge, table in (task.get("botchat") or {}).items():
            versus = {(v["model"], v["opponent"]): v for v in table["versus"]}
            systems = sorted({v["model"] for v in table["versus"]} - {"human"}, key=str)
            reference = next((s for s in systems if matches(gpt4, system_names(s))), None)
            for system in systems:
                values = {"MuTual vs GT": scaled((versus.get((system, "human")) or {}).get("win_tie_rate"), "percent"),
                          "MuTual vs GPT-4": scaled((versus.get((system, reference)) or {}).get("win_tie_rate"),
                                                    "percent") if reference and reference != system else None}
                undefined = {"MuTual vs GT": gettext_noop("not paired with the real dialogues here"),
                             "MuTual vs GPT-4": gettext_noop("no GPT-4 system in this arena") if reference is None
                             else gettext_noop("GPT-4 itself")}
                undefined = {c: why for c, why in undefined.items() if values[c] is None}
                for column in ("CON vs GT", "CON vs GPT-4", "UNCON vs GT", "UNCON vs GPT-4"):
                    values[column], undefined[column] = None, NO_NATURALCONV
                ours.append(our_row(texts.JUDGED_ROW(system=system, judge=judge), names=system_names(system),
                                    values=values, undefined=undefined,
                                    figure_text=texts.JUDGED_TASK(task=task["task"], judge=judge)))
    if ours:
        tables.append(lay_beside("botchat", "2", ours, gettext_noop(
            "Win+Tie over the read answers, both orders of showing, the pairs the loop detector decided included")))
    # Tables 1 and 5: the self-chat dialogues behind the arena.
    dialogues = rows.data.dialogues or {}
    selfchat = pairwise.get("selfchat") or {}
    if dialogues.get("item_id"):
        rates = {}
        for system, utterances, start in zip(dialogues["system"], dialogues["utterances"], dialogues["loop_start"],
                                             strict=True):
            if system != "human" and utterances:
                kept = len(utterances) if start is None else min(start + 1, len(utterances))
                rates.setdefault(system, []).append(kept / len(utterances))
        ours = [our_row(system, names=system_names(system), values={"MuTual": scaled(mean_or_none(shares), "percent"),
                                                                    "CON": None, "UNCON": None},
                        undefined={"CON": NO_NATURALCONV, "UNCON": NO_NATURALCONV},
                        figure_text=texts.BEFORE_LOOP(n=len(shares)))
                for system, shares in sorted(rates.items(), key=lambda kv: str(kv[0]))]
        if ours:
            tables.append(lay_beside("botchat", "1", ours, gettext_noop("our loop detector (its measure and threshold "
                                                                          "ours)")))
    lengths = [r for r in selfchat.get("utterance_length", []) if r["system"] != "human"]
    if lengths:
        ours = [our_row(r["system"], names=system_names(r["system"]),
                        values={"Avg. #Tokens": r.get("tokens_mean")},
                        undefined={"Avg. #Tokens": (r.get("undefined") or {}).get("tokens_mean", "")}
                        if r.get("tokens_mean") is None else {},
                        figure_text=texts.TOKENS_COUNTED_BY(counter=r["token_counter"]) if r.get("token_counter")
                        else NO_TOKENIZER) for r in lengths]
        tables.append(lay_beside("botchat", "5", ours, gettext_noop("each generated utterance after the seed")))
    # Table 3: each judge against the people and against a GPT-4 judge.
    ours = []
    for task in pairwise["tasks"]:
        judges = {name: entry for name, entry in task["judges"].items() if name != "humans"}
        gpt4_judge = next((name for name in judges if matches(gpt4, system_names(name))), None)
        agreement = {frozenset((a["judge_a"], a["judge_b"])): a for a in task.get("judge_agreement", [])}
        for name, entry in judges.items():
            run = next((r for r in rows.data.runs if rows.run_label[r["id"]] == name), None)
            with_gpt4 = agreement.get(frozenset((name, gpt4_judge))) if gpt4_judge and gpt4_judge != name else None
            values = {"CwHuman": scaled(entry.get("agreement_with_humans"), "percent"),
                      "CwGPT4": scaled(with_gpt4.get("agreement"), "percent") if with_gpt4 else None}
            undefined = {"CwHuman": (entry.get("undefined") or {}).get("agreement_with_humans",
                                                                       gettext_noop("no human labels")),
                         "CwGPT4": gettext_noop("no GPT-4 judge here") if gpt4_judge is None
                         else gettext_noop("GPT-4 itself")}
            ours.append(our_row(name, names=run_names(run) if run else system_names(name), values=values,
                                run_id=run["id"] if run else None, packaged=bool(run and is_packaged(run)),
                                undefined={c: why for c, why in undefined.items() if values[c] is None},
                                figure_text=texts.SAME_VERDICT(task=task["task"])))
    if ours:
        tables.append(lay_beside("botchat", "3", ours, gettext_noop("the verdicts combined over both orders, on the "
                                                                    "pairs both decided")))
    return tables


# --- JUDGE-BENCH: results/regular/<data set>.json ---------------------------------------------------------------

JUDGE_MODES = modes_where(section=Section.JUDGE)
JUDGEBENCH_NOTE = gettext_noop(
    "ours: the judge's answers against the people's majority (categorical) or mean (graded) as the study's "
    "eval_responses.py measures them, the people's Krippendorff alpha from the agreement section; valid_share is the "
    "share of replies read (the study's valid_responses / total_responses)")
NO_PEOPLE_AGREEMENT = gettext_noop("no agreement of the people here (one rater per item)")


def judgebench_tables(rows: Rows, report, study):
    """Each judge run of the judgebench preset measured as the study's eval_responses.py measures a judge (Cohen's
    kappa against the people's majority, the correlations of the labels' codes; for a scale, the correlations with
    the people's mean), the study's stand-ins for unreadable replies included, beside the published figures of the
    data set the benchmark is (by its instances and its kind of raters)."""
    runs = preset_runs(rows, study.preset, JUDGE_MODES)
    if not runs:
        return []
    pred, by_table = rows.data.predictions, {}
    alphas = {(a["task"], a["question"]): a.get("krippendorff_alpha")
              for a in (report.get("agreement") or {}).get("campaigns", []) if a["rater_group"] != "expert_panel"}
    for run in runs:
        for task_id in run["task_ids"]:
            task = rows.tasks[task_id]
            key = (run["settings"] or {}).get("quality") or task["form"]["primary"]
            metric = metric_of(question(task["form"], key))
            items = rows.items_of[task_id]
            dataset = judgebench.dataset_of(len(items), bool(expert_source(rows.data.benchmark.get("source"))))
            where = rows.predictions[run["id"], ""]
            on = [i for i in items if i in where and pred["gold"][where[i]] not in (None, "")]
            if dataset is None or not on:
                continue
            categorical = metric.category == judgebench.CATEGORICAL
            people = [pred["gold"][where[i]] if categorical else float(pred["gold"][where[i]]) for i in on]
            judge = [pred["answer"][where[i]] if categorical else pred["rating"][where[i]] for i in on]
            found = judge_agreement(people, judge, labels=list(metric.labels) if categorical else None)
            valid = sum(pred["parse_status"][where[i]] == "parsed" for i in on)
            corr = found.correlations
            values = {"kappa": found.kappa, "pearson": corr.pearson.value, "spearman": corr.spearman.value,
                      "kendall": corr.kendall_tau_b.value, "krippendorff_alpha": alphas.get((task["slug"], key)),
                      "valid_share": valid / len(on)}
            undefined = {c: corr.undefined_reason for c in ("pearson", "spearman", "kendall") if values[c] is None}
            if values["kappa"] is None:
                undefined["kappa"] = found.kappa_undefined_reason
            if values["krippendorff_alpha"] is None:
                undefined["krippendorff_alpha"] = NO_PEOPLE_AGREEMENT
            by_table.setdefault(dataset, []).append(our_row(
                rows.run_label[run["id"]], names=run_names(run), values=values, undefined=undefined, run_id=run["id"],
                packaged=is_packaged(run), n_items=len(on), n_valid=valid,
                figure_text=texts.REPLIES_READ(key=key, n=len(on), total=len(items), valid=valid)))
    return [lay_beside(study.preset, dataset, ours, JUDGEBENCH_NOTE) for dataset, ours in by_table.items()]


def shown_once(tables):
    """Tables of the same columns (Huynh et al.'s Tables 1 and 3, 2 and 4) show a model of ours alone once, in the
    first, and not at all where another of them lays it beside a paper row; a table left with nothing is dropped."""
    placed = {}
    for table in tables:
        for entry in table["beside"]:
            placed.setdefault(tuple(table["columns"]), set()).add(entry["label"])
    for table in tables:
        shown = placed.setdefault(tuple(table["columns"]), set())
        table["ours_alone"] = [e for e in table["ours_alone"] if e["label"] not in shown]
        shown.update(e["label"] for e in table["ours_alone"])
    return [t for t in tables if t["beside"] or t["ours_alone"]]


# How ours are laid beside each study's paper, by study (the registry's objects): a study without a layout here has
# no table beside ours.
OURS = {studies.dialogbench.STUDY: dialogbench_tables, studies.botchat.STUDY: botchat_tables,
        studies.diqad.STUDY: diqad_tables, studies.kodialogbench.STUDY: kodialogbench_tables,
        studies.huynh.STUDY: huynh_tables, judgebench.STUDY: judgebench_tables}


def paper_section(rows: Rows, report):
    """{studies: [{study, paper, paper_file, tables: [lay_beside(...)]}]} for the studies a run here followed;
    None when no run did."""
    laid = []
    for study, ours_of in OURS.items():
        tables = shown_once(ours_of(rows, report, study))
        if tables:
            doc = study_tables(study.preset)
            laid.append({"study": study.preset, "paper": doc["paper"], "paper_file": doc["paper_file"],
                         "tables": tables})
    if not laid:
        return None
    return {"studies": laid,
            "note": "the paper's figure, ours and the difference (ours minus the paper's) in the paper's unit, for "
                    "each model a run here shares with a paper's table (by its name, its endpoint's model name or its "
                    "source's name); a model no row names is shown alone. BotChat's Table 4 (the judges' choices) is "
                    "not laid beside: the paper does not say from whose side its Win and Lose are counted"}
