"""Self-chat dialogues behind arena pairs: pass@N per system and judge, and utterance lengths."""
from __future__ import annotations

from collections import defaultdict

from metrics import WORD_RULE, length_stats, pass_at_n, pass_at_n_stepwise, scripts_counted, word_count

from ..figures import new_row, put
from ..texts import LOOP_RULE, SELFCHAT_NOTE

LENGTH_FIGURES = ("mean", "std", "median", "min", "max")
# Settings of the self-chat runs behind the dialogues that the figures name.
SELFCHAT_SETTINGS_SHOWN = ("token_counter", "loop_similarity", "loop_threshold")


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
    none = [None] * len(dialogues["item_id"])
    token_counts, run_of = dialogues.get("tokens") or none, dialogues.get("run") or none
    runs = dialogues.get("runs", {})
    for system in sorted(by_system, key=str):
        indices = by_system[system]
        utterances = [dialogues["utterances"][n] for n in indices]
        ns = range(1, max(map(len, utterances)) + 1)
        judged = {"loop_detector": [dialogues["loop_start"][n] for n in indices],
                  "humans": [f for n in indices for f in labelled.get(dialogues["item_id"][n], [])]}
        for judge, flagged in judged.items():
            entry = new_row(system=system, judged_by=judge, n_dialogues=len(indices), n_judgements=len(flagged))
            if judge == "loop_detector":
                entry["loop_rule"] = _loop_rule([runs.get(run_of[n], {}) for n in indices])
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
                            n_unparsable=sum(s["decided_by"] == "judge" and not _readable(s)
                                             for steps in on for s in steps))
            entry["points"] = [p.to_dict() for p in pass_at_n_stepwise(
                [{s["n"]: bool(s["passed"]) for s in steps} for steps in on], ns)]
            curves.append(entry)
        after_seed = [u for n in indices for u in dialogues["utterances"][n][dialogues["seed_utterances"][n]:]]
        # BotChat counts chats in tokens: counted when the dialogues were generated, none for real dialogues.
        counted = [token_counts[n] for n in indices]
        tokens = [] if None in counted else [
            c for n, counts in zip(indices, counted, strict=True) for c in counts[dialogues["seed_utterances"][n]:]]
        counters = sorted({str(runs.get(run_of[n], {}).get("token_counter")) for n in indices}) if tokens else []
        row = new_row(system=system, n_dialogues=len(indices), n_utterances=len(after_seed),
                      token_counter=", ".join(counters) or None, words_counted_by=scripts_counted(after_seed))
        for unit, stats, missing in (
                ("words", length_stats([word_count(u) for u in after_seed]), "no utterance after the seed"),
                ("chars", length_stats([len(u) for u in after_seed]), "no utterance after the seed"),
                ("tokens", length_stats(tokens), "no token counts (real dialogues, or runs made before they were "
                                                 "kept)" if None in counted else "no utterance after the seed")):
            for figure in LENGTH_FIGURES:
                put(row, f"{unit}_{figure}", getattr(stats, figure), missing)
        lengths.append(row)
    rules = sorted({c["loop_rule"] for c in curves if c.get("loop_rule")})
    return {"pass_at_n": curves, "utterance_length": lengths,
            "note": SELFCHAT_NOTE(rules="; ".join(rules) or "no self-chat run named", words=WORD_RULE)}


def _readable(verdict) -> bool:
    # Verdicts stored before `readable` was kept were readable when parsed.
    readable = verdict.get("readable")
    return verdict["parsed"] is not None if readable is None else bool(readable)


def _loop_rule(settings) -> str | None:
    """The loop detector's measure and threshold as the self-chat runs set them, None for real dialogues."""
    named = sorted({(s.get("loop_similarity"), s.get("loop_threshold")) for s in settings if s.get("loop_similarity")},
                   key=str)
    return ", ".join(LOOP_RULE(measure=measure, threshold=threshold) for measure, threshold in named) or None
