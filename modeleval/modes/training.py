"""Training runs (DiQAD's supervised baseline): a classifier trained on a rating question's accepted final labels,
one chunk (a span of epochs) after the other; `modeleval.training` trains, `actions.start_training` starts one,
and the classifier it registers scores the test split in classify mode, which the reports show."""
from __future__ import annotations

from benchmarks.formschema import rating_scale

from ..models import Mode
from .plan import Answer, FamilyPlan, Report, Writes

MODES = (Mode.TRAIN,)
SCORES_IN = Mode.CLASSIFY  # the mode the trained classifier scores in
REFUSAL = "a training run trains a classifier rather than scoring: use Train a classifier (manage.py train)"
PLAN = {Mode.TRAIN: FamilyPlan(report=Report(None, Answer.NONE), scores=False, writes=Writes.CLASSIFIER,
                               one_chunk_at_a_time=True, refusal=REFUSAL)}


def unsuited(task, mode, spec, settings=None) -> str | None:
    """A classifier learns a scale (or numeric choice) question."""
    return REFUSAL if rating_scale(spec) is None else None
