"""Pairwise tasks: win/tie/lose, Elo and Bradley-Terry per judge (humans and each judge model), BotChat's
arena statistics with each order of showing a result of its own, each judge model's agreement with the
humans and with every other judge."""
from __future__ import annotations

from itertools import combinations

import studies
from metrics import (
    BOTCHAT_MIRROR,
    botchat_outcomes,
    botchat_versus,
    bradley_terry_bootstrap,
    cohen_kappa,
    elo,
    elo_over_orders,
    majority_vote,
    win_tie_lose,
)
from modeleval.modes import Section, reads
from studies.botchat import recipe as botchat

from ..contract import ReportOptions
from ..figures import new_row, put
from ..forms import PAIRWISE_OUTCOMES
from ..readable import flag
from ..rows import Rows
from .selfchat import selfchat_section

# Sequential Elo depends on the order of the matches: the stated order is the items' (their ids: the order they
# were written in), and the mean over this many seeded shuffles stands beside it.
ELO_ORDER = "matches applied in the order of the items' ids (the order the pairs were written in)"
ELO_ORDERS = 100


def pairwise_section(rows: Rows, options: ReportOptions):
    tasks = [t for t in rows.data.tasks if rows.kind[t["id"]] == "pairwise"]
    if not tasks:
        return None
    items = rows.data.items
    systems = {i: (a, b) for i, a, b in zip(items["id"], items.get("model_a", []), items.get("model_b", []),
                                            strict=False) if a and b}
    pred = rows.data.predictions
    out = []
    for task in tasks:
        task_items = sorted(i for i in rows.items_of[task["id"]] if i in systems)
        human = {}
        for i in task_items:
            vote = majority_vote([PAIRWISE_OUTCOMES.get(str(v)) for v in rows.human.get(i, {}).values()
                                  if v is not None])
            if vote.n_votes and not vote.is_tie:
                human[i] = vote.label
        judges, per_order, each_order = {}, judged_orders(rows, task_items, systems), {}
        for run in [r for r in rows.data.runs
                    if reads(r["mode"]).section == Section.PAIRWISE and task["id"] in r["task_ids"]]:
            where = rows.predictions[run["id"], ""]
            label = rows.run_label[run["id"]]
            judges[label] = {i: PAIRWISE_OUTCOMES.get(pred["answer"][where[i]]) for i in task_items if i in where}
            if getattr(studies.recipe(run["settings"], run["mode"]), "counts_each_order", False) \
                    and run["id"] in per_order:
                each_order[label] = per_order[run["id"]].values()
        row = new_row(task=task["slug"], n_items=len(task_items), n_human_labelled=len(human),
                      tie_rule="a human tie (no majority) leaves the item out")
        row["judges"] = {}
        for name, verdicts in [("humans", human)] + sorted(judges.items()):
            if name in each_order:
                # BotChat counts each order of showing as a result: the matches are the judgements of each order
                # (its both / neither a tie, as PAIRWISE_OUTCOMES reads them; an unread answer is no match).
                matches = [(first, second, PAIRWISE_OUTCOMES[outcome])
                           for first, second, outcome in each_order[name] if outcome in PAIRWISE_OUTCOMES]
                matches_from = "each order of showing a match of its own (BotChat's counting)"
            else:
                matches = [(systems[i][0], systems[i][1], o) for i, o in verdicts.items() if o is not None]
                matches_from = ("one label per pair: the raters' strict majority" if name == "humans" else
                                "one verdict per pair: the two orders combined by the run's rule")
            entry = flag(new_row(n_matches=len(matches), matches_from=matches_from),
                         [(len(matches), options.min_items, "matches")])
            entry["win_tie_lose"] = [p.to_dict() for p in win_tie_lose(matches)]
            entry["elo"] = {**elo(matches).to_dict(), "order": ELO_ORDER} if matches else None
            entry["elo_over_orders"] = (elo_over_orders(matches, n_orders=ELO_ORDERS, seed=options.seed).to_dict()
                                        if matches else None)
            bt = bradley_terry_bootstrap(matches, n_resamples=options.n_resamples, seed=options.seed,
                                         confidence=options.confidence)
            entry["bradley_terry"] = bt.to_dict()
            if name != "humans":
                n, equal, kappa = verdict_agreement(verdicts, human)
                put(entry, "agreement_with_humans", equal, "no item labelled by both")
                put(entry, "kappa_with_humans", kappa.value, kappa.undefined_reason)
                entry["n_compared"] = n
            row["judges"][name] = entry
        row["judge_agreement"] = judge_agreement(judges)
        row["botchat"] = botchat_tables(rows, per_order, options)
        out.append(row)
    return {"tasks": out, "selfchat": selfchat_section(rows.data.dialogues)}


def verdict_agreement(first, second):
    """(items both decided, the share of them with the same win / tie / lose, Cohen's kappa) of two
    {item: verdict} readings, a None verdict being no decision."""
    both = [i for i in first if first[i] is not None and second.get(i) is not None]
    equal = sum(first[i] == second[i] for i in both) / len(both) if both else None
    return len(both), equal, cohen_kappa([first[i] for i in both], [second[i] for i in both])


def judge_agreement(judges):
    """Every two judge models, compared as each is with the humans (verdict_agreement); BotChat compares its
    judges with GPT-4's verdicts the same way."""
    out = []
    for (one, first), (two, second) in combinations(sorted(judges.items()), 2):
        n, equal, kappa = verdict_agreement(first, second)
        entry = new_row(judge_a=one, judge_b=two, n_compared=n)
        put(entry, "agreement", equal, "no item decided by both")
        put(entry, "kappa", kappa.value, kappa.undefined_reason)
        out.append(entry)
    return out




def judged_orders(rows, task_items, systems):
    """{run id: {(shown first, shown second): (system shown first, system shown second, BotChat outcome for
    the first)}} from the judge runs' stored steps, as BotChat's analyze.py counts its rows: a pair and its twin
    in the other order ask the same two questions, so each (conversation shown first, shown second) is counted
    once; a pair the loop detector decided counts in both orders with the loop's outcome (DupDetect, the paper's
    section 3.2), as the judge's two answers would."""
    steps = rows.data.pairwise_steps
    if not steps or not steps["run_id"]:
        return {}
    wanted = set(task_items)
    judgements = {}
    n = len(steps["run_id"])
    decided = steps.get("decided") or [None] * n
    for k in range(n):
        run_id, item = steps["run_id"][k], steps["item_id"][k]
        if item not in wanted:
            continue
        model_a, model_b = systems[item]
        side = {1: (steps["source_a"][k] or f"item {item} A", model_a),
                2: (steps["source_b"][k] or f"item {item} B", model_b)}
        found = judgements.setdefault(run_id, {})
        if decided[k] is not None:
            outcome = botchat.LOOP_OUTCOME[decided[k]]
            found[side[1][0], side[2][0]] = (side[1][1], side[2][1], outcome)
            found[side[2][0], side[1][0]] = (side[2][1], side[1][1], BOTCHAT_MIRROR[outcome])
            continue
        for order in ("1", "2"):
            label, a_position = steps[f"label_{order}"][k], steps[f"a_position_{order}"][k]
            first, second = (side[1], side[2]) if str(a_position) == "1" else (side[2], side[1])
            found[first[0], second[0]] = (first[1], second[1], botchat.study_choice(label) or "unknown")
    return judgements


def botchat_tables(rows, per_order, options):
    """Per judge run, BotChat's win / both / neither / lose per system (metrics.botchat_outcomes) and its
    one-against-one Win and Win+Tie rates (metrics.botchat_versus, the paper's Table 2 against a reference) over
    the judgements of each order of showing (judged_orders), the pairs the loop detector decided included."""
    tables = {}
    for run_id, judged in per_order.items():
        judgements = list(judged.values())
        records = botchat_outcomes(judgements)
        table = flag(new_row(n_comparisons=len(judged), n_unread=sum(o == "unknown" for *_, o in judgements),
                             n_decided_by_loop=len(loop_decided(rows, run_id)),
                             win_tie_rule="Win+Tie over the read answers (analyze.py calc_win_rate); the other "
                                          "rates and the score over every comparison (analyze.py's table)"),
                     [(len(judged), options.min_items, "comparisons")])
        table["systems"] = [r.to_dict() for r in records]
        table["versus"] = [r.to_dict() for r in botchat_versus(judgements)]
        tables[rows.run_label[run_id]] = table
    return tables


def loop_decided(rows, run_id):
    """The (shown first, shown second) comparisons of the run that the loop detector decided."""
    steps = rows.data.pairwise_steps
    decided = steps.get("decided") or [None] * len(steps["run_id"])
    keys = set()
    for run, a, b, item, outcome in zip(steps["run_id"], steps["source_a"], steps["source_b"], steps["item_id"],
                                        decided, strict=True):
        if run == run_id and outcome is not None:
            a, b = a or f"item {item} A", b or f"item {item} B"
            keys |= {(a, b), (b, a)}
    return keys
