"""Pairwise tasks: win/tie/lose, Elo and Bradley-Terry per judge (humans and each judge model), and
each judge model's agreement with the humans."""
from __future__ import annotations

from collections import Counter

from metrics import bradley_terry_bootstrap, cohen_kappa, elo, win_tie_lose

from ..contract import ReportOptions
from ..figures import new_row, put
from ..forms import PAIRWISE_OUTCOMES
from ..readable import flag
from ..rows import Rows
from .selfchat import selfchat_section


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
