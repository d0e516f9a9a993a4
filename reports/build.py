"""The human-versus-model report, assembled from plain rows with `metrics` (no ORM here).

`build_report(ReportData, ReportOptions)` returns a JSON-ready dict whose keys are documented in
reports/SCHEMA.md. Conventions: every table is a list of flat rows; a statistic that cannot be
computed is null and its row's `undefined` maps the key to the reason; no NaN ever leaves here.
"""
from __future__ import annotations

import hashlib
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone

import numpy as np

from benchmarks.formschema import excluding_values, question
from benchmarks.models import canonical_json
from metrics import (
    bradley_terry_bootstrap,
    classification_metrics,
    cohen_kappa,
    correlations,
    elo,
    fleiss_kappa,
    krippendorff_alpha,
    landis_koch_band,
    length_stats,
    m_of_k_correct,
    mcnemar_exact,
    mean_of_raters_accuracy,
    mean_rating_per_item,
    pass_at_n,
    pass_at_n_stepwise,
    percent_agreement,
    win_tie_lose,
)
from metrics.comparison import STRATIFIED, paired_bootstrap_gap, paired_bootstrap_gaps, stratified_interval

from .readable import GAP_RULES, RULE_COLUMNS, RULES, flag, how_to_read, run_rule

SCHEMA_VERSION = 1
MC_MODES = ("loglikelihood", "generate")
RATING_MODES = ("rating", "yes_no")
# Outcome of conversation A from a pairwise label: win/tie/lose as such; BotChat's "which one
# involves an AI" labels make the picked conversation lose.
PAIRWISE_OUTCOMES = {"win": "win", "tie": "tie", "lose": "lose", "1": "lose", "2": "win", "both": "tie",
                     "neither": "tie"}
# Question types whose answers agreement and ratings are computed on (text and multi-choice are not).
LABEL_TYPES = {"single_choice", "scale", "boolean", "index"}
GROUPS = {"annotators": "human annotators", "expert_panel": "expert panel (gold_panel campaigns)",
          "imported": "imported external raters"}


@dataclass
class ReportData:
    """The plain rows a report is built from (see reports.selectors.report_data)."""

    benchmark: dict
    campaign_id: int | None
    gold_version: dict | None  # None: the source gold of the items
    tasks: list  # {id, slug, name, dimension, form}
    items: dict  # columns: id, task_id, external_id, content_hash, domain, n_options, model_a, model_b[, source_gold]
    gold: dict | None  # item id -> primary gold value (gold version); None: read items["source_gold"]
    campaigns: list  # {id, name, protocol, source, settings: [{version, overlap, guidelines, note, ...}]}
    batches: list  # {id, campaign_id, number, state, round, settings__version}
    annotations: dict  # columns: campaign_id, batch_id, item_id, annotator_id, round, current, value, excluded,
    #                    dwell_seconds, answers {question key: column}
    qc: list  # (batch id, round, decision, item id, qc value)
    users: dict  # user id -> username
    runs: list  # {id, mode, settings, prompt_*, position_policy, seed, finished_at, model__*, task_ids}
    predictions: dict  # columns: run_id, item_id, variant, answer, answer_norm, answer_per_token, acc_pick,
    #                    parse_status, gold, rating
    code: dict = field(default_factory=dict)
    # The whole dialogues behind arena pairs (see reports.selectors.arena_dialogues): columns item_id,
    # system, utterances, seed_utterances, loop_start; labels: (item, annotator, is_ai, first_ai_turn).
    dialogues: dict = field(default_factory=dict)
    # Which gold and why (reports.gold.GoldChoice.describe): citation, chosen_by, why, declined,
    # excluded_campaigns, derived_from_campaign, method, left_out.
    gold_choice: dict = field(default_factory=dict)


@dataclass(frozen=True)
class ReportOptions:
    n_resamples: int = 1000
    confidence: float = 0.95
    seed: int = 0
    item_list_limit: int = 50
    rule: str = "run"  # how log-likelihood runs are scored for the gap: run (each run's own), acc, acc_norm, per_token
    min_items: int = 30  # figures from fewer items are flagged "small sample"
    min_agreement_items: int = 30  # agreement figures from fewer items are flagged, with no Landis-Koch band
    min_raters: int = 3  # ... and from fewer raters per item

    def __post_init__(self):
        if self.rule not in GAP_RULES:
            raise ValueError(f"rule: expected one of {', '.join(GAP_RULES)}, got {self.rule!r}")
        for name in ("min_items", "min_agreement_items", "min_raters"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be 0 or more")


# ---------------------------------------------------------------- small helpers

def put(row, key, value, reason=None):
    """Set a statistic; a None value records why in row["undefined"]."""
    row[key] = value
    if value is None:
        row["undefined"][key] = reason or "undefined"
    return row


def new_row(**keys):
    return {**keys, "undefined": {}}


def mean_or_none(values):
    values = [v for v in values if v is not None]
    return float(np.mean(values)) if values else None


def sha256_lines(lines):
    digest = hashlib.sha256()
    for line in lines:
        digest.update(line.encode("utf-8"))
        digest.update(b"\n")
    return digest.hexdigest()


def rater_group(campaign):
    if campaign["source"]:
        return "imported"
    return "expert_panel" if campaign["protocol"] == "gold_panel" else "annotators"


def task_kind(form):
    spec = question(form, form["primary"])
    options = spec.get("options")
    if spec["type"] == "single_choice" and options == "item":
        return "multiple_choice"
    values = [str(o["value"]) for o in options] if isinstance(options, list) else []
    if spec["type"] == "single_choice" and values and set(values) <= set(PAIRWISE_OUTCOMES):
        return "pairwise"
    if rating_values(spec) is not None:
        return "rating"
    return "other"


def rating_values(spec):
    """The valid ratings of a question, or None when it is not a rating (scale, yes/no, numeric choice)."""
    if spec["type"] == "scale":
        return list(range(spec["scale"]["min"], spec["scale"]["max"] + 1))
    if spec["type"] == "boolean":
        return [False, True]
    if spec["type"] == "single_choice" and isinstance(spec.get("options"), list):
        values = [o["value"] for o in spec["options"] if not o.get("excludes")]
        if values and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
            return values
    return None


def as_number(value):
    if value is None or isinstance(value, (list, dict, str)):
        return None
    return float(value)


def agreement_spec(spec):
    """(categories for Fleiss, Krippendorff level, value domain) of a label question."""
    if spec["type"] == "scale":
        values = list(range(spec["scale"]["min"], spec["scale"]["max"] + 1))
        return values, "ordinal", values
    if spec["type"] == "boolean":
        return [False, True], "nominal", None
    if spec["type"] == "single_choice" and isinstance(spec.get("options"), list):
        return [o["value"] for o in spec["options"]], "nominal", None
    return None, "nominal", None


# ---------------------------------------------------------------- the index over the rows

class Rows:
    """Lookups over the plain rows that every section shares."""

    def __init__(self, data: ReportData):
        self.data = data
        items = data.items
        self.tasks = {t["id"]: t for t in data.tasks}
        self.kind = {t["id"]: task_kind(t["form"]) for t in data.tasks}
        self.primary = {t["id"]: t["form"]["primary"] for t in data.tasks}
        self.position = {i: n for n, i in enumerate(items["id"])}
        self.item_task = dict(zip(items["id"], items["task_id"]))
        self.external_id = dict(zip(items["id"], items["external_id"]))
        self.domain = dict(zip(items["id"], items["domain"]))
        self.n_options = dict(zip(items["id"], items["n_options"]))
        self.items_of = defaultdict(list)
        for item_id, task_id in zip(items["id"], items["task_id"]):
            self.items_of[task_id].append(item_id)
        if data.gold is not None:
            self.gold = {i: data.gold.get(i) for i in items["id"]}
        else:
            self.gold = {i: (sg or {}).get(self.primary[t])
                         for i, t, sg in zip(items["id"], items["task_id"], items["source_gold"])}
        self.source_gold = dict(zip(items["id"], items["source_gold"])) if data.gold is None else {}
        self.campaigns = {c["id"]: c for c in data.campaigns}
        self.group = {c["id"]: rater_group(c) for c in data.campaigns}
        # Whose answers are "the humans": the campaign in scope, else every campaign but gold panels
        # (whose majority is the gold itself).
        if data.campaign_id is not None:
            self.human_campaigns = {data.campaign_id}
        else:
            self.human_campaigns = {c for c, g in self.group.items() if g != "expert_panel"}
        # Campaigns whose raters made the gold are not scored against it (reports.gold).
        self.human_campaigns -= {e["campaign_id"] for e in data.gold_choice.get("excluded_campaigns", [])}
        self.position_campaigns = {c["id"] for c in data.campaigns if c.get("raters_are_positions")}
        ann = data.annotations
        self.position_raters = {a for c, a in zip(ann["campaign_id"], ann["annotator_id"])
                                if c in self.position_campaigns}
        self.n_annotations = len(ann["item_id"])
        self.current = [i for i in range(self.n_annotations) if ann["current"][i]]
        self.human_rows = [i for i in self.current if ann["campaign_id"][i] in self.human_campaigns]
        self.human = defaultdict(dict)  # item -> {annotator: primary answer}
        for i in self.human_rows:
            self.human[ann["item_id"][i]][ann["annotator_id"][i]] = ann["value"][i]
        self._by_position = {}  # (run, column, variant) -> the column over all item positions
        self.runs = {r["id"]: r for r in data.runs}
        self.run_label = run_labels(data.runs)
        pred = data.predictions
        self.predictions = defaultdict(dict)  # (run, variant) -> {item: row index}
        for i, (run, item, variant) in enumerate(zip(pred["run_id"], pred["item_id"], pred["variant"])):
            self.predictions[run, variant][item] = i

    def aligned(self, run_id, column, positions, variant=""):
        """One prediction column of a run at the given item positions (None where it has no prediction)."""
        key = (run_id, column, variant)
        if key not in self._by_position:
            full = np.full(len(self.position), None, dtype=object)
            where, values = self.predictions[run_id, variant], self.data.predictions[column]
            if where:
                column_values = np.empty(len(where), dtype=object)
                column_values[:] = [values[j] for j in where.values()]
                full[[self.position[i] for i in where]] = column_values
            self._by_position[key] = full
        return self._by_position[key][positions]

    def gold_for(self, task, key):
        """item -> gold of question `key`: a gold version labels the primary question only."""
        if key == task["form"]["primary"]:
            return {i: self.gold[i] for i in self.items_of[task["id"]]}
        return {i: (self.source_gold.get(i) or {}).get(key) for i in self.items_of[task["id"]]}

    def human_answers(self, key):
        """item -> {annotator: answer to question `key`} from the human campaigns' current labels."""
        column = self.data.annotations["answers"][key]
        ann = self.data.annotations
        out = defaultdict(dict)
        for i in self.human_rows:
            if column[i] is not None:
                out[ann["item_id"][i]][ann["annotator_id"][i]] = column[i]
        return out

    def overlap(self):
        """k of the human campaigns when they agree on one, else None."""
        ks = {c["settings"][-1]["overlap"] for cid, c in self.campaigns.items()
              if cid in self.human_campaigns and c["settings"]}
        return ks.pop() if len(ks) == 1 else None

    def runs_for(self, task_id, modes, as_is=True):
        return [r for r in self.data.runs if r["mode"] in modes and task_id in r["task_ids"]
                and (r["position_policy"] == "as_is") == as_is]


def run_labels(runs):
    """A readable, unique name per run: the model name, with the run id when a model ran twice."""
    counts = Counter((r["model__name"], r["mode"]) for r in runs)
    return {r["id"]: r["model__name"] if counts[r["model__name"], r["mode"]] == 1 else f"{r['model__name']}#{r['id']}"
            for r in runs}


# ---------------------------------------------------------------- agreement

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


# ---------------------------------------------------------------- annotators

def label_key(value):
    """A hashable stand-in for a label (multi-choice answers are lists)."""
    return canonical_json(value) if isinstance(value, (list, dict)) else value


def peer_pairs(campaign, item, rnd, eligible):
    """Every ordered pair (i, j), i != j, of eligible labels given to the same item in the same round."""
    idx = np.flatnonzero(eligible)
    idx = idx[np.lexsort((rnd[idx], item[idx], campaign[idx]))]
    c, it, r = campaign[idx], item[idx], rnd[idx]
    starts_here = np.r_[True, (c[1:] != c[:-1]) | (it[1:] != it[:-1]) | (r[1:] != r[:-1])][:idx.size]
    starts = np.flatnonzero(starts_here)
    group = np.cumsum(starts_here) - 1
    size = np.diff(np.r_[starts, idx.size])[group]
    offset = np.arange(idx.size) - starts[group]
    firsts, seconds = [np.array([], int)], [np.array([], int)]
    for shift in range(1, int(size.max()) if idx.size else 1):
        # Rotating each group by `shift` pairs every label with another of its group exactly once.
        ok = shift < size
        firsts.append(idx[ok])
        seconds.append(idx[(starts[group] + (offset + shift) % size)[ok]])
    return np.concatenate(firsts), np.concatenate(seconds)


def annotator_section(rows: Rows, options: ReportOptions):
    """Per campaign and annotator: accuracy against gold and QC, agreement with peers, reading time,
    and the QC rejections their labels contributed to."""
    ann = rows.data.annotations
    campaign, annotator, item, rnd, batch = (np.array(ann[k], dtype=np.int64) for k in
                                             ("campaign_id", "annotator_id", "item_id", "round", "batch_id"))
    values, current = ann["value"], np.array(ann["current"], dtype=bool)
    codes = {}  # label -> small int, so that comparisons and kappa run on integers
    code = np.array([-1 if v is None else codes.setdefault(label_key(v), len(codes)) for v in values], dtype=np.int64)
    gold = np.array([-2 if (g := rows.gold.get(i)) is None else codes.get(label_key(g), -3) for i in ann["item_id"]])
    dwell = np.array([np.nan if d is None else d for d in ann["dwell_seconds"]], dtype=float)
    first, second = peer_pairs(campaign, item, rnd, current & (code >= 0))
    qc = defaultdict(lambda: [0, 0, set()])  # (campaign, annotator) -> [right, checked, rejected rounds caused]
    checks = {(b, r, i): (decision, v) for b, r, decision, i, v in rows.data.qc if v is not None}
    rejected = {(b, r) for b, r, decision, _, _ in rows.data.qc if decision == "rejected"}
    rounds = defaultdict(set)
    if checks:
        for n in range(rows.n_annotations):
            key = (campaign[n], annotator[n])
            rounds[key].add((batch[n], rnd[n]))
            checked = checks.get((batch[n], rnd[n], item[n]))
            if checked is not None:
                right = values[n] == checked[1]
                qc[key][0] += right
                qc[key][1] += 1
                if checked[0] == "rejected" and not right:
                    qc[key][2].add((batch[n], rnd[n]))
    # Cohen's kappa is a two-rater statistic: one per pair of annotators on the items both labelled,
    # each pair oriented (lower annotator id first) so that its rows line up.
    once = first < second
    first, second = first[once], second[once]
    swap = annotator[first] > annotator[second]
    first, second = np.where(swap, second, first), np.where(swap, first, second)
    kappas = defaultdict(list)  # (campaign, annotator) -> kappas with each peer
    pair_of = np.stack([campaign[first], annotator[first], annotator[second]], axis=1)
    if len(pair_of):
        groups, inverse = np.unique(pair_of, axis=0, return_inverse=True)
        order = np.argsort(inverse, kind="stable")
        bounds = np.r_[0, np.cumsum(np.bincount(inverse.ravel(), minlength=len(groups)))]
        for g, (c, a, b) in enumerate(groups):
            idx = order[bounds[g]:bounds[g + 1]]
            value = cohen_kappa(code[first[idx]], code[second[idx]]).value
            kappas[c, a].append(value)
            kappas[c, b].append(value)
    out = []
    no_peer = "no item was labelled by them and a peer in the same round"
    people = sorted({(c, a) for c, a in zip(ann["campaign_id"], ann["annotator_id"])},
                    key=lambda ca: (ca[0], rows.data.users.get(ca[1], "")))
    for campaign_id, annotator_id in people:
        if campaign_id in rows.position_campaigns:
            continue  # positions, not people: no per-person row
        mine = (campaign == campaign_id) & (annotator == annotator_id)
        now = mine & current
        row = new_row(campaign_id=campaign_id, rater_group=rows.group[campaign_id], annotator_id=annotator_id,
                      annotator=rows.data.users.get(annotator_id, str(annotator_id)), n_annotations=int(now.sum()))
        graded = now & (code >= 0) & (gold != -2)
        put(row, "accuracy_vs_gold", float(np.mean(code[graded] == gold[graded])) if graded.any() else None,
            "no labelled item has gold")
        row["n_gold"] = int(graded.sum())
        right, checked, caused = qc[campaign_id, annotator_id]
        put(row, "accuracy_vs_qc", right / checked if checked else None, "none of their labels was in a QC sample")
        row["n_qc"] = checked
        pairs = mine[first] | mine[second]
        put(row, "peer_agreement", float(np.mean(code[first[pairs]] == code[second[pairs]])) if pairs.any() else None,
            no_peer)
        row["n_peer_pairs"] = int(pairs.sum())
        defined = [k for k in kappas.get((campaign_id, annotator_id), []) if k is not None]
        put(row, "peer_kappa", float(np.mean(defined)) if defined else None,
            "kappa is undefined with every peer (a single category)" if pairs.any() else no_peer)
        times = dwell[now & ~np.isnan(dwell)]
        put(row, "median_reading_seconds", float(np.median(times)) if times.size else None,
            "no reading time recorded (imported labels)")
        row["rounds_caused"] = len(caused)
        row["rejected_rounds"] = len(rounds[campaign_id, annotator_id] & rejected)
        flag(row, [(row["n_gold"], options.min_items, "items with gold")] if row["n_gold"] else [])
        out.append(row)
    return out


# ---------------------------------------------------------------- multiple choice

def answer_column(run):
    """Which prediction column holds lm-eval's acc pick for a log-likelihood run."""
    return "answer" if run["settings"].get("rule") == "acc" else "acc_pick"


def rule_column(run, rule):
    """The prediction column holding a run's pick under `rule` (reports.readable.run_rule)."""
    if rule == "generation" or rule == run["settings"].get("rule"):
        return "answer"
    return answer_column(run) if rule == "acc" else RULE_COLUMNS[rule]


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
    m = k // 2 + 1
    majority = m_of_k_correct([list(a.values()) for a in labels], gold, m) if answered else None
    per_rater = mean_of_raters_accuracy(columns, gold) if answered else None
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

    flag(row, [(len(items), options.min_items, "items")])
    runs = rows.runs_for(task_id, MC_MODES)
    rules = {r["id"]: run_rule(r, options.rule) for r in runs}
    answers = {r["id"]: rows.aligned(r["id"], rule_column(r, rules[r["id"]]), positions) for r in runs}
    flags = {r["id"]: answers[r["id"]] == gold_text for r in runs}  # None (missing) never equals gold
    paired = paired_bootstrap_gaps(human, [flags[r["id"]] for r in runs], options.n_resamples, options.seed + t_index,
                                   options.confidence) if answered else None
    gaps = paired.gaps if paired else []
    replicates = {r["id"]: paired.replicates[:, j] for j, r in enumerate(runs)} if gaps else {}
    model_rows = []
    for j, run in enumerate(runs):
        status = rows.aligned(run["id"], "parse_status", positions)
        loglik = run["mode"] == "loglikelihood"
        n_missing = sum(s is None for s in status)
        mrow = new_row(task=task["slug"], model=rows.run_label[run["id"]], run_id=run["id"], mode=run["mode"],
                       rule=rules[run["id"]], n_items=len(items),
                       n_predictions=len(items) - n_missing, n_missing=n_missing,
                       parse_failures=int(np.sum(status == "unparsable")))
        flag(mrow, [(len(items), options.min_items, "items")])
        put(mrow, "accuracy", float(flags[run["id"]].mean()) if items else None, "no items")
        picks = (("acc", answer_column(run)), ("acc_norm", "answer_norm"), ("acc_per_token", "answer_per_token"))
        for key, column in picks:
            right = rows.aligned(run["id"], column, positions) == gold_text
            put(mrow, key, float(np.mean(right)) if loglik and items else None, "log-likelihood runs only")
        if gaps:
            gap, low, high = gaps[j]
            mrow.update(gap=gap, gap_low=low, gap_high=high, gap_interval=paired.method)
            test = mcnemar_exact(human, flags[run["id"]])
            mrow.update(mcnemar_p=test.pvalue, human_only=test.human_only, model_only=test.model_only)
            put(mrow, "gap_mean_of_raters", per_rater.accuracy - mrow["accuracy"]
                if per_rater.accuracy is not None else None, "no rater answered")
        else:
            for key in ("gap", "gap_low", "gap_high", "mcnemar_p", "gap_mean_of_raters"):
                put(mrow, key, None, no_humans)
        model_rows.append(mrow)
    return {"row": row, "models": model_rows, "items": items, "gold": gold, "human": human, "per_rater": per_rater,
            "columns": columns, "flags": flags, "answers": answers, "runs": runs, "replicates": replicates,
            "rules": {rows.run_label[r["id"]]: rules[r["id"]] for r in runs},
            "positions": position_rows(rows, task, gold, human, runs, flags, answers, rules, options)}


def position_rows(rows: Rows, task, gold, human, runs, flags, answers, rules, options):
    """Accuracy by the gold answer's position (letter), for humans and models, the letters each
    model picks, and accuracy with the gold forced to each position (position-policy runs)."""
    out = []
    by_letter = defaultdict(list)
    for n, g in enumerate(gold):
        by_letter[str(g)].append(n)
    for letter in sorted(by_letter):
        idx = by_letter[letter]
        row = new_row(task=task["slug"], source="gold_position", position=letter, n_items=len(idx))
        put(row, "human_majority", float(human[idx].mean()) if human.size else None, "no human answers")
        row["models"] = {rows.run_label[r["id"]]: float(flags[r["id"]][idx].mean()) for r in runs}
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
        for variant in variants:
            idx = [j for i, j in rows.predictions[run["id"], variant].items() if i in task_items]
            correct = [bool(pred["gold"][j]) and pred["answer"][j] == pred["gold"][j] for j in idx]
            row = new_row(task=task["slug"], source="forced_position", position=variant,
                          model=rows.run_label[run["id"]], run_id=run["id"], rule=run_rule(run, "run"),
                          n_items=len(idx))
            put(row, "accuracy", float(np.mean(correct)) if idx else None, "no predictions")
            out.append(flag(row, [(len(idx), options.min_items, "items")]))
    return out


def overall_rows(results, labels, keys, options: ReportOptions):
    """Unweighted mean over task results of each model's figures; the gap's interval two ways (within
    tasks, and over the pooled items), and the exact McNemar test on the pooled items."""
    out = []
    for label in labels:
        per_task = [(res, m) for res in results for m in res["models"] if m["model"] == label]
        rules = sorted({m["rule"] for _, m in per_task})
        row = new_row(model=label, rule=", ".join(rules), n_tasks=len(per_task),
                      tasks=[res["row"]["task"] for res, _ in per_task])
        for key in keys:
            put(row, key, mean_or_none([m[key] for _, m in per_task]) if all(m[key] is not None for _, m in per_task)
                else None, f"{key} is undefined on some task")
        with_humans = [(res, m) for res, m in per_task if m["run_id"] in res["replicates"]]
        row["n_items"] = sum(len(res["items"]) for res, _ in per_task)
        if with_humans and len(with_humans) == len(per_task):
            low, high = stratified_interval([res["replicates"][m["run_id"]] for res, m in per_task], options.confidence)
            row.update(gap_low=low, gap_high=high, gap_interval=STRATIFIED)
            human = np.concatenate([res["human"] for res, _ in per_task])
            model = np.concatenate([res["flags"][m["run_id"]] for res, m in per_task])
            pooled = paired_bootstrap_gap(human, model, options.n_resamples, options.seed, options.confidence)
            test = mcnemar_exact(human, model)
            row.update(pooled_gap=pooled.gap, pooled_gap_low=pooled.low, pooled_gap_high=pooled.high,
                       pooled_gap_interval=f"{pooled.method} (item-level, pooled over the tasks)",
                       pooled_mcnemar_p=test.pvalue, pooled_human_only=test.human_only,
                       pooled_model_only=test.model_only)
        else:
            for key in ("gap_low", "gap_high", "pooled_gap", "pooled_gap_low", "pooled_gap_high", "pooled_mcnemar_p"):
                put(row, key, None, "no human answers on some task")
        out.append(flag(row, [(row["n_items"], options.min_items, "items")]))
    return out


def mc_section(rows: Rows, options: ReportOptions):
    tasks = [t for t in rows.data.tasks if rows.kind[t["id"]] == "multiple_choice"]
    if not tasks:
        return None
    results = [mc_task(rows, task, n, options) for n, task in enumerate(tasks)]
    labels = list(dict.fromkeys(m["model"] for res in results for m in res["models"]))
    human_keys = ("human_majority", "human_mean_of_raters", "chance")
    overall = new_row(n_tasks=len(results), rule="unweighted mean of the tasks",
                      n_items=sum(r["row"]["n_items"] for r in results))
    for key in human_keys:
        put(overall, key, mean_or_none([r["row"][key] for r in results])
            if all(r["row"][key] is not None for r in results) else None, f"{key} is undefined on some task")
    flag(overall, [(overall["n_items"], options.min_items, "items")])
    model_keys = ("accuracy", "acc", "acc_norm", "acc_per_token", "gap", "gap_mean_of_raters")
    overall["models"] = overall_rows(results, labels, model_keys, options)
    model_rules = {label: rule for r in results for label, rule in r["rules"].items()}

    dimensions = []
    for dim in sorted({r["row"]["dimension"] for r in results}):
        members = [r for r in results if r["row"]["dimension"] == dim]
        row = new_row(dimension=dim, n_tasks=len(members), tasks=[r["row"]["task"] for r in members],
                      n_items=sum(r["row"]["n_items"] for r in members),
                      rule="unweighted mean of the dimension's tasks")
        for key in human_keys:
            put(row, key, mean_or_none([r["row"][key] for r in members]), f"{key} is undefined on every task")
        row["models"] = {label: mean_or_none([m["accuracy"] for r in members for m in r["models"]
                                              if m["model"] == label]) for label in labels}
        row["model_rules"] = model_rules
        dimensions.append(flag(row, [(row["n_items"], options.min_items, "items")]))
    return {
        "tasks": [r["row"] for r in results],
        "models": [m for r in results for m in r["models"]],
        "overall": overall,
        "by_dimension": dimensions,
        "by_domain": domain_rows(rows, results, labels, model_rules, options),
        "positions": [p for r in results for p in r["positions"]],
        "_results": results,
    }


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
                d["models"][rows.run_label[run["id"]]] += res["flags"][run["id"]][mask].tolist()
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
    """Items the human majority gets right and every model misses, and the reverse."""
    lists = {"humans_right_models_wrong": [], "models_right_humans_wrong": []}
    if mc is None:
        return {**lists, "counts": {k: 0 for k in lists}, "limit": limit}
    for res in mc["_results"]:
        if not res["human"].size or not res["runs"]:
            continue
        stacked = np.stack([res["flags"][r["id"]] for r in res["runs"]], axis=1)
        for key, mask in (("humans_right_models_wrong", res["human"] & ~stacked.any(axis=1)),
                          ("models_right_humans_wrong", ~res["human"] & stacked.all(axis=1))):
            for n in np.flatnonzero(mask):
                item = res["items"][n]
                lists[key].append({
                    "task": res["row"]["task"], "item_id": item, "external_id": rows.external_id[item],
                    "gold": res["gold"][n], "human_answers": dict(Counter(map(str, rows.human.get(item, {}).values()))),
                    "model_answers": {rows.run_label[r["id"]]: res["answers"][r["id"]][n] for r in res["runs"]}})
    return {"counts": {k: len(v) for k, v in lists.items()}, "limit": limit, **{k: v[:limit] for k, v in lists.items()}}


# ---------------------------------------------------------------- ratings

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


def human_ceiling(per_item, items):
    """Each rater against the mean of the other raters on the same items (Spearman, Pearson)."""
    raters = sorted({r for i in items for r in per_item.get(i, {})}, key=str)
    out = []
    for rater in raters:
        mine, others = [], []
        for i in items:
            ratings = per_item.get(i, {})
            rest = [as_number(v) for r, v in ratings.items() if r != rater and as_number(v) is not None]
            if rater in ratings and as_number(ratings[rater]) is not None and rest:
                mine.append(as_number(ratings[rater]))
                others.append(float(np.mean(rest)))
        out.append((rater, correlations(mine, others)))
    return out


def rating_quality(rows: Rows, task, spec, runs, options: ReportOptions):
    key, values = spec["key"], rating_values(spec)
    items = rows.items_of[task["id"]]
    per_item = rows.human_answers(key) if key in rows.data.annotations["answers"] else {}
    excluded = excluding_values(spec)
    per_item = {i: {r: v for r, v in a.items() if v not in excluded} for i, a in per_item.items()}
    means = dict(zip(items, mean_rating_per_item([[as_number(v) for v in per_item.get(i, {}).values()]
                                                   for i in items]).means))
    gold = rows.gold_for(task, key)
    row = new_row(task=task["slug"], quality=key, label=spec.get("label", key), scale=values,
                  n_items=len(items), n_rated=sum(m is not None for m in means.values()),
                  n_gold=sum(g is not None for g in gold.values()))
    ceiling = human_ceiling(per_item, items)
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
    row["ceiling_rule"] = "mean over raters of each rater's correlation with the mean of the other raters" + (
        " (raters here are rating positions, not people)" if positions else "")
    flag(row, [(row["n_rated"], options.min_items, "rated items"),
               (len(ceiling), options.min_raters, "raters or positions")])
    models = []
    pred = rows.data.predictions
    for run in runs:
        where = rows.predictions[run["id"], ""]
        on = [i for i in items if i in where]
        ratings = {i: pred["rating"][where[i]] for i in on}
        mrow = new_row(task=task["slug"], quality=key, model=rows.run_label[run["id"]], run_id=run["id"],
                       mode=run["mode"], n_predictions=len(on))
        corr = correlations([ratings[i] for i in on], [means[i] for i in on])
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
            vs_gold = correlations([ratings[i] for i in scored], [as_number(g) for g in truth])
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
        else:
            for name in GOLD_KEYS:
                put(mrow, name, None, no_gold)
        mrow["n_gold"] = len(scored)
        models.append(mrow)
    ratings_by_run = {r["id"]: {i: pred["rating"][j] for i, j in rows.predictions[r["id"], ""].items()} for r in runs}
    return row, models, {"means": means, "ratings": ratings_by_run}


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


# ---------------------------------------------------------------- pairwise

def pairwise_section(rows: Rows, options: ReportOptions):
    tasks = [t for t in rows.data.tasks if rows.kind[t["id"]] == "pairwise"]
    if not tasks:
        return None
    items = rows.data.items
    systems = {i: (a, b) for i, a, b in zip(items["id"], items.get("model_a", []), items.get("model_b", [])) if a and b}
    pred = rows.data.predictions
    out = []
    for task in tasks:
        task_items = [i for i in rows.items_of[task["id"]] if i in systems]
        human = {}
        for i in task_items:
            votes = Counter(PAIRWISE_OUTCOMES.get(str(v)) for v in rows.human.get(i, {}).values() if v is not None)
            ranked = votes.most_common(2)
            if ranked and (len(ranked) == 1 or ranked[0][1] > ranked[1][1]):
                human[i] = ranked[0][0]
        judges = {}
        for run in [r for r in rows.data.runs if r["mode"] == "pairwise" and task["id"] in r["task_ids"]]:
            where = rows.predictions[run["id"], ""]
            judges[rows.run_label[run["id"]]] = {i: PAIRWISE_OUTCOMES.get(pred["answer"][where[i]]) for i in task_items
                                                 if i in where}
        row = new_row(task=task["slug"], n_items=len(task_items), n_human_labelled=len(human),
                      tie_rule="a human tie (no majority) leaves the item out")
        row["judges"] = {}
        for name, verdicts in [("humans", human)] + sorted(judges.items()):
            matches = [(systems[i][0], systems[i][1], o) for i, o in verdicts.items() if o is not None]
            entry = flag(new_row(n_matches=len(matches)), [(len(matches), options.min_items, "matches")])
            entry["win_tie_lose"] = [p.to_dict() for p in win_tie_lose(matches)]
            entry["elo"] = elo(matches).to_dict() if matches else None
            bt = bradley_terry_bootstrap(matches, n_resamples=options.n_resamples, seed=options.seed,
                                         confidence=options.confidence)
            entry["bradley_terry"] = bt.to_dict()
            if name != "humans":
                both = [i for i in verdicts if i in human and verdicts[i] is not None]
                equal = sum(verdicts[i] == human[i] for i in both) / len(both) if both else None
                put(entry, "agreement_with_humans", equal, "no item labelled by both")
                kappa = cohen_kappa([verdicts[i] for i in both], [human[i] for i in both])
                put(entry, "kappa_with_humans", kappa.value, kappa.undefined_reason)
                entry["n_compared"] = len(both)
            row["judges"][name] = entry
        out.append(row)
    return {"tasks": out, "selfchat": selfchat_section(rows.data.dialogues)}


SEED_UTTERANCES = 2  # BotChat's seeds: a real dialogue's first two utterances
LENGTH_FIGURES = ("mean", "std", "median", "min", "max")


def selfchat_section(dialogues):
    """Per system, over the whole dialogues behind the pairs: pass@N as judged by the loop detector
    (a dialogue fails from its loop start on), by people's single-dialogue labels (from the first
    utterance they call machine-written on) and by each judge model (its latest single-dialogue
    run on each dialogue, asked at each N), and the length of the utterances after the seed."""
    if not dialogues or not dialogues["item_id"]:
        return None
    by_system = defaultdict(list)
    for n, system in enumerate(dialogues["system"]):
        by_system[system].append(n)
    labelled = defaultdict(list)  # item -> first flagged index per label
    for item, _, is_ai, first in dialogues["labels"]:
        if not is_ai or isinstance(first, int):  # a "yes" that names no utterance cannot be placed
            labelled[item].append(first if is_ai else None)
    judge_runs = defaultdict(dict)  # "judge:<model>" -> item -> per-N verdicts
    for item, _, model, steps in dialogues.get("judge_verdicts", []):  # in run order: the latest run wins
        judge_runs[f"judge:{model}"][item] = steps
    curves, lengths = [], []
    for system in sorted(by_system, key=str):
        indices = by_system[system]
        utterances = [dialogues["utterances"][n] for n in indices]
        ns = range(1, max(map(len, utterances)) + 1)
        judged = {"loop_detector": [dialogues["loop_start"][n] for n in indices],
                  "humans": [f for n in indices for f in labelled.get(dialogues["item_id"][n], [])]}
        for judge, flagged in judged.items():
            entry = new_row(system=system, judged_by=judge, n_dialogues=len(indices), n_judgements=len(flagged))
            put(entry, "points", [p.to_dict() for p in pass_at_n(flagged, ns)] if flagged else None,
                "no single-dialogue label on these dialogues")
            curves.append(entry)
        mine = {dialogues["item_id"][n] for n in indices}
        for judge, verdicts in sorted(judge_runs.items()):
            on = [steps for item, steps in verdicts.items() if item in mine]
            if not on:
                continue
            entry = new_row(system=system, judged_by=judge, n_dialogues=len(indices), n_judgements=len(on),
                            n_asked=sum(s["decided_by"] == "judge" for steps in on for s in steps),
                            n_unparsable=sum(s["decided_by"] == "judge" and s["parsed"] is None
                                             for steps in on for s in steps))
            entry["points"] = [p.to_dict() for p in pass_at_n_stepwise(
                [{s["n"]: bool(s["passed"]) for s in steps} for steps in on], ns)]
            curves.append(entry)
        after_seed = [u for n in indices for u in dialogues["utterances"][n][dialogues["seed_utterances"][n]:]]
        row = new_row(system=system, n_dialogues=len(indices), n_utterances=len(after_seed))
        for unit, stats in (("words", length_stats([len(u.split()) for u in after_seed])),
                            ("chars", length_stats([len(u) for u in after_seed]))):
            for figure in LENGTH_FIGURES:
                put(row, f"{unit}_{figure}", getattr(stats, figure), "no utterance after the seed")
        lengths.append(row)
    return {"pass_at_n": curves, "utterance_length": lengths,
            "note": "pass@N: share of judgements under which the first N utterances read as human; utterance "
                    "lengths count the utterances after the seed's first two, in words (split on spaces) and "
                    "characters; real dialogues are counted the same way"}


# ---------------------------------------------------------------- provenance and the whole

def provenance(rows: Rows):
    data = rows.data
    items = data.items
    per_task = defaultdict(list)
    for task_id, ext, digest in zip(items["task_id"], items["external_id"], items["content_hash"]):
        per_task[task_id].append(f"{ext}:{digest}")
    gold_lines = sorted(f"{rows.external_id[i]}:{canonical_json(g)}" for i, g in rows.gold.items() if g is not None)
    return {
        "benchmark": data.benchmark,
        "items": [{"task": rows.tasks[t]["slug"], "n_items": len(lines), "sha256": sha256_lines(sorted(lines)),
                   "form_sha256": hashlib.sha256(canonical_json(rows.tasks[t]["form"]).encode()).hexdigest()}
                  for t, lines in sorted(per_task.items(), key=lambda kv: rows.tasks[kv[0]]["slug"])],
        "gold": {"source": "gold_version" if data.gold_version else "source_gold", "version": data.gold_version,
                 "n_labels": len(gold_lines), "sha256": sha256_lines(gold_lines)},
        "guidelines": [{"campaign_id": c["id"], "campaign": c["name"], "version": s["version"],
                        "sha256": hashlib.sha256(s["guidelines"].encode()).hexdigest(), "note": s["note"],
                        "overlap": s["overlap"], "min_reading_seconds": s["min_reading_seconds"]}
                       for c in data.campaigns for s in c["settings"]],
        "models": [{"model": rows.run_label[r["id"]], "run_id": r["id"], "name": r["model__name"],
                    "source": r["model__source"], "sha256": r["model__sha256"], "revision": r["model__revision"],
                    "dtype": r["model__dtype"], "mode": r["mode"], "prompt_version": r["prompt_version"],
                    "prompt_sha256": r["prompt_sha256"], "position_policy": r["position_policy"], "seed": r["seed"],
                    "settings": r["settings"], "finished_at": r["finished_at"],
                    "tasks": [rows.tasks[t]["slug"] for t in r["task_ids"] if t in rows.tasks]} for r in data.runs],
        "code": data.code,
    }


def build_report(data: ReportData, options: ReportOptions = ReportOptions(), generated_at=None) -> dict:
    rows = Rows(data)
    mc = mc_section(rows, options)
    ratings = rating_section(rows, options)
    report = {
        "schema_version": SCHEMA_VERSION,
        "generated_at": (generated_at or datetime.now(timezone.utc)).isoformat(),
        "scope": {"benchmark": data.benchmark["slug"], "campaign_id": data.campaign_id,
                  "gold": data.gold_version["citation"] if data.gold_version else "source",
                  "human_campaigns": sorted(rows.human_campaigns)},
        "gold": gold_block(data),
        "options": asdict(options),
        "rules": RULES,
        "raters": {"positions": [
            {"campaign_id": c, "n_positions": len({a for cc, a in zip(data.annotations["campaign_id"],
                                                                     data.annotations["annotator_id"]) if cc == c}),
             "note": "raters are positions in an imported file, not people: left out of per-person tables"}
            for c in sorted(rows.position_campaigns)]},
        "tasks": [{"task": t["slug"], "name": t["name"], "dimension": t["dimension"], "kind": rows.kind[t["id"]],
                   "primary": t["form"]["primary"], "n_items": len(rows.items_of[t["id"]]),
                   "n_gold": sum(rows.gold[i] is not None for i in rows.items_of[t["id"]])} for t in data.tasks],
        "campaigns": [{"campaign_id": c["id"], "name": c["name"], "protocol": c["protocol"], "source": c["source"],
                       "rater_group": rows.group[c["id"]], "raters_are_positions": c["id"] in rows.position_campaigns}
                      for c in data.campaigns],
        "models": [{"model": rows.run_label[r["id"]], "run_id": r["id"], "name": r["model__name"], "mode": r["mode"],
                    "position_policy": r["position_policy"]} for r in data.runs],
        "agreement": agreement_section(rows, options),
        "annotators": annotator_section(rows, options),
        "multiple_choice": mc,
        "ratings": ratings,
        "pairwise": pairwise_section(rows, options),
        "item_lists": item_lists(rows, mc, options.item_list_limit),
        "provenance": provenance(rows),
    }
    report["how_to_read"] = how_to_read(report)
    return report


def gold_block(data: ReportData):
    """Which gold the report uses and why (see reports.gold); a bare default when the rows carry none."""
    citation = data.gold_version["citation"] if data.gold_version else "source"
    return {"citation": citation, "chosen_by": "request" if data.gold_version else "source",
            "why": "given with the report's data" if data.gold_version else "the gold published with the data",
            "declined": None, "excluded_campaigns": [], "derived_from_campaign": None,
            "method": "source", "left_out": [], **data.gold_choice}


def public(report):
    """The report without the working data kept for plots (keys starting with "_"), each row's
    `undefined` reasons after its figures."""
    if isinstance(report, dict):
        out = {k: public(v) for k, v in report.items() if not k.startswith("_") and k != "undefined"}
        if "undefined" in report:
            out["undefined"] = report["undefined"]
        return out
    if isinstance(report, list):
        return [public(v) for v in report]
    return report
