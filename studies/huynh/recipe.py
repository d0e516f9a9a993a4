"""Huynh et al. (2023), LLMs as dialogue raters on FED and DSTC10: the study's preset for the rating and
yes/no modes, its prompts laid out as its appendices print them.

- Rating (FED, Appendix B, Table 8): "Task: Given a dialog history and a response, rate how interesting the
  response is with regards to the dialog history.", then each example under "== Example N ==". One FED
  dialog is one example (section 4.1): its turns with speakers as "A:" / "B:" (by first appearance), each
  of its rated responses as "Response: ..." followed by "Rating: r/max" at the point where it was said,
  the turns between them as they came. A dialogue-level example is the whole dialog followed by its
  rating (section 4.1: "the full dialog context with the rating"). The rated item comes last, laid out
  the same, ending with "Rating:".
- Yes/no (DSTC10, Appendix C, Table 9): "Instruction: ...", "Example", then per example "Background info:",
  "Conversation:", the turns as "Person A:" / "Person B:" (the last speaker before the response is A),
  "Response: ...", the question and "Answer: Yes" or "No"; the rated item the same after a blank line,
  its response line as the table prints it ("Response : "), ending with "Answer:".
- An example's rating is the mean of FED's raters, rounded half up (`example_rating`): Table 8's three
  ratings are those of FED's ratings of its dialog. An item with no numeric rating is no example.
- Examples never come from the rated item's conversation: FED's turn items are prefixes of its dialogues,
  so an example whose turns and the item's turns are one a prefix of the other is left out
  (`same_conversation`).
- Random examples (section 3.3: "The examples remain consistent for each evaluation test point"): each
  seed shuffles the examples once (`draw`), and every item takes the first k of that order outside its own
  conversation, so all items but those of the drawn dialogs see the same examples. "The random selection
  experiment is run three times": SEEDS, one prediction variant ("seed-N") each; reports give the mean
  and standard deviation of the per-seed correlations.

Rating and yes/no reading are `scorers.rating`'s (top 3 renormalised, p(yes) / (p(yes) + p(no))).
"""
from __future__ import annotations

import math
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import islice

PRESET = "huynh"
# Examples per prompt, as the paper ran each mode: 3 for FED's ratings (Tables 1-2, appendix B), 4 for the DSTC10
# yes/no runs (Table 5 and appendix F: 4, 8 and 12 examples; Table 6: 4). Three is no DSTC10 configuration.
K = 3
K_YES_NO = 4
SEEDS = (0, 1, 2)

# Appendix B (Table 8): FED.
FED_TASK_TURN = "Task: Given a dialog history and a response, rate {what} with regards to the dialog history."
FED_TASK_DIALOG = "Task: Given a dialog, rate {what}."
FED_EXAMPLE = "== Example {n} =="
FED_TURN = "{speaker}: {text}"
FED_RESPONSE = "Response: {text}"
FED_RATING = "Rating: {rating}/{high}"
FED_QUERY = "Rating:"
# Appendix C (Table 9): DSTC10.
DSTC10_INSTRUCTION = ("Instruction: Given a conversation and a response, choose if the response is a good response "
                      "to the context")
DSTC10_EXAMPLES = "Example"
DSTC10_BACKGROUND = "Background info: {background}"
DSTC10_CONVERSATION = "Conversation:"
DSTC10_TURN = "Person {speaker}: {text}"
DSTC10_RESPONSE = "Response: {text}"
DSTC10_QUERY_RESPONSE = "Response : {text}"  # as Table 9 prints the rated item's line
DSTC10_QUESTION = "Question: Is the above response a good response to the conversation?"
DSTC10_DIALOG_QUESTION = "Question: Is the above conversation a good conversation?"
DSTC10_ANSWER = "Answer:"
BLOCKS = "\n\n"

# What Table 8's task line rates, per FED quality ("how interesting the response is" is the printed one).
TURN_WHAT = {"semantically_appropriate": "how semantically appropriate the response is",
             "overall": "the overall quality of the response"}
DIALOG_WHAT = {
    "coherent": "how coherent the system is throughout the dialog",
    "error_recovery": "how well the system recovers from the errors it makes",
    "consistent": "how consistent the information the system provides is",
    "diverse": "how diverse the system's responses are",
    "depth": "how deeply the system discusses topics",
    "likeable": "how likeable the system is",
    "understanding": "how well the system understands the user",
    "flexible": "how flexible and adaptable to the user the system is",
    "informative": "how informative the system is",
    "inquisitive": "how inquisitive the system is",
    "overall": "the overall quality of the dialog",
}
# What a run stores as its template: the layouts' strings, by name.
TEMPLATES = {
    "fed_task_turn": FED_TASK_TURN, "fed_task_dialog": FED_TASK_DIALOG, "fed_example": FED_EXAMPLE,
    "fed_turn": FED_TURN,
    "fed_response": FED_RESPONSE, "fed_rating": FED_RATING, "fed_query": FED_QUERY, "turn_what": TURN_WHAT,
    "dialog_what": DIALOG_WHAT, "dstc10_instruction": DSTC10_INSTRUCTION, "dstc10_examples": DSTC10_EXAMPLES,
    "dstc10_background": DSTC10_BACKGROUND, "dstc10_conversation": DSTC10_CONVERSATION, "dstc10_turn": DSTC10_TURN,
    "dstc10_response": DSTC10_RESPONSE, "dstc10_query_response": DSTC10_QUERY_RESPONSE,
    "dstc10_question": DSTC10_QUESTION, "dstc10_dialog_question": DSTC10_DIALOG_QUESTION,
    "dstc10_answer": DSTC10_ANSWER, "blocks": BLOCKS,
}


def seed_variant(seed: int) -> str:
    return f"seed-{seed}"


def example_rating(ratings: Iterable) -> int | None:
    """The mean of the numeric ratings, rounded half up (2.5 -> 3: Python's round would give 2);
    None without any."""
    values = [r for r in ratings if isinstance(r, (int, float)) and not isinstance(r, bool) and not math.isnan(r)]
    if not values:
        return None
    return math.floor(sum(values) / len(values) + 0.5)


def _key(turn: Mapping) -> tuple[str, str]:
    return (str(turn.get("speaker", "")).strip(), str(turn.get("text", "")).strip())


def item_turns(dialogue: Sequence[Mapping], response: Mapping | None) -> list[tuple[str, str]]:
    return [_key(t) for t in dialogue] + ([_key(response)] if response else [])


def same_conversation(a: Sequence, b: Sequence) -> bool:
    """One item's dialogue (without its rated response) opens the other's: the same conversation."""
    shorter, longer = sorted((list(a), list(b)), key=len)
    return bool(shorter) and longer[: len(shorter)] == shorter


# --- examples -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Rated:
    """One rated item: its dialogue, the rated response (None at dialogue level), the example's rating (None for
    the item rated) and DSTC10's background (knowledge or persona)."""
    id: str
    dialogue: tuple
    response: Mapping | None
    rating: int | None = None
    background: str = ""

    @property
    def turns(self) -> list[tuple[str, str]]:
        return item_turns(self.dialogue, self.response)


@dataclass(frozen=True)
class Example:
    """One example of the prompt: a FED dialog with its rated responses in the order said, or one item."""
    rated: tuple[Rated, ...]

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(r.id for r in self.rated)

    @property
    def turns(self) -> list[tuple[str, str]]:
        return self.rated[-1].turns


def dialogs(rated: Iterable[Rated]) -> list[Example]:
    """FED's examples: the turn items of one dialog together (each item's dialogue continues the previous
    item's dialogue and response), every dialogue-level item alone; in the order of their first ids."""
    examples: list[list[Rated]] = []
    for item in sorted(rated, key=lambda r: (len(r.dialogue), r.id)):
        mine = item_turns(item.dialogue, None)
        found = None
        if item.response is not None:
            found = next((e for e in examples if e[-1].response is not None
                          and mine[: len(e[-1].turns)] == e[-1].turns), None)
        if found is None:
            examples.append([item])
        else:
            found.append(item)
    return sorted((Example(tuple(e)) for e in examples), key=lambda e: e.ids[0])


def singles(rated: Iterable[Rated]) -> list[Example]:
    """DSTC10's examples: one item each (a context and a response)."""
    return sorted((Example((r,)) for r in rated), key=lambda e: e.ids[0])


def draw(examples: Sequence[Example], k: int, seed: int, item_turns_: Sequence) -> list[Example]:
    """The seed's examples for an item: the examples shuffled once per seed, the first k of them outside the
    item's conversation, so every item outside the drawn ones sees the same k."""
    order = random.Random(seed).sample(range(len(examples)), len(examples))
    allowed = (examples[i] for i in order if not same_conversation(item_turns_, examples[i].turns))
    return list(islice(allowed, k))


# --- Table 8 (FED) --------------------------------------------------------------------------------------


def letters(turns: Sequence[Mapping], last_first: bool = False) -> dict[str, str]:
    """A letter per speaker, by first appearance (from the last turn backwards with `last_first`)."""
    names: dict[str, str] = {}
    for turn in reversed(turns) if last_first else turns:
        names.setdefault(turn["speaker"], chr(ord("A") + len(names)))
    return names


def fed_task(what_key: str, label: str, dialog_level: bool) -> str:
    if dialog_level:
        return FED_TASK_DIALOG.format(what=DIALOG_WHAT.get(what_key, f"how {label.lower()} the dialog is"))
    return FED_TASK_TURN.format(what=TURN_WHAT.get(what_key, f"how {label.lower()} the response is"))


def fed_lines(rated: Sequence[Rated], high: int | None) -> list[str]:
    """A dialog's turns, each rated response as "Response:" and its rating where it was said; `high` None for
    the rated item, whose rating is left for the model."""
    last = rated[-1]
    names = letters([*last.dialogue, *([last.response] if last.response else [])])
    lines, shown = [], 0
    for item in rated:
        lines += [FED_TURN.format(speaker=names[t["speaker"]], text=t["text"]) for t in item.dialogue[shown:]]
        if item.response is not None:
            lines.append(FED_RESPONSE.format(text=item.response["text"]))
            shown = len(item.dialogue) + 1
        lines.append(FED_QUERY if high is None else FED_RATING.format(rating=item.rating, high=high))
    return lines


def fed_prompt(task: str, examples: Sequence[Example], query: Rated, high: int) -> str:
    blocks = [task] + ["\n".join([FED_EXAMPLE.format(n=n), *fed_lines(e.rated, high)])
                       for n, e in enumerate(examples, start=1)]
    return BLOCKS.join([*blocks, "\n".join(fed_lines([query], None))])


# --- Table 9 (DSTC10) -----------------------------------------------------------------------------------


def yes_no_answer(rating: int, low: float, high: float) -> str:
    """An example's answer: Yes when its rating is above the middle of the quality's scale."""
    return "Yes" if rating > (low + high) / 2 else "No"


def dstc10_lines(item: Rated, answer: str | None) -> list[str]:
    """One item as Table 9 lays it out; `answer` None for the rated item."""
    names = letters(item.dialogue, last_first=True)
    lines = [DSTC10_BACKGROUND.format(background=item.background or "none"), DSTC10_CONVERSATION,
             *[DSTC10_TURN.format(speaker=names[t["speaker"]], text=t["text"]) for t in item.dialogue]]
    if item.response is not None:
        lines.append((DSTC10_RESPONSE if answer else DSTC10_QUERY_RESPONSE).format(text=item.response["text"]))
    lines.append(DSTC10_QUESTION if item.response is not None else DSTC10_DIALOG_QUESTION)
    return [*lines, f"{DSTC10_ANSWER} {answer}" if answer else DSTC10_ANSWER]


def dstc10_prompt(examples: Sequence[tuple[Rated, str]], query: Rated) -> str:
    """`examples`: (item, its answer) each."""
    blocks = ["\n".join(dstc10_lines(item, answer)) for item, answer in examples]
    first = "\n".join([DSTC10_INSTRUCTION, DSTC10_EXAMPLES, blocks[0]]) if blocks else DSTC10_INSTRUCTION
    return BLOCKS.join([first, *blocks[1:], "\n".join(dstc10_lines(query, None))])
