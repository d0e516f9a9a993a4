"""What a run of each mode is, as the rest of the code asks it: `modes.plan(mode, model)` returns a `Plan`, and every
family declares its part (`PLAN`: whether it scores, what it writes instead, whether it takes a classifier trained
here; `REPORT`: how the reports read its runs). No module outside the registry compares a run's mode to a mode."""
from __future__ import annotations

import enum
from dataclasses import dataclass

GPU_QUEUE = "gpu"
CPU_QUEUE = "cpu"  # models behind an API: the worker waits on the network, not on a GPU


class Writes(enum.StrEnum):
    """What a run writes instead of scoring items."""
    DIALOGUES = "dialogues"  # self-chat: the model writes both sides of dialogues, kept as items
    CLASSIFIER = "classifier"  # training: a classifier, registered as a model that scores in classify mode


class Section(enum.StrEnum):
    """The report section a run's figures go in."""
    MULTIPLE_CHOICE = "multiple_choice"
    RATINGS = "ratings"
    PAIRWISE = "pairwise"
    SINGLE_JUDGE = "single_judge"
    SELFCHAT = "selfchat"  # its dialogues, judged by people and models (pass@N)
    JUDGE = "judge"  # a judge's labels against the people's aggregate, as a study measures them (its paper's table)


class Answer(enum.StrEnum):
    """What a run's prediction answers."""
    OPTION = "option"  # an option key, right or wrong against the gold
    RATING = "rating"  # the expected rating on the question's scale: no right or wrong, an error
    PROBABILITY = "probability"  # p(yes), kept as the prediction's rating
    CLASS = "class"  # a trained classifier's likeliest class, right or wrong against the gold
    VERDICT = "verdict"  # a judge's verdict on a pair or a dialogue
    LABEL = "label"  # a label of the question (or a rating of its scale) read from a judge's reply
    NONE = "none"  # no predictions: the run writes (Writes)


@dataclass(frozen=True)
class Report:
    """How the reports read a mode's runs."""
    section: Section | None  # None: nowhere (a training run: its classifier's classify run is reported)
    answer: Answer
    by_rule: bool = False  # its figures are read per lm-eval rule (Rule): scored by option log-likelihood
    stands_in: bool = False  # its answers can stand in for a person's (human-anchored figures, active selection)


@dataclass(frozen=True)
class FamilyPlan:
    """What a family declares of each of its modes."""
    report: Report
    scores: bool = True  # start_run scores items in it
    writes: Writes | None = None
    trained_model: bool = False  # only a classifier trained here scores in it, and such a model in nothing else
    one_chunk_at_a_time: bool = False  # each chunk starts from the one before (training's checkpoints)
    refusal: str | None = None  # why start_run refuses it, and the way to start it


@dataclass(frozen=True)
class Plan(FamilyPlan):
    """A run's plan: its mode, the family that owns it and the queue its work goes on, with what the family
    declares. `refusal` is set when start_run refuses this mode for this model (a mode that does not score, or a
    scoring mode the model cannot run in)."""
    mode: str = ""
    family: str = ""
    queue: str = GPU_QUEUE

    @property
    def trains(self) -> bool:
        return self.writes == Writes.CLASSIFIER

    @property
    def writes_dialogues(self) -> bool:
        return self.writes == Writes.DIALOGUES
