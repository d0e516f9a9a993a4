"""Which run mode can score which task: the rule `actions.start_run` refuses by and `selectors.run_modes`
offers a benchmark's modes by. It reads only a task's form, so both import it from here, below them."""
from benchmarks.formschema import CHOICE_TYPES, question, rating_scale

from . import prompting
from .models import Mode
from .scorers.pairwise import BOTH, NEITHER, ONE, TWO

PAIRWISE_LABELS = (ONE, TWO, BOTH, NEITHER)
SINGLE_INDEX = "first_ai_turn"  # the single-dialogue form's question naming the first machine utterance

SELFCHAT_REFUSAL = "a self-chat run writes items rather than scoring them: use run_selfchat (manage.py selfchat)"
CLASSIFY_REFUSAL = ("classify mode scores with a classifier trained here; its training run starts it on the test "
                    "split (Train a classifier)")
TRAIN_REFUSAL = "a training run trains a classifier rather than scoring: use Train a classifier (manage.py train)"


def mode_unsuited(task, mode) -> str | None:
    """Why `mode` cannot score `task` by its primary question, or None when it can. The run form
    offers a benchmark's modes by this rule (`selectors.run_modes`), and `start_run` refuses by it."""
    spec = question(task.form, task.primary_key)
    if mode == Mode.TRAIN:
        return TRAIN_REFUSAL if rating_scale(spec) is None else None
    if mode == Mode.CLASSIFY and rating_scale(spec) is None:
        return (f"task {task}: classify mode needs a scale or numeric choice as primary question, "
                f"{spec['key']!r} is {spec['type']}")
    if mode in prompting.MC_MODES and not (spec["type"] in CHOICE_TYPES and spec.get("options") == "item"):
        return (f"task {task}: mode {mode} needs a choice question whose options come from "
                f"the items; the primary question {spec['key']!r} is {spec['type']}")
    if mode == Mode.RATING and rating_scale(spec) is None:
        return (f"task {task}: rating mode needs a scale or numeric choice as primary question "
                f"(or settings.quality naming one), {spec['key']!r} is {spec['type']}")
    if mode == Mode.PAIRWISE and not (spec["type"] == "single_choice" and isinstance(spec.get("options"), list)
                                      and {str(o["value"]) for o in spec["options"]} == set(PAIRWISE_LABELS)):
        return (f"task {task}: pairwise mode needs BotChat's question (which conversation "
                f"involves a machine: {', '.join(PAIRWISE_LABELS)}) as primary question")
    if mode == Mode.SINGLE_JUDGE and not (spec["type"] == "boolean" and any(
            q["key"] == SINGLE_INDEX and q["type"] == "index" for q in task.form.get("questions", []))):
        return (f"task {task}: single_judge mode needs BotChat's single-dialogue question "
                f"(is any utterance machine-written, and {SINGLE_INDEX!r}) as primary question")
    return None
