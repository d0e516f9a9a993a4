"""Ratings (modes `rating` and `yes_no`): a dialogue or a response rated on the task's scale, or
judged yes / no, read from the rating tokens' probabilities (Huynh et al.'s way) or generated and read
back ("score: N"), with few-shot examples chosen at random, from a fixed list or by BM25.

Presets: DiQAD's (`studies.diqad`: its appendix C chat in Chinese, the reply read back as "分数: N") and
Huynh et al.'s (`studies.huynh`: its appendices' FED and DSTC10 layouts, 3 random examples drawn once per
seed, rated by the FED raters' mean, never from the rated item's own conversation).
"""
from __future__ import annotations

import copy
import json

import studies
from benchmarks.formschema import question, rating_scale
from benchmarks.models import Item
from core.errors import Code
from studies.diqad import recipe as diqad
from studies.huynh import recipe as huynh

from .. import human_labels
from ..errors import RunError
from ..models import Mode, ParseStatus
from ..prompting import check_template as check_fields
from ..scorers import prompts, rating
from .base import NO_FEWSHOT, check_choice, label_text, lookup_template, turn_text, uses_fewshot
from .plan import Answer, FamilyPlan, Report, Section

MODES = (Mode.RATING, Mode.YES_NO)
ORDERS_OPTIONS = False
API_NEEDS = {Mode.RATING: "top_logprobs", Mode.YES_NO: "top_logprobs"}

TEMPLATES = {
    (Mode.RATING, "en", ""): ("rating-shot-en/1", prompts.RATING_SHOT),
    (Mode.YES_NO, "en", ""): ("yes-no-shot-en/1", prompts.YES_NO_SHOT),
}
# A study's own template is its recipe's (studies.recipes.Rating): a shot template, or the strings of the layout its
# study prescribes (the run's template records them as JSON).
# The fields of the shot template, and of the instruction the run formats.
TEMPLATE_FIELDS = {"context", "response", "answer", "quality"}
INSTRUCTION_FIELDS = {"quality", "low", "high"}

_COMMON = {"quality": "", "fewshot": NO_FEWSHOT, "preset": "", "dialogue_format": "text", "seeds": []}
DEFAULTS = {
    # read: the rating from the score tokens' probabilities, or generated and read back ("score: N").
    Mode.RATING: {**_COMMON, "top_k": 3, "read": "probabilities", "max_new_tokens": 8, "system": "",
                  "instruction": prompts.RATING_INSTRUCTION},
    Mode.YES_NO: {**_COMMON, "instruction": prompts.YES_NO_INSTRUCTION},
}
READS = ("probabilities", "generation")
PLAN = {Mode.RATING: FamilyPlan(Report(Section.RATINGS, Answer.RATING, stands_in=True)),
        Mode.YES_NO: FamilyPlan(Report(Section.RATINGS, Answer.PROBABILITY, stands_in=True))}


def api_need(mode, settings) -> str:
    return "chat" if mode == Mode.RATING and (settings or {}).get("read") == "generation" else API_NEEDS[mode]


def unsuited(task, mode, spec, settings=None) -> str | None:
    if (settings or {}).get("quality"):
        return None  # the question named by settings.quality is checked by check_run
    if mode == Mode.RATING and rating_scale(spec) is None:
        return (f"task {task}: rating mode needs a scale or numeric choice as primary question "
                f"(or settings.quality naming one), {spec['key']!r} is {spec['type']}")
    return None


def defaults(mode, language, preset) -> dict:
    resolved = dict(DEFAULTS[mode])
    if recipe := studies.recipe({"preset": preset}, mode):
        # The study's settings (DiQAD's appendix C chat, Huynh et al.'s random examples drawn per seed, ...).
        resolved.update(copy.deepcopy(dict(recipe.settings)))
    return resolved


def validate(mode, resolved) -> None:
    check_choice(resolved, "preset", ("", *studies.offering(MODES)))  # no study, or one of this family
    if resolved["dialogue_format"] not in ("text", "json"):
        raise ValueError('dialogue_format must be "text" or "json"')
    if mode == Mode.RATING:
        check_choice(resolved, "read", READS)
    recipe = studies.recipe(resolved, mode)
    if recipe and recipe.layout and resolved["instruction"]:
        raise ValueError(f"the {resolved['preset']} preset writes its study's own instruction; leave instruction empty")
    if recipe:
        recipe.validate(resolved)
    seeds = resolved["seeds"]
    if not isinstance(seeds, list) or not all(isinstance(x, int) and not isinstance(x, bool) for x in seeds) \
            or len(set(seeds)) != len(seeds):
        raise ValueError("seeds must be a list of distinct integers (empty: the run's seed only)")


def _layout(mode, settings):
    """(version, strings) of the layout the run's study prescribes, None where the run lays its prompt out."""
    recipe = studies.recipe(settings, mode)
    return recipe.layout if recipe else None


def default_template(mode, settings) -> tuple[str, str]:
    if (found := _layout(mode, settings)) is not None:
        version, strings = found
        return version, json.dumps(strings, ensure_ascii=False, indent=4)
    if (recipe := studies.recipe(settings, mode)) and recipe.template:
        return recipe.template
    return lookup_template(TEMPLATES, mode, settings.get("language", "en"), "")


def check_run_template(mode, template, settings) -> None:
    if (found := _layout(mode, settings)) is not None:
        try:
            strings = json.loads(template)
        except ValueError:
            strings = None
        if strings != found[1]:
            raise ValueError(f"the {settings['preset']} preset lays its prompt out as its study does: its template "
                             "is the JSON of that layout's strings, not one of the run's own")
        return
    check_fields(template, TEMPLATE_FIELDS)
    check_fields(settings.get("instruction", ""), INSTRUCTION_FIELDS, "instruction")


def check_run(mode, settings, tasks, item_ids) -> None:
    """The question named by settings.quality, and the examples few-shot prompts need."""
    if settings["quality"]:
        for task in tasks:
            try:
                spec = question(task.form, settings["quality"])
            except StopIteration:
                raise RunError(Code.BAD_SETTINGS, f"task {task} has no question {settings['quality']!r}") from None
            if mode == Mode.RATING and rating_scale(spec) is None:
                raise RunError(Code.MODE_UNSUITED, f"task {task}: {spec['key']!r} is neither a scale nor a numeric "
                                                "choice")
    if not uses_fewshot(settings):
        return
    for task in tasks:
        key = settings["quality"] or task.primary_key
        if (recipe := studies.recipe(settings, mode)) and recipe.rated_examples:
            # Huynh et al.'s examples carry the FED raters' ratings (`_huynh_pool`).
            if not human_labels.has_fed_ratings(task):
                raise RunError(Code.NO_EXAMPLES, f"task {task}: the huynh preset's examples take their rating "
                                              "from imported FED ratings (import_ratings --format fed), and "
                                              "there are none")
        elif not Item.objects.filter(task=task).filter(**{f"source_gold__{key}__isnull": False}).exists():
            raise RunError(Code.NO_EXAMPLES, f"task {task}: few-shot examples need items with a published "
                                          f"{key!r} label, and there are none")


# --- requests ------------------------------------------------------------------------------


def context_and_response(item) -> tuple[str, str]:
    """Rating prompts show a context and a response: the item's response field (FED turn level),
    else the dialogue's last turn as the response to the turns before it (FED dialog level)."""
    response = (item.fields or {}).get("response")
    turns = list(item.dialogue)
    if response:
        return prompts.render_dialogue(turns), turn_text(response)
    if not turns:
        raise ValueError(f"item {item.external_id}: an empty dialogue cannot be rated")
    return prompts.render_dialogue(turns[:-1]), turn_text(turns[-1])


def _quality(run, task):
    """(key, label, spec) of the question the run rates; a rating run refuses one that has no scale."""
    key = run.settings["quality"] or task.primary_key
    spec = question(task.form, key)
    if run.mode == Mode.RATING and rating_scale(spec) is None:
        raise ValueError(f"task {task}: rating mode needs a scale or numeric choice question, {key!r} is "
                         f"{spec['type']}")
    return key, spec.get("label") or key.replace("_", " ").capitalize(), spec


def _gold(item, key) -> str:
    gold = (item.source_gold or {}).get(key)
    return "" if gold is None else label_text(gold)


def _selector(run, task, key):
    fewshot = run.settings["fewshot"]
    pool = []
    if uses_fewshot(run.settings):
        # Only items with a published label can serve as examples (their label is what the shot shows).
        for item in Item.objects.filter(task=task).exclude(source_gold=None).order_by("external_id"):
            value = (item.source_gold or {}).get(key)
            if value is not None:
                context, response = _shown(run, item)
                pool.append(rating.Example(item.external_id, context, response, label_text(value)))
    return rating.FewShotSelector(pool, fewshot["strategy"], fewshot["k"], seed=run.seed,
                                  fixed_ids=fewshot.get("fixed_ids") or ())


def _shown(run, item) -> tuple[str, str]:
    """(context, response) as a rating prompt shows them; with dialogue_format "json", the whole
    dialogue as DiQAD's role/content JSON and no separate response."""
    if run.settings.get("dialogue_format") == "json":
        return diqad.dialogue_json(item.dialogue), ""
    return context_and_response(item)


def _huynh_examples(run, task, key) -> list[huynh.Example]:
    """Huynh et al.'s examples: the task's items rated by their FED raters' mean (rounded to the scale); at
    rating level a FED dialog with its rated responses is one example, in yes/no (DSTC10) one item is."""
    rated = []
    for item, ratings in human_labels.fed_ratings(task, key):
        value = huynh.example_rating(ratings)
        if value is not None:
            rated.append(_rated(item, value))
    return huynh.dialogs(rated) if run.mode == Mode.RATING else huynh.singles(rated)


def _rated(item, value=None) -> huynh.Rated:
    fields = item.fields or {}
    # DSTC10's "Background info": the item's knowledge or persona (Table 9's items have none).
    background = fields.get("knowledge") or fields.get("persona")
    return huynh.Rated(item.external_id, tuple(item.dialogue), fields.get("response"), value,
                       turn_text(background) if background else "")


def _huynh_shots(run, examples, query: huynh.Rated, seed) -> list[huynh.Example]:
    """The examples `query` is shown with `seed`: random ones drawn once per seed (`huynh.draw`), the fixed ones
    or BM25's nearest; never one of its own conversation."""
    fewshot = run.settings["fewshot"]
    strategy, k = fewshot["strategy"], fewshot["k"]
    mine = huynh.item_turns(query.dialogue, None)
    if strategy == "none" or k <= 0:
        return []
    if strategy == "random":
        return huynh.draw(examples, k, seed, mine)
    allowed = [e for e in examples if not huynh.same_conversation(mine, e.turns)]
    if strategy == "fixed":
        named = list(fewshot.get("fixed_ids") or ())
        if unknown := [i for i in named if not any(i in e.ids for e in examples)]:
            raise ValueError(f"fixed example ids not among the rated examples: {unknown}")
        return [e for e in allowed if set(e.ids) & set(named)][:k]
    # BM25 over each example's dialogue and its rated responses, as over the query's.
    def as_text(rated):
        return (prompts.render_dialogue(rated[-1].dialogue),
                "\n".join(r.response["text"] for r in rated if r.response is not None))

    pool = [rating.Example(e.ids[0], *as_text(e.rated)) for e in allowed]
    chosen = rating.FewShotSelector(pool, strategy, k).select(rating.Example(query.id, *as_text([query])))
    by_id = {e.ids[0]: e for e in allowed}
    return [by_id[e.id] for e in chosen]


def _huynh_requests(run, items):
    """Huynh et al.'s prompts: Table 8's layout in rating mode (FED), Table 9's in yes/no mode (DSTC10)."""
    s, examples, built_requests = run.settings, {}, []
    for item in items:
        key, label, spec = _quality(run, item.task)
        values = rating_scale(spec) or [0, 1]
        if item.task_id not in examples:
            examples[item.task_id] = _huynh_examples(run, item.task, key) if uses_fewshot(s) else []
        query = _rated(item)
        gold = _gold(item, key)
        for variant, seed in ([(huynh.seed_variant(x), x) for x in s["seeds"]] or [("", run.seed)]):
            shots = _huynh_shots(run, examples[item.task_id], query, seed)
            if run.mode == Mode.RATING:
                task_line = huynh.fed_task(key, label, query.response is None)
                text = huynh.fed_prompt(task_line, shots, query, values[-1])
            else:
                answered = [(r, huynh.yes_no_answer(r.rating, values[0], values[-1])) for e in shots for r in e.rated]
                text = huynh.dstc10_prompt(answered, query)
            built = rating.FewShotPrompt(text, tuple(i for e in shots for i in e.ids))
            built_requests.append((item, built, spec, gold, variant))
    return built_requests


def _diqad_requests(run, items):
    """DiQAD's appendix C: a chat in Chinese with its three examples, each answered "分数: N"."""
    built_requests = []
    for item in items:
        key, _, spec = _quality(run, item.task)
        built_requests.append((item, diqad.ChatPrompt(diqad.chat_messages(item.dialogue)), spec, _gold(item, key), ""))
    return built_requests


# How a study's requests are built (studies.recipes.Rating.builds), where not as the house's few-shot prompts.
BUILDS = {"rated_examples": _huynh_requests, "chat": _diqad_requests}


def requests(run, items):
    recipe = studies.recipe(run.settings, run.mode)
    if recipe and recipe.builds:
        return BUILDS[recipe.builds](run, items)
    s, selectors, built_requests = run.settings, {}, []
    for item in items:
        key, label, spec = _quality(run, item.task)
        if item.task_id not in selectors:
            selectors[item.task_id] = _selector(run, item.task, key)
        context, response = _shown(run, item)
        query = rating.Example(item.external_id, context, response)
        values = rating_scale(spec) or [None]
        # "Rate the overall of the response" would not read as English.
        named = "overall quality" if key == "overall" else label.lower()
        instruction = s["instruction"].format(quality=named, low=values[0], high=values[-1])
        gold = _gold(item, key)
        # With seeds, the examples are drawn once per seed and each draw is a variant of the item.
        for variant, seed in ([(huynh.seed_variant(x), x) for x in s["seeds"]] or [("", run.seed)]):
            if variant:
                shots = rating.FewShotSelector(selectors[item.task_id].pool, s["fewshot"]["strategy"],
                                               s["fewshot"]["k"], seed=seed,
                                               fixed_ids=s["fewshot"].get("fixed_ids") or ()).select(query)
            else:
                shots = selectors[item.task_id].select(query)
            built = rating.build_prompt(query, shots, instruction=instruction, shot_template=run.prompt_template,
                                        quality=label)
            built_requests.append((item, built, spec, gold, variant))
    return built_requests


# --- scoring (on the worker) ----------------------------------------------------------------


def score(run, model, requests):
    if run.mode == Mode.YES_NO:
        return _score_yes_no(run, model, requests)
    if run.settings.get("read") == "generation":
        return _score_rating_generated(run, model, requests)
    return _score_rating(run, model, requests)


def _score_rating(run, model, requests):
    rows = []
    # One scorer call per scale, as the valid rating tokens depend on it.
    for ratings in {tuple(rating_scale(spec)) for _, _, spec, _, _ in requests}:
        group = [r for r in requests if tuple(rating_scale(r[2])) == ratings]
        words = [str(r) for r in ratings]
        probs = model.word_probs([b.text for _, b, _, _, _ in group], words)
        scores = [rating.rating_from_probs({r: row[w] for r, w in zip(ratings, words, strict=True)},
                                           run.settings["top_k"])
                  for row in probs]
        for (item, built, _, gold, variant), score in zip(group, scores, strict=True):
            likeliest = max(sorted(score.raw), key=lambda r: score.raw[r])  # ties: the lower rating
            rows.append({"item": item, "variant": variant, "gold": gold, "prompt": built.text, "rating": score.expected,
                         "answer": str(likeliest), "correct": None, "parse_status": ParseStatus.SCORED,
                         "probabilities": {"raw": _keyed(score.raw), "top": _keyed(score.top)},
                         "fewshot_ids": list(built.example_ids)})
    order = {(r[0].pk, r[4]): i for i, r in enumerate(requests)}
    return sorted(rows, key=lambda row: order[row["item"].pk, row["variant"]])


def _score_rating_generated(run, model, requests):
    """The rating generated and read back ("score: N"); an unreadable reply has no rating (and counts
    as wrong against gold)."""
    shown, replies = model.replies([built.asked for _, built, _, _, _ in requests])
    rows = []
    for item, built, spec, gold, variant in requests:
        text = shown[built.asked]
        reply = replies[text]
        value = diqad.extract_score(reply, rating_scale(spec))
        rows.append({"item": item, "variant": variant, "gold": gold, "prompt": text, "raw_output": reply,
                     "rating": None if value is None else float(value), "answer": "" if value is None else str(value),
                     "correct": None,
                     "parse_status": ParseStatus.UNPARSABLE if value is None else ParseStatus.PARSED,
                     "fewshot_ids": list(built.example_ids)})
    return rows


def _keyed(probs):
    return {str(int(r)): p for r, p in sorted(probs.items())}


def _score_yes_no(run, model, requests):
    words = rating.YES_WORDS + rating.NO_WORDS
    probs = model.word_probs([b.text for _, b, _, _, _ in requests], words)
    rows = []
    for (item, built, _, gold, variant), row in zip(requests, probs, strict=True):
        p_yes, p_no = sum(row[w] for w in rating.YES_WORDS), sum(row[w] for w in rating.NO_WORDS)
        g = rating.yes_no_from_probs(p_yes, p_no)
        answer = "yes" if g >= 0.5 else "no"
        rows.append({"item": item, "variant": variant, "gold": gold, "prompt": built.text, "rating": g,
                     "answer": answer,
                     "correct": (answer == gold) if gold in ("yes", "no") else None,
                     "parse_status": ParseStatus.SCORED, "probabilities": {"yes": p_yes, "no": p_no, "words": row},
                     "fewshot_ids": list(built.example_ids)})
    return rows
