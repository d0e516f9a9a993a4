"""KoDialogBench (Jang et al., LREC-COLING 2024): Korean dialogue comprehension and response selection by
log-likelihood, zero-shot, in its three prompting styles, with Korean templates only.

- Speakers are numbered by first appearance and shown as "화자1: ...", "화자2: ...".
- Comprehension: the dialogue, "질문: " and the item's own Korean question, then per style
  - direct: "정답:" and each verbalised class is scored as the continuation;
  - class_description: the classes listed after "보기: ", then "정답:" and each class is scored;
  - option_numbers: the options numbered "1. ...", then "정답:" and each number is scored.
- Response selection: the dialogue ends with the next speaker's tag ("화자2:") and each candidate
  utterance is the continuation (direct and class_description); option_numbers lists the candidates
  and scores their numbers.
- A Korean item never falls back to an English template: an item without its Korean question is
  refused. At most 19 classes (the largest set, dialog acts, has 19).
- Averages (`averages`): the mean of the task means (Table 4: six comprehension tasks) and the mean
  of the test sets.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

PRESET = "kodialogbench"
STYLES = ("direct", "class_description", "option_numbers")
MAX_CLASSES = 19
SPEAKER = "화자{n}: {text}"
QUESTION = "질문: {question}"
CLASSES = "보기: {classes}"
ANSWER = "정답:"
NEXT_SPEAKER = "화자{n}:"
# What a run stores as its template: the markers above, by name.
TEMPLATES = {"speaker": SPEAKER, "question": QUESTION, "classes": CLASSES, "answer": ANSWER,
             "next_speaker": NEXT_SPEAKER}


def speaker_numbers(turns: Sequence[Mapping], extra: Sequence[str] = ()) -> dict[str, int]:
    numbers: dict[str, int] = {}
    for speaker in [t["speaker"] for t in turns] + list(extra):
        numbers.setdefault(speaker, len(numbers) + 1)
    return numbers


def render_dialogue(turns: Sequence[Mapping], numbers: Mapping[str, int]) -> str:
    return "\n".join(SPEAKER.format(n=numbers[t["speaker"]], text=t["text"]) for t in turns)


def prompt_and_continuations(turns: Sequence[Mapping], fields: Mapping, options: Mapping[str, str],
                             style: str) -> tuple[str, tuple[str, ...]]:
    """(the prompt, each option's continuation after a " " delimiter) for one item in one style."""
    if style not in STYLES:
        raise ValueError(f"KoDialogBench style must be one of {STYLES}")
    if not 2 <= len(options) <= MAX_CLASSES:
        raise ValueError(f"KoDialogBench items have 2 to {MAX_CLASSES} classes or candidates, not {len(options)}")
    texts = list(options.values())
    numbered = "\n".join(f"{n}. {text}" for n, text in enumerate(texts, start=1))
    next_speaker = fields.get("next_speaker")
    numbers = speaker_numbers(turns, [next_speaker] if next_speaker else [])
    dialogue = render_dialogue(turns, numbers)
    if next_speaker:  # response selection
        if style == "option_numbers":
            question = fields.get("question")
            if not question:
                raise ValueError("a KoDialogBench response-selection item asked by option numbers needs its Korean "
                                 "question (fields.question)")
            lines = [dialogue, QUESTION.format(question=question), numbered, ANSWER]
            return "\n".join(lines), tuple(str(n) for n in range(1, len(texts) + 1))
        return dialogue + "\n" + NEXT_SPEAKER.format(n=numbers[next_speaker]), tuple(texts)
    question = fields.get("question")
    if not question:
        raise ValueError("a KoDialogBench item needs its Korean question (fields.question); an English one is never "
                         "put in its place")
    lines = [dialogue, QUESTION.format(question=question)]
    if style == "class_description":
        lines.append(CLASSES.format(classes=", ".join(texts)))
    if style == "option_numbers":
        lines.append(numbered)
        return "\n".join([*lines, ANSWER]), tuple(str(n) for n in range(1, len(texts) + 1))
    return "\n".join([*lines, ANSWER]), tuple(texts)


def averages(accuracy_by_set: Mapping[str, float], task_of_set: Mapping[str, str]) -> dict:
    """KoDialogBench's two averages: over its tasks (each task the mean of its sets; Table 4) and over the sets."""
    if not accuracy_by_set:
        raise ValueError("no test set to average")
    by_task: dict[str, list[float]] = {}
    for name, accuracy in accuracy_by_set.items():
        by_task.setdefault(task_of_set[name], []).append(accuracy)
    task_means = {task: sum(v) / len(v) for task, v in by_task.items()}
    return {"task_means": task_means, "mean_of_task_means": sum(task_means.values()) / len(task_means),
            "mean_of_sets": sum(accuracy_by_set.values()) / len(accuracy_by_set)}
