"""DialogBench-shaped multiple-choice items, prompted as the project's DialogBench preset prompts a base
model (perplexity rule): each task's released pretrain prompt (`studies.dialogbench.recipe.PROMPTS`,
English) with a generated two-speaker dialogue in its {dialogue_content} slot, the option texts as
continuations right after it (no delimiter), encoded with the tokenizer's special tokens. The items of
a task share the prompt's start (its instruction, up to the first dialogue turn); their dialogues,
questions and options differ.

Imported by perf/scoring_vs_lm_eval.py, perf/scoring_on_accelerator.py and the scorer's tests.
"""

from __future__ import annotations

import random

from modeleval.scorers.loglikelihood import MCItem
from studies.dialogbench import recipe as dialogbench

WORDS = ("weather", "train", "dinner", "movie", "ticket", "sister", "office", "rain", "garden", "music", "doctor",
         "holiday", "coffee", "meeting", "book", "phone", "river", "market", "school", "bicycle", "friend", "city")
STATES = ("late", "closed", "great", "too far", "new", "expensive", "crowded", "broken", "lovely", "cancelled")
TURNS = (
    "I think the {a} near the {b} is {s} again, so we should decide soon.",
    "Did you hear that the {a} is {s}? {c} told me this morning.",
    "Honestly, I would rather talk about the {a} than the {b} right now.",
    "If the {a} is {s}, we could go to the {b} instead and meet there.",
    "That is fair, but last time the {a} was {s} and we waited for an hour.",
    "Okay, then let us ask about the {a} first and think about the {b} later.",
    "I am not sure, the {a} was {s} yesterday and nobody could explain why.",
    "Can you call about the {a}? I am stuck at the {b} until six.",
)
NAMES = ("Maya", "Tom", "Priya", "Jonas", "Aiko", "Carlos", "Fatima", "Liam")
EMOTIONS = ("Joy", "Anger", "Fear", "Sadness", "Relief", "Gratitude", "Mild disappointment", "Nervous excitement")
RELATIONS = ("Friends", "Colleagues", "Parent and child", "Doctor and patient", "Neighbours", "Teacher and student")


def _sentence(rng: random.Random) -> str:
    a, b = rng.sample(WORDS, 2)
    return rng.choice(TURNS).format(a=a, b=b, c=rng.choice(NAMES), s=rng.choice(STATES))


def _reply(rng: random.Random) -> str:
    a, b = rng.sample(WORDS, 2)
    return f"Then let us meet at the {a} and talk about the {b} there, it is {rng.choice(STATES)} anyway."


def _four(make) -> list[str]:
    # Four different options: two equal ones tie exactly in the reference, and rounding breaks the tie.
    options: list[str] = []
    while len(options) < 4:
        if (option := make()) not in options:
            options.append(option)
    return options


def _task_fields(task: str, rng: random.Random) -> tuple[dict, list[str]]:
    """The task's prompt fields and four options, the first one the gold answer."""
    word = rng.choice(WORDS)
    if task in ("intent_classification", "slot_filling", "emotion_detection"):
        if task == "emotion_detection":
            return ({"test_question": "What is speaker1's emotion in the last utterance they made?"},
                    rng.sample(EMOTIONS, 4))
        if task == "slot_filling":
            return {"test_question": "Which place does speaker2 mention first?"}, rng.sample(WORDS, 4)
        return ({"test_question": "What does speaker1 intend to do?"},
                [f"Find out whether the {w} is {rng.choice(STATES)}" for w in rng.sample(WORDS, 4)])
    if task == "dialogue_nli":
        return ({"hypothesis": f"speaker1 thinks the {word} is {rng.choice(STATES)}."},
                ["Entailment", "Contradiction", "Neutral", "Not related"])
    if task == "relation_classification":
        return {}, rng.sample(RELATIONS, 4)
    if task == "offensive_detection":
        return {}, ["No, there is no offensive speech", "Yes, speaker1 is offensive", "Yes, speaker2 is offensive",
                    "Yes, both speakers are offensive"]
    if task == "knowledge_grounded_response_generation":
        return ({"knowledge": f"The {word} opens at nine and is {rng.choice(STATES)} on Sundays."},
                _four(lambda: _reply(rng)))
    if task == "personality_grounded_response_generation":
        return ({"persona": "speaker2 is calm, reserved and likes to plan ahead."}, _four(lambda: _reply(rng)))
    if task == "dialogue_infilling":
        return ({"response": f"Yes, the {word} is {rng.choice(STATES)} today."},
                [f"Is the {w} {rng.choice(STATES)} today?" for w in rng.sample(WORDS, 4)])
    if task == "dialogue_summarization":
        return {}, _four(lambda: "The speakers talk about the {} and the {} and agree to meet.".format(
            *rng.sample(WORDS, 2)))
    return {}, _four(lambda: _reply(rng))  # response selection, commonsense-aware response


def dialogbench_items(tasks: int, items: int, seed: int = 0, turns: tuple[int, int] = (6, 12)) -> list[dict]:
    """`items` items shared out over the first `tasks` DialogBench tasks (in `dialogbench.TASK_NAMES`'
    order, contiguous per task), each {"id", "task", "language", "item": MCItem, "gold": option index};
    dialogues of `turns` turns (inclusive range)."""
    slugs = list(dialogbench.TASK_NAMES)[:tasks]
    templates = dialogbench.prompts_for("en", "pretrain")
    rng, out = random.Random(seed), []
    for t, task in enumerate(slugs):
        for k in range(items // len(slugs) + (t < items % len(slugs))):
            dialogue = [{"speaker": f"speaker{1 + i % 2}", "text": _sentence(rng)}
                        for i in range(rng.randint(*turns))]
            fields, options = _task_fields(task, rng)
            order = rng.sample(range(len(options)), len(options))
            # More letters than options: the options take the first ones.
            shown = {letter: options[i] for letter, i in zip(dialogbench.CHOICES, order, strict=False)}
            context = dialogbench.item_prompt(task, fields, dialogue, shown, "pretrain", templates)
            # As the preset asks a base model (modes.multiple_choice._score_loglikelihood).
            item = MCItem(context, tuple(shown.values()), delimiter="", add_special_tokens=True)
            out.append({"id": f"db-{task}-{k:03d}", "task": task, "language": "en", "item": item,
                        "gold": order.index(0)})
    return out
