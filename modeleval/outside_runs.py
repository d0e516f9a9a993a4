"""Answers made by another tool, imported as a finished run: the formats read and what each needs. The command
(import_verdicts) and the manager's page both call `import_outside_run`.

* jsonl: a judge's verdicts, one {"item", "answer"} per line, on one task (modeleval.verdicts);
* lm-eval: lm-evaluation-harness' samples_*.jsonl, per-option log-likelihoods (modeleval.lmeval);
* inspect: an Inspect eval log, a model's or judge's answers read by a scorer (modeleval.inspect_log).
"""
from __future__ import annotations

from pathlib import Path

from core.errors import Code

from .errors import RunError
from .inspect_log import import_inspect_log
from .lmeval import import_lmeval_samples
from .verdicts import Imported, import_verdicts

FORMATS = ("jsonl", "lm-eval", "inspect")


def import_outside_run(fmt, paths, *, benchmark, task=None, judge=None, settings=None, scorer=None, names=None,
                       user=None) -> Imported:
    """The files `paths` in format `fmt` as a finished run (see the module's text); `names`: the files' names in
    refusals."""
    paths = [paths] if isinstance(paths, (str, Path)) else list(paths)
    if fmt not in FORMATS:
        raise RunError(Code.BAD_SETTINGS, f"format {fmt!r}: expected one of {', '.join(FORMATS)}")
    if fmt != "lm-eval" and len(paths) != 1:
        raise RunError(Code.BAD_SETTINGS, f"format {fmt} imports one file at a time")
    if fmt != "inspect" and not judge:
        raise RunError(Code.BAD_SETTINGS, f"format {fmt} needs the name the run is kept under (the judge or model)")
    name = names[0] if names else None
    if fmt == "lm-eval":
        return import_lmeval_samples(paths, benchmark=benchmark, task=task, judge=judge, settings=settings,
                                     names=names, user=user)
    if fmt == "inspect":
        return import_inspect_log(paths[0], benchmark=benchmark, task=task, judge=judge, scorer=scorer,
                                  settings=settings, name=name, user=user)
    if not task:
        raise RunError(Code.UNKNOWN_TASK, "verdicts in JSON lines are imported on one task: name it")
    return import_verdicts(paths[0], benchmark=benchmark, task=task, judge=judge, settings=settings, name=name,
                           user=user)
