"""KoDialogBench (Jang et al., LREC-COLING 2024): Korean dialogue comprehension and response selection by
log-likelihood, zero-shot, in the four prompting methods of its section 4.1.2, as its Appendix B prints them
and its released lm-eval task code writes them (sb-jang/kodialogbench, kodialogbench/utils.py and the task
yaml files), with Korean templates only.

- Each task in its own method (style "by_task", the study's): response selection (an item with
  `fields.next_speaker`) by response selection prompting; dialog act classification (a task whose
  dimension is "Dialog Act") with class descriptions; fact identification ("Fact") by option prompting;
  topic, location, relation and emotion directly. A run may force one style on every item instead.
- Layouts (utils.py's `doc_to_text_*`; the blank lines are the code's, the print does not show them):
  - direct (B.1): the dialogue, a blank line, "질문: " and the item's question, "정답:"; each class is
    the continuation;
  - class_description (B.2): "[대화]", the dialogue, a blank line, "[보기]", one "class: description" line
    per class (the item's `fields.option_description`, as the released data holds it), a blank line, the
    question, "정답:"; each class is the continuation;
  - option_numbers (B.3): "[대화]", the dialogue, a blank line, "[보기]", the options as "1) ...", a blank
    line, the question, "정답:"; each option's number is the continuation;
  - response selection (B.4): the dialogue, then the next speaker's tag ("화자2:"); each candidate
    utterance is the continuation.
  Continuations follow lm-eval's multiple-choice format: one space, then the choice.
- Speakers as "화자N" with the corpus's own number (the released data's speaker ids; B.1 opens with
  화자2), so the item's own question ("화자1이 느끼는 감정") still points at the speaker it names; speakers
  named otherwise than by number are numbered by first appearance, the numbering their question must use.
  Nothing is ever renumbered, and a question naming a speaker the dialogue does not have is refused.
- A Korean item never falls back to an English template: an item without its Korean question is
  refused. At most 19 classes (the largest set, K-TDD topics, has 19).
- Averages (`averages`): the mean of the task means (Table 4: six comprehension tasks) and the mean
  of the test sets.
"""
from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

PRESET = "kodialogbench"
SOURCE = "sb-jang/kodialogbench commit 36a6ba9"
BY_TASK = "by_task"
STYLES = (BY_TASK, "direct", "class_description", "option_numbers")
MAX_CLASSES = 19
SPEAKER = "화자{n}: {text}"
QUESTION = "질문: {question}"
ANSWER = "정답:"
NEXT_SPEAKER = "화자{n}:"
DIALOGUE_HEADER = "[대화]"
CHOICES_HEADER = "[보기]"
OPTION = "{n}) {text}"
DESCRIBED_CLASS = "{label}: {description}"
BLOCKS = "\n\n"  # utils.py: a blank line between the dialogue, the choices and the question
# Appendix B.2: the descriptions of K-TDD's four dialog acts, the ones the paper prints (the released data holds
# each item's own in option_description).
DIALOG_ACT_DESCRIPTIONS = {
    "지시": "상대에게 충고, 제안, 명령, 요구, 질문, 부탁 등을 하는 발화",
    "단언": "자신의 의견을 진술, 주장하거나 상대의 의견을 반박하는 발화",
    "언약": "상대와 약속을 하거나 상대의 요청을 거절하는 발화",
    "표현": "인사, 감사, 사과, 긍정 및 부정 감정 표현 등을 하는 발화",
}
# Section 4.1.2: the method each task is prompted with (a task's dimension names its task; the rest direct).
STYLE_OF_DIMENSION = {"dialogact": "class_description", "dialogueact": "class_description", "fact": "option_numbers",
                      "factidentification": "option_numbers"}
# What a run stores as its template: the markers above, by name.
TEMPLATES = {"speaker": SPEAKER, "question": QUESTION, "answer": ANSWER, "next_speaker": NEXT_SPEAKER,
             "dialogue_header": DIALOGUE_HEADER, "choices_header": CHOICES_HEADER, "option": OPTION,
             "described_class": DESCRIBED_CLASS, "blocks": BLOCKS,
             "dialog_act_descriptions": "\n".join(DESCRIBED_CLASS.format(label=label, description=text)
                                                  for label, text in DIALOG_ACT_DESCRIPTIONS.items())}

_NUMBERED = re.compile(r"(?:화자|speaker)?\s*(\d+)", re.IGNORECASE)
_NAMED_IN_QUESTION = re.compile(r"화자\s*(\d+)")


def speaker_numbers(turns: Sequence[Mapping], extra: Sequence[str] = ()) -> dict[str, int]:
    """Each speaker's number: the corpus's own where speakers are named by number, else by first appearance."""
    speakers = list(dict.fromkeys([t["speaker"] for t in turns] + list(extra)))
    numbered = {s: int(m.group(1)) for s in speakers if (m := _NUMBERED.fullmatch(str(s).strip()))}
    if not numbered:
        return {s: n for n, s in enumerate(speakers, start=1)}
    if len(numbered) != len(speakers):
        raise ValueError(f"speakers {sorted(set(speakers) - set(numbered))} carry no number beside numbered ones: "
                         "name every speaker by number (the corpus's, as the question uses them) or none")
    if len(set(numbered.values())) != len(numbered):
        raise ValueError(f"two speakers share a number: {numbered}")
    return numbered


def style_of(style: str, dimension: str, response_selection: bool) -> str:
    """The prompting method an item is asked in: the run's, or with "by_task" the paper's for its task."""
    if style != BY_TASK:
        return style
    if response_selection:
        return "response_selection"
    return STYLE_OF_DIMENSION.get(re.sub(r"[^a-z]", "", dimension.lower()), "direct")


def render_dialogue(turns: Sequence[Mapping], numbers: Mapping[str, int]) -> str:
    return "\n".join(SPEAKER.format(n=numbers[t["speaker"]], text=t["text"]) for t in turns)


def class_lines(labels: Sequence[str], described) -> list[str]:
    """One "class: description" line per class: the item's `option_description` as the released data holds it
    (a list of [class, description] pairs, or a mapping), else per class the description appendix B.2 prints,
    else the class alone."""
    if isinstance(described, Mapping):
        described = list(described.items())
    if described:
        return [DESCRIBED_CLASS.format(label=label, description=description) for label, description in described]
    return [DESCRIBED_CLASS.format(label=label, description=DIALOG_ACT_DESCRIPTIONS[label])
            if label in DIALOG_ACT_DESCRIPTIONS else label for label in labels]


def _question(fields: Mapping, numbers: Mapping[str, int]) -> str:
    question = fields.get("question")
    if not question:
        raise ValueError("a KoDialogBench item needs its Korean question (fields.question); an English one is never "
                         "put in its place")
    if unknown := sorted({int(n) for n in _NAMED_IN_QUESTION.findall(question)} - set(numbers.values())):
        raise ValueError(f"the question names 화자{unknown[0]}, whom the dialogue does not have (its speakers are "
                         f"{sorted(numbers.values())})")
    return QUESTION.format(question=question)


def prompt_and_continuations(turns: Sequence[Mapping], fields: Mapping, options: Mapping[str, str], style: str,
                             dimension: str = "") -> tuple[str, tuple[str, ...]]:
    """(the prompt, each option's continuation after a " " delimiter) for one item in one style; `dimension`
    is the item's task's, which picks the method under the "by_task" style."""
    if style not in STYLES:
        raise ValueError(f"KoDialogBench style must be one of {STYLES}")
    if not 2 <= len(options) <= MAX_CLASSES:
        raise ValueError(f"KoDialogBench items have 2 to {MAX_CLASSES} classes or candidates, not {len(options)}")
    texts = list(options.values())
    next_speaker = fields.get("next_speaker")
    numbers = speaker_numbers(turns, [next_speaker] if next_speaker else [])
    dialogue = render_dialogue(turns, numbers)
    method = style_of(style, dimension, bool(next_speaker))
    numbered = tuple(str(n) for n in range(1, len(texts) + 1))
    if method == "option_numbers":
        choices = [OPTION.format(n=n, text=text) for n, text in zip(numbered, texts, strict=True)]
        return _choices_prompt(dialogue, choices, _question(fields, numbers)), numbered
    if next_speaker:  # response selection, in every other style: the dialogue completed by the next speaker
        return dialogue + "\n" + NEXT_SPEAKER.format(n=numbers[next_speaker]), tuple(texts)
    if method == "class_description":
        choices = class_lines(texts, fields.get("option_description"))
        return _choices_prompt(dialogue, choices, _question(fields, numbers)), tuple(texts)
    return dialogue + BLOCKS + _question(fields, numbers) + "\n" + ANSWER, tuple(texts)


def _choices_prompt(dialogue: str, choices: Sequence[str], question: str) -> str:
    return (DIALOGUE_HEADER + "\n" + dialogue + BLOCKS + CHOICES_HEADER + "\n" + "\n".join(choices) + BLOCKS
            + question + "\n" + ANSWER)


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
