"""A chunk's items scored by the run's mode, as Prediction field values.

This module imports torch (through the scorers) and is imported only by the process that scores,
on first use: a Celery parent process never loads it, so CUDA is never initialised before the
pool forks.
"""
from __future__ import annotations

import json

from django.conf import settings

from benchmarks.formschema import question, rating_scale

from . import apiclient
from .models import Mode, ModelSpec, ParseStatus
from .prompting import context_and_response, render_mc, variants
from .scorers import (botchat, classifier, dialogbench, diqad, generation, huynh, kodialogbench, loading, loglikelihood, loops,
                      pairwise, prompts, rating, single)


class PermanentError(Exception):
    """No retry can help (the weights on this machine are not the ones registered)."""


def load(spec: ModelSpec):
    """The spec's model, loaded once per process and kept for every later chunk; for a model behind
    an API, a client (`apiscoring.ApiModel`) that records the requests of this chunk."""
    if spec.is_api:
        from .apiscoring import ApiModel

        return ApiModel(spec)
    if spec.trained_by_id:
        return _classifier(spec)
    loaded = loading.get_model(spec.source, cache_dir=settings.MODEL_CACHE_DIR, dtype=spec.dtype, device=spec.device)
    if loaded.info.sha256 != spec.sha256:
        raise PermanentError(f"model {spec.name}: {loaded.info.source} has sha256 {loaded.info.sha256}, "
                             f"registered as {spec.sha256}; register the new files as a new model")
    return loaded


_classifiers: dict = {}


def _classifier(spec: ModelSpec):
    """A classifier trained here, loaded once per process, its folder checked against the registered hash."""
    key = (spec.source, spec.sha256)
    if key not in _classifiers:
        sha = loading.folder_sha256(loading.resolve_source(spec.source))
        if sha != spec.sha256:
            raise PermanentError(f"model {spec.name}: {spec.source} has sha256 {sha}, registered as {spec.sha256}")
        _classifiers[key] = classifier.load_classifier(spec.source)
    return _classifiers[key]


def score_items(run, items) -> list[dict]:
    """Prediction fields (item, variant, options, answer, ...) for each item and option order.
    Prompts are built before the model loads, so a malformed item fails fast."""
    build, score = SCORERS[run.mode]
    if run.model.is_api and (refused := apiclient.mode_refusal(run.model.capabilities, run.mode, run.settings)):
        raise PermanentError(f"model {run.model.name}: {refused}")
    requests = build(run, items)
    if not requests:
        return []
    loaded = load(run.model)
    rows = score(run, loaded, requests)
    if run.model.is_api:
        for row in rows:
            row["api_calls"] = loaded.calls_for(row)
    return rows


def _batch(run) -> dict:
    """batch_size only when the run sets one, so that each scorer keeps its own device default."""
    size = run.settings.get("batch_size")
    return {} if size is None else {"batch_size": size}


# --- multiple choice ---------------------------------------------------------------------


def _mc_requests(run, items):
    return [(item, variant, render_mc(run.prompt_template, item, variant, run.settings, run.mode))
            for item in items for variant in variants(item, item.task.primary_key, run.position_policy)]


def _mc_row(item, variant, answer, **fields):
    correct = (answer == variant.gold) if variant.gold else None
    return {"item": item, "variant": variant.name, "gold": variant.gold, "answer": answer or "", "correct": correct,
            **fields}


def _score_loglikelihood(run, loaded, requests):
    s = run.settings
    by_text = s["continuation"] == "text"
    max_length = run.model.max_length
    if s.get("preset") == dialogbench.PRESET:
        # DialogBench: the option text right after prompt_pretrain, encoded with the tokenizer's
        # special tokens, the input cut to its MAX_LEN.
        mc_items = [loglikelihood.MCItem(context, tuple(v.options.values()), delimiter="", add_special_tokens=True)
                    for _, v, context in requests]
        max_length = min(loglikelihood.max_length_of(loaded.model, loaded.tokenizer, max_length), dialogbench.MAX_LEN)
    elif s.get("preset") == kodialogbench.PRESET:
        # KoDialogBench's continuations: the class, the candidate utterance, or the option's number.
        mc_items = [loglikelihood.MCItem(context, kodialogbench.prompt_and_continuations(
                        item.dialogue, item.fields or {}, v.options, s["style"])[1]) for item, v, context in requests]
    else:
        mc_items = [loglikelihood.MCItem(context, tuple(v.options.values()) if by_text else tuple(v.options))
                    for _, v, context in requests]
    results = loglikelihood.score_shared_context(loaded.model, loaded.tokenizer, mc_items,
                                                 max_length=max_length, **_batch(run))
    rows = []
    for (item, variant, _), result in zip(requests, results):
        keys = list(variant.options)
        options = [
            {"key": key, "source_key": variant.source_keys[key], "text": variant.options[key],
             "context": o.context, "continuation": o.continuation, "logprob": o.logprob,
             "n_tokens": o.n_tokens, "n_chars": o.n_chars, "is_greedy": o.is_greedy}
            for key, o in zip(keys, result.options)
        ]
        picks = {rule: keys[index] for rule, index in result.picks.items()}
        rows.append(_mc_row(item, variant, picks[s["rule"]], options=options, answer_norm=picks["acc_norm"],
                            answer_per_token=picks["per_token"], parse_status=ParseStatus.SCORED))
    return rows


def chat_text(tokenizer, spec: ModelSpec, user: str, system: str = "") -> str:
    """The prompt as the model reads it: in the chat template (the spec's own text when set, which
    `generation.chat_prompt` has no argument for), or plain when the spec or tokenizer has none."""
    template = spec.chat_template or None
    if not spec.use_chat_template or not (template or getattr(tokenizer, "chat_template", None)):
        return user
    if template is None:
        return generation.chat_prompt(tokenizer, user, system or None)
    messages = ([{"role": "system", "content": system}] if system else []) + [{"role": "user", "content": user}]
    return tokenizer.apply_chat_template(messages, chat_template=template, tokenize=False, add_generation_prompt=True)


def _replies(run, loaded, users):
    """({user prompt: the text the model reads}, {that text: greedy reply}); each distinct text is
    generated once. A model behind an API reads the user prompt itself (its server applies the chat
    template, and the system prompt goes in the request)."""
    s = run.settings
    if run.model.is_api:
        replies = loaded.chat(list(users), system=s["system"], max_new_tokens=s["max_new_tokens"])
        return {user: user for user in users}, replies
    texts = {user: chat_text(loaded.tokenizer, run.model, user, s["system"]) for user in users}
    unique = list(dict.fromkeys(texts.values()))
    replies = dict(zip(unique, generation.generate(loaded.model, loaded.tokenizer, unique,
                                                   max_new_tokens=s["max_new_tokens"], chat=False, **_batch(run))
                       if unique else []))
    return texts, replies


def _word_probs(run, loaded, texts, words):
    if run.model.is_api:
        return loaded.word_probs(list(texts), words)
    return rating.word_probs(loaded.model, loaded.tokenizer, texts, words, **_batch(run))


def _score_generate(run, loaded, requests):
    s = run.settings
    shown, replies = _replies(run, loaded, [user for _, _, user in requests])
    rows = []
    preset = s.get("preset") == dialogbench.PRESET
    for item, variant, user in requests:
        text = shown[user]
        reply = replies[text]
        extra = {}
        if preset:
            # DialogBench's own rules: the easy answer is the run's, the hard one is kept beside it.
            hard, letter = dialogbench.extract_choice(reply, s["language"])
            extra["probabilities"] = {"extraction": {"hard": hard, "easy": letter}}
        else:
            letter = generation.extract_option_letter(reply, "".join(variant.options), s["language"])
        options = [{"key": k, "source_key": variant.source_keys[k], "text": t} for k, t in variant.options.items()]
        status = ParseStatus.PARSED if letter else ParseStatus.UNPARSABLE
        # An unparsable reply is wrong, not missing: DialogBench counts it so (and reports how many).
        rows.append(_mc_row(item, variant, letter, options=options, prompt=text, raw_output=reply, parse_status=status,
                            **extra))
    return rows


# --- ratings -----------------------------------------------------------------------------


def _quality(run, task):
    key = run.settings["quality"] or task.primary_key
    spec = question(task.form, key)
    return key, spec.get("label") or key.replace("_", " ").capitalize(), spec


def _selector(run, task, key):
    from benchmarks.models import Item

    fewshot = run.settings["fewshot"]
    if run.settings.get("preset") == huynh.PRESET:
        return _huynh_pool(run, task, key)
    pool = []
    if fewshot["strategy"] != "none" and fewshot["k"] > 0:
        # Only items with a published label can serve as examples (their label is what the shot shows).
        for item in Item.objects.filter(task=task).exclude(source_gold=None).order_by("external_id"):
            value = (item.source_gold or {}).get(key)
            if value is not None:
                context, response = _shown(run, item)
                pool.append(rating.Example(item.external_id, context, response, _label(value)))
    return rating.FewShotSelector(pool, fewshot["strategy"], fewshot["k"], seed=run.seed,
                                  fixed_ids=fewshot.get("fixed_ids") or ())


def _shown(run, item) -> tuple[str, str]:
    """(context, response) as a rating prompt shows them; with dialogue_format "json", the whole
    dialogue as DiQAD's role/content JSON and no separate response."""
    if run.settings.get("dialogue_format") == "json":
        return diqad.dialogue_json(item.dialogue), ""
    if run.settings.get("preset") == huynh.PRESET:
        return huynh.render_item(item.dialogue, (item.fields or {}).get("response")), ""
    return context_and_response(item)


def _huynh_pool(run, task, key):
    """Huynh et al.'s examples: the task's items with their raters' mean rating (rounded to the scale), each
    with its conversation's turns so that `_huynh_shots` can leave out the rated item's conversation."""
    from .selectors import human_ratings

    pool = []
    for item, ratings in human_ratings(task, key):
        value = huynh.example_rating(ratings)
        if value is not None:
            context, response = _shown(run, item)
            answer = _label(value) if run.mode == Mode.RATING else ("yes" if value > _midpoint(task, key) else "no")
            pool.append((rating.Example(item.external_id, context, response, answer), huynh.item_turns(item.dialogue, None)))
    return pool


def _midpoint(task, key):
    values = rating_scale(question(task.form, key)) or [0, 1]
    return (values[0] + values[-1]) / 2


def _huynh_shots(run, pool, item, query, seed):
    """Examples for `item` drawn with `seed`, never from its own conversation."""
    fewshot = run.settings["fewshot"]
    mine = huynh.item_turns(item.dialogue, None)
    allowed = [example for example, turns in pool if not huynh.same_conversation(mine, turns)]
    ids = {example.id for example in allowed}
    selector = rating.FewShotSelector(allowed, fewshot["strategy"], fewshot["k"], seed=seed,
                                      fixed_ids=[i for i in fewshot.get("fixed_ids") or () if i in ids])
    return selector.select(query)


def _label(value) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def _rating_requests(run, items):
    s, selectors, requests = run.settings, {}, []
    for item in items:
        key, label, spec = _quality(run, item.task)
        if run.mode == Mode.RATING and rating_scale(spec) is None:
            raise ValueError(f"task {item.task}: rating mode needs a scale or numeric choice question, {key!r} is "
                             f"{spec['type']}")
        if item.task_id not in selectors:
            selectors[item.task_id] = _selector(run, item.task, key)
        context, response = _shown(run, item)
        query = rating.Example(item.external_id, context, response)
        values = rating_scale(spec) or [None]
        # "Rate the overall of the response" would not read as English.
        named = "overall quality" if key == "overall" else label.lower()
        instruction = s["instruction"].format(quality=named, low=values[0], high=values[-1])
        gold = (item.source_gold or {}).get(key)
        gold = "" if gold is None else _label(gold)
        # With seeds, the examples are drawn once per seed and each draw is a variant of the item.
        for variant, seed in ([(huynh.seed_variant(x), x) for x in s["seeds"]] or [("", run.seed)]):
            if s.get("preset") == huynh.PRESET:
                shots = _huynh_shots(run, selectors[item.task_id], item, query, seed)
            elif variant:
                shots = rating.FewShotSelector(selectors[item.task_id].pool, s["fewshot"]["strategy"],
                                               s["fewshot"]["k"], seed=seed,
                                               fixed_ids=s["fewshot"].get("fixed_ids") or ()).select(query)
            else:
                shots = selectors[item.task_id].select(query)
            built = rating.build_prompt(query, shots, instruction=instruction, shot_template=run.prompt_template,
                                        quality=label)
            requests.append((item, built, spec, gold, variant))
    return requests


def _score_rating(run, loaded, requests):
    if run.settings.get("read") == "generation":
        return _score_rating_generated(run, loaded, requests)
    rows = []
    # One scorer call per scale, as the valid rating tokens depend on it.
    for ratings in {tuple(rating_scale(spec)) for _, _, spec, _, _ in requests}:
        group = [r for r in requests if tuple(rating_scale(r[2])) == ratings]
        words = [str(r) for r in ratings]
        probs = _word_probs(run, loaded, [b.text for _, b, _, _, _ in group], words)
        scores = [rating.rating_from_probs({r: row[w] for r, w in zip(ratings, words)}, run.settings["top_k"])
                  for row in probs]
        for (item, built, _, gold, variant), score in zip(group, scores):
            likeliest = max(sorted(score.raw), key=lambda r: score.raw[r])  # ties: the lower rating
            rows.append({"item": item, "variant": variant, "gold": gold, "prompt": built.text, "rating": score.expected,
                         "answer": str(likeliest), "correct": None, "parse_status": ParseStatus.SCORED,
                         "probabilities": {"raw": _keyed(score.raw), "top": _keyed(score.top)},
                         "fewshot_ids": list(built.example_ids)})
    order = {(r[0].pk, r[4]): i for i, r in enumerate(requests)}
    return sorted(rows, key=lambda row: order[row["item"].pk, row["variant"]])


def _score_rating_generated(run, loaded, requests):
    """The rating generated and read back ("score: N"); an unreadable reply has no rating (and counts
    as wrong against gold)."""
    shown, replies = _replies(run, loaded, [built.text for _, built, _, _, _ in requests])
    rows = []
    for item, built, spec, gold, variant in requests:
        text = shown[built.text]
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


def _score_yes_no(run, loaded, requests):
    words = rating.YES_WORDS + rating.NO_WORDS
    probs = _word_probs(run, loaded, [b.text for _, b, _, _, _ in requests], words)
    rows = []
    for (item, built, _, gold, variant), row in zip(requests, probs):
        p_yes, p_no = sum(row[w] for w in rating.YES_WORDS), sum(row[w] for w in rating.NO_WORDS)
        g = rating.yes_no_from_probs(p_yes, p_no)
        answer = "yes" if g >= 0.5 else "no"
        rows.append({"item": item, "variant": variant, "gold": gold, "prompt": built.text, "rating": g, "answer": answer,
                     "correct": (answer == gold) if gold in ("yes", "no") else None,
                     "parse_status": ParseStatus.SCORED, "probabilities": {"yes": p_yes, "no": p_no, "words": row},
                     "fewshot_ids": list(built.example_ids)})
    return rows


# --- pairwise (BotChat arena) --------------------------------------------------------------


def _sources(item) -> set:
    return {item.meta.get(key) for key in ("source_a", "source_b")} - {None}


def _pairwise_pool(task):
    """(Example, sources) of the task's arena items with a published label, for few-shot prompts."""
    from benchmarks.models import Item

    key = task.primary_key
    pool = []
    for item in Item.objects.filter(task=task).exclude(source_gold=None).order_by("external_id"):
        label = (item.source_gold or {}).get(key)
        second = (item.fields or {}).get("conversation_2")
        if label in pairwise.ANSWER_TEXT and isinstance(second, list) and second:
            pool.append((rating.Example(item.external_id, prompts.render_dialogue(item.dialogue),
                                        prompts.render_dialogue(second), label), _sources(item)))
    return pool


def _pairwise_shots(run, pool, item):
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
    second = prompts.render_dialogue(item.fields["conversation_2"])
    return selector.select(rating.Example(item.external_id, prompts.render_dialogue(item.dialogue), second))


def _pairwise_requests(run, items):
    """(item, loop verdict or None, (prompt A first, prompt B first), few-shot ids); no prompt when
    looping decides."""
    fewshot, pools, requests = run.settings.get("fewshot") or {}, {}, []
    use_shots = fewshot.get("strategy", "none") != "none" and fewshot.get("k", 0) > 0
    for item in items:
        second = (item.fields or {}).get("conversation_2")
        if not isinstance(second, list) or not second:
            raise ValueError(f"item {item.external_id}: fields.conversation_2 must hold the second conversation")
        decided = loops.loop_match(item.meta.get("loop_a"), item.meta.get("loop_b"))
        shots = []
        if use_shots and not decided:
            if item.task_id not in pools:
                pools[item.task_id] = _pairwise_pool(item.task)
            shots = _pairwise_shots(run, pools[item.task_id], item)
        prefix = "".join(pairwise.shot_text(s.context, s.response, s.answer, run.prompt_template) for s in shots)
        template, render = run.prompt_template, prompts.render_dialogue
        if run.settings.get("preset") == botchat.PRESET:
            template = botchat.arena_template(template, bool(item.meta.get("versus_ground_truth")))
            render = botchat.render_conversation
        orders = None if decided else pairwise.pairwise_prompts(render(item.dialogue), render(second), template, prefix)
        requests.append((item, decided, orders, [s.id for s in shots]))
    return requests


def _score_pairwise(run, loaded, requests):
    s = run.settings
    # An item offered in both orders asks the same two questions as its twin (when both read the same
    # examples, as zero-shot): each prompt is generated once.
    texts, replies = _replies(run, loaded, [user for _, _, orders, _ in requests if orders for user in orders])
    rows = []
    for item, decided, orders, shot_ids in requests:
        row = {"item": item, "variant": "", "gold": "", "correct": None, "fewshot_ids": shot_ids}
        if decided:
            loop = {"decided_by": "loop", "loop_a": item.meta.get("loop_a"), "loop_b": item.meta.get("loop_b")}
            rows.append({**row, "answer": decided, "parse_status": ParseStatus.DECIDED, "options": [loop]})
            continue
        steps = []
        parse = botchat.parse_choice if s.get("preset") == botchat.PRESET else pairwise.parse_pairwise
        for name, user, a_position in (("ab", orders[0], 1), ("ba", orders[1], 2)):
            reply = replies[texts[user]]
            label = parse(reply)
            steps.append({"order": name, "a_position": a_position, "prompt": texts[user], "reply": reply,
                          "label": label, "outcome": pairwise.outcome(label, a_position)})
        verdict = pairwise.combine_orders(steps[0]["label"], steps[1]["label"], rule=s["rule"])
        rows.append({**row, "answer": verdict or "", "options": steps, "prompt": steps[0]["prompt"],
                     "raw_output": json.dumps({step["order"]: step["reply"] for step in steps}, ensure_ascii=False),
                     "parse_status": ParseStatus.PARSED if verdict else ParseStatus.UNPARSABLE})
    return rows


# --- single dialogue (BotChat) ----------------------------------------------------------------

SEED_UTTERANCES = 2  # a self-chat's seed, human-written: never asked about (modeleval.selfchat's)


def _single_prompt(run, item, n):
    """The judge's prompt for the first `n` utterances: the study's chats "A: ...<chat_end>" under the
    botchat preset, numbered utterances otherwise."""
    if run.settings.get("preset") == botchat.PRESET:
        return run.prompt_template.format(dialogue=botchat.render_conversation(item.dialogue[:n]))
    return single.single_prompt([turn["text"] for turn in item.dialogue], n, run.prompt_template)


def _single_requests(run, items):
    """(item, [(N, prompt or None)]): a prompt per N the judge is asked at, None where the loop decides.
    Judging the whole dialogue asks once, at its length, loops included (UniEval's judge read every chat)."""
    requests = []
    for item in items:
        length = len(item.dialogue)
        if run.settings.get("judging") == "whole":
            requests.append((item, [(length, _single_prompt(run, item, length))]))
            continue
        seed = (item.meta or {}).get("seed_utterances", SEED_UTTERANCES)
        asked, looped = single.asked_range(length, seed, (item.meta or {}).get("loop_start"))
        steps = [(n, _single_prompt(run, item, n)) for n in asked]
        requests.append((item, steps + [(n, None) for n in looped]))
    return requests


def _single_verdict(run, reply, n) -> dict:
    """What the judge said of the first `n` utterances: parsed ("yes" / "no" / None), the 0-based index it
    names, whether that reading is whole, and the first chat the dialogue fails from."""
    if run.settings.get("preset") == botchat.PRESET:
        reading = botchat.parse_unieval(reply)
        return {"parsed": reading.choice, "index": reading.index,
                "readable": reading.choice is not None and reading.index_readable,
                "first_flagged": botchat.first_flagged(reading)}
    parsed, index = single.parse_single(reply, n)
    # An unreadable reply does not pass: it is counted, never dropped.
    return {"parsed": parsed, "index": index, "readable": parsed is not None,
            "first_flagged": None if parsed == single.NO else 0}


def _score_single(run, loaded, requests):
    # Dialogues sharing their first N utterances (the same seed) ask the same question: generated once.
    texts, replies = _replies(run, loaded, [user for _, steps in requests for _, user in steps if user])
    whole = run.settings.get("judging") == "whole"
    rows = []
    for item, steps in requests:
        verdicts = []
        for n, user in steps:
            if user is None:
                verdicts.append({"n": n, "decided_by": "loop", "loop_start": item.meta.get("loop_start"),
                                 "parsed": single.YES, "index": item.meta.get("loop_start"), "passed": False})
                continue
            reply = replies[texts[user]]
            verdict = _single_verdict(run, reply, n)
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


# --- classifiers trained here ------------------------------------------------------------


def _classify_requests(run, items):
    key = run.settings["quality"]
    return [(item, classifier.render_dialogue(item.dialogue), (item.source_gold or {}).get(key)) for item in items]


def _score_classify(run, loaded, requests):
    """The likeliest class, the expected value over the classes and their probabilities."""
    model, tokenizer = loaded
    labels = [model.config.id2label[i] for i in range(model.config.num_labels)]
    probs = classifier.predict(model, tokenizer, [text for _, text, _ in requests],
                               max_length=run.model.max_length, **_batch(run))
    rows = []
    for (item, text, gold), row in zip(requests, probs):
        answer = labels[max(range(len(row)), key=row.__getitem__)]
        gold = "" if gold is None else _label(gold)
        rows.append({"item": item, "variant": "", "gold": gold, "prompt": text, "answer": answer,
                     "correct": (answer == gold) if gold else None, "parse_status": ParseStatus.SCORED,
                     "rating": sum(float(label) * p for label, p in zip(labels, row)),
                     "probabilities": {"raw": dict(zip(labels, row))}})
    return rows


SCORERS = {
    Mode.LOGLIKELIHOOD: (_mc_requests, _score_loglikelihood),
    Mode.GENERATE: (_mc_requests, _score_generate),
    Mode.RATING: (_rating_requests, _score_rating),
    Mode.YES_NO: (_rating_requests, _score_yes_no),
    Mode.PAIRWISE: (_pairwise_requests, _score_pairwise),
    Mode.SINGLE_JUDGE: (_single_requests, _score_single),
    Mode.CLASSIFY: (_classify_requests, _score_classify),
}
