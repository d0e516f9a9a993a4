"""A card per judge run: its agreement with the people (kappa for labels, Spearman for ratings, with intervals),
the alternative annotator test's verdict, the human labels it saves under PPI++ (realised, and expected from the
pilot's squared correlation, held at a factor of two where the judge is no better than the model judged),
position-swap consistency for pairwise judges, where its verdicts came from (run here or imported), and the
guideline version the gold was made under."""
from __future__ import annotations

from collections import Counter, defaultdict

import numpy as np

from metrics import as_number, majority_label
from metrics.alt_test import EPSILON, alt_test
from metrics.judge_card import NO_BETTER_FACTOR, judge_agreement, label_savings, swap_consistency
from modeleval import modes
from studies.vocabulary import outcome

from ..contract import ReportOptions
from ..figures import new_row
from ..readable import flag
from ..rows import Rows
from ..texts import (
    ACCURACY_OF,
    GOLD_MADE_UNDER,
    GOLD_MADE_UNDER_VERSIONS,
    GOLD_OUT_OF_SCOPE,
    SHARE_LABELLED,
    VERDICT_AND,
    VERDICT_BUT,
    VERDICT_UNDEFINED,
)
from .annotators import label_key
from .human_anchored import campaign_labels, run_answers

LABEL_MODES = modes.modes_where(section=modes.Section.MULTIPLE_CHOICE)
RATING_MODES = modes.modes_where(section=modes.Section.RATINGS)
PAIRWISE_MODES = modes.modes_where(section=modes.Section.PAIRWISE)
KINDS = ("multiple_choice", "rating", "pairwise", "other")
DEFAULT_KIND = "skilled"  # the campaign's annotator kind where none is set (as the alternative annotator section)


def judge_card_section(rows: Rows, options: ReportOptions):
    """Per task and judge run, its card (see the module's text), by task then judge."""
    cards = []
    for task in rows.data.tasks:
        if rows.kind[task["id"]] in KINDS:
            cards += rows.per_task("judge_cards", task["id"], lambda task=task: task_cards(rows, task, options))
    return {"cards": cards, "gold": gold_guidelines(rows), "no_better_factor": NO_BETTER_FACTOR,
            "confidence": options.confidence}


def gold_guidelines(rows: Rows):
    """Which gold the cards' figures use and the guideline versions it was made under: a frozen version's
    campaign's, or none of ours for the data's published gold."""
    version = rows.data.gold_version
    if not version:
        return {"citation": "source", "guideline_versions": [], "campaign": None,
                "text": "the gold published with the data: made under the data's own guidelines, none of ours"}
    campaign = next((c for c in rows.data.campaigns if c["id"] == version.get("campaign_id")), None)
    used = sorted({b["settings__version"] for b in rows.data.batches if b["campaign_id"] == version.get("campaign_id")
                   and b.get("settings__version") is not None})
    name = campaign["name"] if campaign else None
    made_under = GOLD_MADE_UNDER if len(used) == 1 else GOLD_MADE_UNDER_VERSIONS
    text = (made_under(citation=version["citation"], campaign=name, versions=", ".join(map(str, used)) or "unknown")
            if campaign else GOLD_OUT_OF_SCOPE(citation=version["citation"]))
    return {"citation": version["citation"], "guideline_versions": used, "campaign": name, "text": text}


def _judges(rows: Rows, task_id, kind):
    wanted = {"rating": RATING_MODES, "pairwise": PAIRWISE_MODES}.get(kind, LABEL_MODES)
    return rows.runs_for(task_id, wanted)


def _origin(run):
    settings = run.get("settings") or {}
    imported = settings.get("imported")
    if imported:
        return {"origin": "imported", "file": imported.get("file"), "sha256": imported.get("sha256"),
                "judge_settings": settings.get("judge_settings") or {}}
    return {"origin": "run here", "mode": run["mode"], "prompt_version": run.get("prompt_version")}


def task_cards(rows: Rows, task, options: ReportOptions):
    kind = rows.kind[task["id"]]
    by_campaign = campaign_labels(rows, task["id"])
    people = defaultdict(dict)  # item -> {annotator: value}, over the campaigns whose raters are people
    for campaign_id, labels in by_campaign.items():
        if campaign_id in rows.position_campaigns:
            continue
        for item, by in labels.items():
            people[item].update(by)
    settings = [rows.campaigns[c]["settings"][-1] for c in by_campaign if rows.campaigns[c]["settings"]]
    annotator_kind = next((s.get("annotator_kind") for s in settings if s.get("annotator_kind")), DEFAULT_KIND)
    ratings = kind == "rating"
    if ratings:
        figure = {i: float(np.mean(v)) for i, by in people.items()
                  if (v := [n for x in by.values() if (n := as_number(x)) is not None])}
    else:
        figure = {i: m for i, by in people.items() if (m := majority_label([label_key(v) for v in by.values()]))
                  is not None}
    gold = {i: label_key(g) for i in rows.items_of[task["id"]] if (g := rows.gold.get(i)) is not None}
    judges = _judges(rows, task["id"], kind)
    # The runs' answers on this task's items: a run that judged other tasks too is counted and compared here on
    # this one's (its other answers belong to those tasks' cards).
    items = rows.items_of[task["id"]]
    answers = {r["id"]: {i: a for i in items if (a := whole.get(i)) is not None}
               for r in judges for whole in [run_answers(rows, r["id"], "rating" if ratings else "answer")]}
    cards = []
    for judge in judges:
        j = answers[judge["id"]] if ratings else {i: label_key(v) for i, v in answers[judge["id"]].items()}
        card = new_row(task=task["slug"], kind=kind, judge=rows.run_label[judge["id"]], judge_run_id=judge["id"],
                       n_judged=len(j), n_labelled=sum(1 for i in figure if i in j), **_origin(judge))
        both = [i for i in figure if i in j]
        card["agreement"] = judge_agreement([figure[i] for i in both], [j[i] for i in both], ratings=ratings,
                                            confidence=options.confidence, n_resamples=options.n_resamples,
                                            seed=options.seed).to_dict()
        card["alt_test"] = _alt_test(people, j, ratings, annotator_kind, options)
        card["savings"] = _savings(rows, task, kind, figure, set(people), j, gold, judges, answers, judge, options)
        card["swap"] = _swap(rows, judge["id"]) if kind == "pairwise" else None
        card["verdict"] = _verdict(card)
        flag(card, [(card["n_labelled"], options.min_items, "labelled items")])
        cards.append(card)
    return cards


def _alt_test(people, judge, ratings, annotator_kind, options):
    human = defaultdict(dict)
    for item, by in people.items():
        for annotator, value in by.items():
            human[annotator][item] = as_number(value) if ratings else label_key(value)
    result = alt_test(human, judge, epsilon=EPSILON.get(annotator_kind, EPSILON[DEFAULT_KIND]),
                      scoring="neg_rmse" if ratings else "accuracy", alpha=round(1 - options.confidence, 10))
    return {"annotator_kind": annotator_kind, "epsilon": result.epsilon, "scoring": result.scoring,
            "winning_rate": result.winning_rate, "advantage_probability": result.advantage_probability,
            "passed": result.passed, "n_annotators": result.n_annotators, "n_items": result.n_items,
            "undefined_reason": result.undefined_reason}


def _savings(rows, task, kind, figure, labelled_items, j, gold, judges, answers, judge, options):
    """The labels the judge saves on the people's figure, and (with gold) on each other run's accuracy. An item
    people labelled is never a judge-only one, even where their figure is undefined (a tied vote)."""
    out = []
    judged = [i for i in rows.items_of[task["id"]] if i in j]
    labelled = [i for i in judged if i in figure]
    if kind == "rating":
        estimand, y = "mean human rating", {i: figure[i] for i in labelled}
        stand = {i: float(j[i]) for i in judged}
    elif kind == "multiple_choice" and gold:
        labelled = [i for i in labelled if i in gold]
        judged = [i for i in judged if i in gold]
        estimand, y = "human majority accuracy", {i: float(figure[i] == gold[i]) for i in labelled}
        stand = {i: float(j[i] == gold[i]) for i in judged}
    else:
        main = Counter(figure[i] for i in labelled).most_common(1)
        main = main[0][0] if main else None
        estimand, y = SHARE_LABELLED(label=main), {i: float(figure[i] == main) for i in labelled}
        stand = {i: float(j[i] == main) for i in judged}
    if labelled:
        unlabelled = [stand[i] for i in judged if i not in labelled_items]
        out.append(label_savings([y[i] for i in labelled], [stand[i] for i in labelled], unlabelled,
                                 estimand=estimand, confidence=options.confidence).to_dict())
    if kind != "multiple_choice" or not gold:
        return out
    for model in judges:
        if model["id"] == judge["id"]:
            continue
        m = {i: label_key(v) for i, v in answers[model["id"]].items()}
        both = [i for i in j if i in m]
        with_gold = [i for i in both if i in gold]
        without_gold = [i for i in both if i not in gold]
        if len(with_gold) < 2:
            continue
        judge_accuracy = float(np.mean([j[i] == gold[i] for i in with_gold]))
        model_accuracy = float(np.mean([m[i] == gold[i] for i in with_gold]))
        saving = label_savings([float(m[i] == gold[i]) for i in with_gold], [float(m[i] == j[i]) for i in with_gold],
                               [float(m[i] == j[i]) for i in without_gold],
                               estimand=ACCURACY_OF(model=rows.run_label[model["id"]]),
                               confidence=options.confidence, judge_accuracy=judge_accuracy,
                               model_accuracy=model_accuracy)
        out.append(saving.to_dict())
    return out


def _swap(rows, run_id):
    steps = rows.data.pairwise_steps
    if not steps or not steps.get("run_id"):
        return None
    decided = steps.get("decided") or [None] * len(steps["run_id"])
    verdicts = []
    for k, run in enumerate(steps["run_id"]):
        if run != run_id or decided[k] is not None:
            continue
        a = [outcome(steps[f"label_{o}"][k], int(steps[f"a_position_{o}"][k] or 0)) if steps[f"a_position_{o}"][k]
             else None for o in ("1", "2")]
        verdicts.append(tuple(a))
    return swap_consistency(verdicts).to_dict() if verdicts else None


def _verdict(card):
    """Both answers in a sentence: may the judge replace the people, and how many labels it saves."""
    test = card["alt_test"]
    passed = test["passed"]
    first = ("passes the alternative annotator test" if passed else "fails the alternative annotator test"
             if passed is False else "has no alternative annotator test verdict")
    people = next((s for s in card["savings"] if s["estimand"].startswith(("mean human", "human", "share"))), None)
    if people is None or people["realised_saved"] is None:
        why = ("every judged item is labelled: no label is left to save" if people and people["N"] == 0
               else (people or {}).get("undefined_reason") or "no item is labelled")
        return VERDICT_UNDEFINED(test=first, why=why)
    saved = people["realised_saved"]
    joint = VERDICT_AND if (passed and saved > 0) or (not passed and saved <= 0) else VERDICT_BUT
    return joint(test=first, kind=test["annotator_kind"], epsilon=test["epsilon"], saved=f"{saved:.0%}",
                 estimand=people["estimand"], rho=people["rho_squared"] if people["rho_squared"] is None
                 else round(people["rho_squared"], 3))
