"""Pairwise judging (mode `pairwise`, BotChat's arena): which of two conversations involves a machine,
asked in both orders of showing, the two verdicts combined by the run's rule. Items come from
`arena.make_pairs`: conversation 1 is the dialogue, conversation 2 `fields.conversation_2`; a pair
decided by looping (`meta.loop_a` / `loop_b`) is never asked.

Preset: BotChat's arena prompt (`studies.botchat`), its layout of the conversations and its reading of
the answer.
"""
from __future__ import annotations

import json

import studies
from benchmarks.formschema import option_values
from benchmarks.models import Item
from core.errors import Code
from studies import vocabulary

from ..errors import RunError
from ..models import Mode, ParseStatus
from ..prompting import check_template as check_fields
from ..scorers import loops, pairwise, prompts, rating
from .base import NO_FEWSHOT, check_choice, lookup_template, uses_fewshot
from .plan import Answer, FamilyPlan, Report, Section

# The two orders of a pair share their prompts with the pair shown the other way round (another item): a chunk is
# scored in one call so that each prompt is generated once (modeleval.runner.score_in_steps).
SHARES_PROMPTS_ACROSS_ITEMS = True
MODES = (Mode.PAIRWISE,)
ORDERS_OPTIONS = False
PLAN = {Mode.PAIRWISE: FamilyPlan(Report(Section.PAIRWISE, Answer.VERDICT))}
API_NEEDS = {Mode.PAIRWISE: "chat"}
LABELS = vocabulary.LABELS
SECOND = "conversation_2"  # the field holding an arena item's second conversation

TEMPLATES = {
    (Mode.PAIRWISE, "en", ""): ("pairwise-ai-judge-en/1", prompts.PAIRWISE_AI_JUDGE),
}
TEMPLATE_FIELDS = {"conversation_1", "conversation_2"}
# rule: how the verdicts of the two orders combine (scorers.pairwise.combine_orders).
DEFAULTS = {Mode.PAIRWISE: {"max_new_tokens": 16, "system": "", "rule": "consistent", "preset": "",
                            "fewshot": NO_FEWSHOT}}
RULES = ("consistent", "sum")


def api_need(mode, settings) -> str:
    return API_NEEDS[mode]


def unsuited(task, mode, spec, settings=None) -> str | None:
    if spec["type"] == "single_choice" and isinstance(spec.get("options"), list) \
            and {str(v) for v in option_values(spec)} == set(LABELS):
        return None
    return (f"task {task}: pairwise mode needs BotChat's question (which conversation "
            f"involves a machine: {', '.join(LABELS)}) as primary question")


def defaults(mode, language, preset) -> dict:
    recipe = studies.recipe({"preset": preset}, mode)
    return {**DEFAULTS[mode], **(recipe.settings if recipe else {})}


def validate(mode, resolved) -> None:
    check_choice(resolved, "rule", RULES)
    check_choice(resolved, "preset", ("", *studies.offering(MODES)))  # no study, or one of this family


def default_template(mode, settings) -> tuple[str, str]:
    if recipe := studies.recipe(settings, mode):
        return recipe.template
    return lookup_template(TEMPLATES, mode, settings.get("language", "en"), "")


def check_run_template(mode, template, settings) -> None:
    check_fields(template, TEMPLATE_FIELDS)


def check_run(mode, settings, tasks, item_ids) -> None:
    """Few-shot examples need labelled arena items; every item needs its second conversation."""
    if uses_fewshot(settings):
        labelled = set()
        for task in tasks:
            ids = set(Item.objects.filter(task=task, **{f"source_gold__{task.primary_key}__in": LABELS})
                      .values_list("external_id", flat=True))
            labelled |= ids
            if not ids:
                raise RunError(Code.NO_EXAMPLES, f"task {task}: few-shot examples need arena items with a published "
                                              f"{task.primary_key!r} label, and there are none")
        if unknown := sorted(set(settings["fewshot"].get("fixed_ids") or ()) - labelled):
            raise RunError(Code.BAD_SETTINGS, f"fixed few-shot ids not among the labelled items: {unknown}")
    if alone := Item.objects.filter(pk__in=item_ids).exclude(fields__has_key=SECOND).count():
        raise RunError(Code.MODE_UNSUITED, f"pairwise mode needs two conversations per item: {alone} items have no "
                                        f"fields.{SECOND} (build them with make_pairs)")


# --- requests ------------------------------------------------------------------------------


def _sources(item) -> set:
    return {item.meta.get(key) for key in ("source_a", "source_b")} - {None}


def _pool(task):
    """(Example, sources) of the task's arena items with a published label, for few-shot prompts."""
    key = task.primary_key
    pool = []
    for item in Item.objects.filter(task=task).exclude(source_gold=None).order_by("external_id"):
        label = (item.source_gold or {}).get(key)
        second = (item.fields or {}).get(SECOND)
        if label in vocabulary.ANSWER_TEXT and isinstance(second, list) and second:
            pool.append((rating.Example(item.external_id, prompts.render_dialogue(item.dialogue),
                                        prompts.render_dialogue(second), label), _sources(item)))
    return pool


def _shots(run, pool, item):
    """Examples for `item`, never itself nor a pair sharing one of its dialogues (its mirrored twin
    above all): a shot holding the test dialogue with its answer would give the answer away."""
    fewshot = run.settings["fewshot"]
    fixed = fewshot.get("fixed_ids") or ()
    if unknown := sorted(set(fixed) - {example.id for example, _ in pool}):
        raise ValueError(f"fixed example ids not among the labelled items: {unknown}")
    mine = _sources(item)
    allowed = [example for example, sources in pool
               if example.id != item.external_id and not (mine & sources)]
    ids = {example.id for example in allowed}
    selector = rating.FewShotSelector(allowed, fewshot["strategy"], fewshot["k"], seed=run.seed,
                                      fixed_ids=[i for i in fixed if i in ids])
    second = prompts.render_dialogue(item.fields[SECOND])
    return selector.select(rating.Example(item.external_id, prompts.render_dialogue(item.dialogue), second))


def requests(run, items):
    """(item, loop verdict or None, (prompt A first, prompt B first), few-shot ids); no prompt when
    looping decides."""
    pools, built = {}, []
    use_shots = uses_fewshot(run.settings)
    for item in items:
        second = (item.fields or {}).get(SECOND)
        if not isinstance(second, list) or not second:
            raise ValueError(f"item {item.external_id}: fields.{SECOND} must hold the second conversation")
        decided = loops.loop_match(item.meta.get("loop_a"), item.meta.get("loop_b"))
        shots = []
        if use_shots and not decided:
            if item.task_id not in pools:
                pools[item.task_id] = _pool(item.task)
            shots = _shots(run, pools[item.task_id], item)
        prefix = "".join(pairwise.shot_text(s.context, s.response, s.answer, run.prompt_template) for s in shots)
        template, render = run.prompt_template, prompts.render_dialogue
        if recipe := studies.recipe(run.settings, run.mode):
            template = recipe.arena_template(template, bool(item.meta.get("versus_ground_truth")))
            render = recipe.render or render
        orders = None if decided else pairwise.pairwise_prompts(render(item.dialogue), render(second), template, prefix)
        built.append((item, decided, orders, [s.id for s in shots]))
    return built


# --- scoring (on the worker) ----------------------------------------------------------------


def score(run, model, requests):
    s = run.settings
    # An item offered in both orders asks the same two questions as its twin (when both read the same
    # examples, as zero-shot): each prompt is generated once.
    texts, replies = model.replies([user for _, _, orders, _ in requests if orders for user in orders])
    rows = []
    for item, decided, orders, shot_ids in requests:
        row = {"item": item, "variant": "", "gold": "", "correct": None, "fewshot_ids": shot_ids}
        if decided:
            loop = {"decided_by": "loop", "loop_a": item.meta.get("loop_a"), "loop_b": item.meta.get("loop_b")}
            rows.append({**row, "answer": decided, "parse_status": ParseStatus.DECIDED, "options": [loop]})
            continue
        steps = []
        parse = getattr(studies.recipe(s, run.mode), "parse", None) or pairwise.parse_pairwise
        for name, user, a_position in (("ab", orders[0], 1), ("ba", orders[1], 2)):
            reply = replies[texts[user]]
            label = parse(reply)
            steps.append({"order": name, "a_position": a_position, "prompt": texts[user], "reply": reply,
                          "label": label, "outcome": vocabulary.outcome(label, a_position)})
        verdict = pairwise.combine_orders(steps[0]["label"], steps[1]["label"], rule=s["rule"])
        rows.append({**row, "answer": verdict or "", "options": steps, "prompt": steps[0]["prompt"],
                     "raw_output": json.dumps({step["order"]: step["reply"] for step in steps}, ensure_ascii=False),
                     "parse_status": ParseStatus.PARSED if verdict else ParseStatus.UNPARSABLE})
    return rows
