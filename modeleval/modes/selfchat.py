"""Self-chat runs (BotChat): the model writes both sides of a dialogue on from a chat seed. They write items rather
than score them: `modeleval.selfchat_runs` starts and runs them, the arena pairs their dialogues, and the reports
show them in the pairwise section's self-chat part."""
from __future__ import annotations

from ..models import Mode
from .plan import Answer, FamilyPlan, Report, Section, Writes

MODES = (Mode.SELFCHAT,)
REFUSAL = ("a self-chat run writes items rather than scoring them: start one with Start a self-chat run "
           "on the runs page (or manage.py selfchat)")
PLAN = {Mode.SELFCHAT: FamilyPlan(report=Report(Section.SELFCHAT, Answer.NONE), scores=False,
                                  writes=Writes.DIALOGUES, refusal=REFUSAL)}


def unsuited(task, mode, spec, settings=None) -> str | None:
    return REFUSAL
