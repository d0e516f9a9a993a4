"""Single-dialogue judging (mode `single_judge`, BotChat): is any utterance of the dialogue machine-written,
and which one first. Asked anew at each N (the first N utterances shown, "per_n") or once about the whole
dialogue, pass@N read from the index it names ("whole", BotChat's UniEval). A looping dialogue is decided
by its loop from the loop's start on.

Preset: BotChat's UniEval prompt with its examples (`studies.botchat`), its reading of the answer.
"""
from __future__ import annotations

import json

import studies
from studies import vocabulary
from studies.botchat import recipe as botchat

from ..models import Mode, ParseStatus
from ..prompting import check_template as check_fields
from ..scorers import prompts, single
from .base import check_choice, lookup_template
from .plan import Answer, FamilyPlan, Report, Section

MODES = (Mode.SINGLE_JUDGE,)
ORDERS_OPTIONS = False
PLAN = {Mode.SINGLE_JUDGE: FamilyPlan(Report(Section.SINGLE_JUDGE, Answer.VERDICT))}
API_NEEDS = {Mode.SINGLE_JUDGE: "chat"}
INDEX_QUESTION = "first_ai_turn"  # the single-dialogue form's question naming the first machine utterance

TEMPLATES = {
    (Mode.SINGLE_JUDGE, "en", ""): ("single-ai-judge-en/1", prompts.SINGLE_AI_JUDGE),
}
TEMPLATE_FIELDS = {"dialogue"}
DEFAULTS = {Mode.SINGLE_JUDGE: {"max_new_tokens": 16, "system": "", "preset": "", "judging": "per_n"}}

JUDGINGS = ("per_n", "whole")


def api_need(mode, settings) -> str:
    return API_NEEDS[mode]


def unsuited(task, mode, spec, settings=None) -> str | None:
    if spec["type"] == "boolean" and any(q["key"] == INDEX_QUESTION and q["type"] == "index"
                                         for q in task.form.get("questions", [])):
        return None
    return (f"task {task}: single_judge mode needs BotChat's single-dialogue question "
            f"(is any utterance machine-written, and {INDEX_QUESTION!r}) as primary question")


def defaults(mode, language, preset) -> dict:
    recipe = studies.recipe({"preset": preset}, mode)
    return {**DEFAULTS[mode], **(recipe.settings if recipe else {})}


def validate(mode, resolved) -> None:
    check_choice(resolved, "preset", ("", *studies.offering(MODES)))  # no study, or one of this family
    check_choice(resolved, "judging", JUDGINGS)


def default_template(mode, settings) -> tuple[str, str]:
    if recipe := studies.recipe(settings, mode):
        return recipe.template
    return lookup_template(TEMPLATES, mode, settings.get("language", "en"), "")


def check_run_template(mode, template, settings) -> None:
    check_fields(template, TEMPLATE_FIELDS)


def check_run(mode, settings, tasks, item_ids) -> None:
    """Nothing to read in the database: every dialogue can be judged."""


# --- requests ------------------------------------------------------------------------------


def _prompt(run, item, n):
    """The judge's prompt for the first `n` utterances: the study's chats "A: ...<chat_end>" under the
    botchat preset, numbered utterances otherwise."""
    if (recipe := studies.recipe(run.settings, run.mode)) and recipe.render:
        return run.prompt_template.format(dialogue=recipe.render(item.dialogue[:n]))
    return single.single_prompt([turn["text"] for turn in item.dialogue], n, run.prompt_template)


def requests(run, items):
    """(item, [(N, prompt or None)]): a prompt per N the judge is asked at, None where the loop decides.
    Judging the whole dialogue asks once, at its length, loops included (UniEval's judge read every chat)."""
    built = []
    for item in items:
        length = len(item.dialogue)
        if run.settings.get("judging") == "whole":
            built.append((item, [(length, _prompt(run, item, length))]))
            continue
        seed = botchat.seed_utterances(item.meta)
        asked, looped = single.asked_range(length, seed, (item.meta or {}).get("loop_start"))
        steps = [(n, _prompt(run, item, n)) for n in asked]
        built.append((item, steps + [(n, None) for n in looped]))
    return built


def _verdict(run, reply, n) -> dict:
    """What the judge said of the first `n` utterances: parsed ("yes" / "no" / None), the 0-based index it
    names, whether that reading is whole, and the first chat the dialogue fails from."""
    if (recipe := studies.recipe(run.settings, run.mode)) and recipe.parse:
        return recipe.parse(reply)
    parsed, index = single.parse_single(reply, n)
    # An unreadable reply does not pass: it is counted, never dropped.
    return {"parsed": parsed, "index": index, "readable": parsed is not None,
            "first_flagged": None if parsed == vocabulary.NO else 0}


# --- scoring (on the worker) ----------------------------------------------------------------


def score(run, model, requests):
    # Dialogues sharing their first N utterances (the same seed) ask the same question: generated once.
    texts, replies = model.replies([user for _, steps in requests for _, user in steps if user])
    whole = run.settings.get("judging") == "whole"
    rows = []
    for item, steps in requests:
        verdicts = []
        for n, user in steps:
            if user is None:
                verdicts.append({"n": n, "decided_by": "loop", "loop_start": item.meta.get("loop_start"),
                                 "parsed": vocabulary.YES, "index": item.meta.get("loop_start"), "passed": False})
                continue
            reply = replies[texts[user]]
            verdict = _verdict(run, reply, n)
            first = verdict.pop("first_flagged")
            verdicts.append({"n": n, "decided_by": "judge", "prompt": texts[user], "reply": reply, **verdict,
                             "passed": first is None or first >= n})
            if whole:
                # One judgement of the whole dialogue: pass@N at every shorter N follows from its index
                # (metrics.pass_at_n's rule, BotChat's calc_acc).
                verdicts[:0] = [{"n": m, "decided_by": "index", "passed": first is None or first >= m}
                                for m in range(1, n)]
        asked = [v for v in verdicts if v["decided_by"] == "judge"]
        unparsable = sum(not v["readable"] for v in asked)
        status = (ParseStatus.DECIDED if not asked else ParseStatus.UNPARSABLE if unparsable else ParseStatus.PARSED)
        failed = [v["n"] for v in verdicts if not v["passed"]]
        rows.append({"item": item, "variant": "", "gold": "", "correct": None, "options": verdicts,
                     # The answer: the first N at which the dialogue no longer passes, "pass" if none.
                     "answer": str(failed[0]) if failed else "pass", "parse_status": status,
                     "prompt": asked[-1]["prompt"] if asked else "",
                     "raw_output": json.dumps({str(v["n"]): v["reply"] for v in asked}, ensure_ascii=False)})
    return rows
