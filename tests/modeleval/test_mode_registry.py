"""The registry decides every mode: one call says what a run of a mode is (`modes.plan`), each family declares how
the reports read its runs, and no module outside the registry compares a run's mode to a mode."""
import ast
import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from modeleval import modes
from modeleval.models import Backend, Mode

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("annotation", "benchmarks", "core", "frontend", "humanbaseline", "metrics", "modeleval", "perf",
            "reports")
REGISTRY = Path("modeleval/modes")
SCRIPTS = Path("frontend/static/frontend/js")


def prompted(backend=Backend.LOCAL):
    return SimpleNamespace(name="m", trained_by_id=None, is_api=backend == Backend.API)


def classifier():
    return SimpleNamespace(name="clf", trained_by_id=7, is_api=False)


def test_a_run_s_plan_in_one_call():
    plan = modes.plan(Mode.LOGLIKELIHOOD, prompted())
    assert (plan.family, plan.scores, plan.queue, plan.refusal, plan.trains) == ("multiple_choice", True, "gpu", None,
                                                                                 False)
    assert plan.report.by_rule and plan.report.section == modes.Section.MULTIPLE_CHOICE
    assert modes.plan(Mode.GENERATE, prompted(Backend.API)).queue == modes.CPU_QUEUE
    training = modes.plan(Mode.TRAIN, prompted())
    assert training.trains and training.one_chunk_at_a_time and not training.scores
    assert training.refusal == modes.TRAIN_REFUSAL and training.report.section is None
    selfchat = modes.plan(Mode.SELFCHAT, prompted(Backend.API))
    assert (selfchat.writes_dialogues and selfchat.queue == modes.CPU_QUEUE
            and selfchat.refusal == modes.SELFCHAT_REFUSAL)
    assert selfchat.report.section == modes.Section.SELFCHAT


def test_only_a_classifier_trained_here_scores_in_classify_mode_and_nothing_else():
    assert modes.plan(Mode.CLASSIFY, classifier()).refusal is None
    assert modes.plan(Mode.CLASSIFY, prompted()).refusal == modes.CLASSIFY_REFUSAL
    assert modes.plan(Mode.CLASSIFY).refusal == modes.CLASSIFY_REFUSAL  # the runs page offers prompted models
    refused = modes.plan(Mode.RATING, classifier())
    assert refused.scores and "classifier trained here" in refused.refusal


def test_the_reports_read_the_modes_as_their_families_declare():
    assert modes.modes_where(section=modes.Section.MULTIPLE_CHOICE) == (Mode.LOGLIKELIHOOD, Mode.GENERATE)
    assert modes.modes_where(section=modes.Section.RATINGS) == (Mode.RATING, Mode.YES_NO, Mode.CLASSIFY)
    assert modes.modes_where(by_rule=True) == (Mode.LOGLIKELIHOOD,)
    assert modes.modes_where(stands_in=True) == (Mode.LOGLIKELIHOOD, Mode.GENERATE, Mode.RATING, Mode.YES_NO,
                                                 Mode.CLASSIFY)
    assert modes.modes_where(trained_model=True) == (Mode.CLASSIFY,)


def is_mode(node):
    return (isinstance(node, ast.Name) and node.id == "mode" or isinstance(node, ast.Attribute) and node.attr == "mode"
            or isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and node.slice.value == "mode")


def is_literal_mode(node):
    if isinstance(node, ast.Constant):
        return node.value in Mode.values
    if isinstance(node, ast.Attribute):
        return isinstance(node.value, ast.Name) and node.value.id == "Mode" and node.attr in Mode.names
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return any(map(is_literal_mode, node.elts))
    return False


def is_mode_filter(keyword):
    return keyword.arg is not None and (keyword.arg in ("mode", "mode__in")
                                        or keyword.arg.endswith(("__mode", "__mode__in")))


def mode_branches_outside_the_registry():
    """Comparisons of a run's mode (`mode`, `x.mode`, `x["mode"]`) to a mode string or `Mode` member, queries
    filtering on one, and scripts comparing `.mode` to a string."""
    found = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            relative = path.relative_to(ROOT)
            # Hidden folders hold no project code: perf/.envs/ holds the venvs perf scripts create (lm-eval's).
            if relative.is_relative_to(REGISTRY) or "migrations" in relative.parts \
                    or any(part.startswith(".") for part in relative.parts):
                continue
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if isinstance(node, ast.Compare):
                    sides = [node.left, *node.comparators]
                    if any(map(is_mode, sides)) and any(is_literal_mode(s) for s in sides if not is_mode(s)):
                        found.append(f"{relative}:{node.lineno}: {ast.unparse(node)}")
                elif isinstance(node, ast.Call) and getattr(node.func, "attr", None) in ("filter", "exclude", "get"):
                    found += [f"{relative}:{node.lineno}: {k.arg}={ast.unparse(k.value)}" for k in node.keywords
                              if is_mode_filter(k) and is_literal_mode(k.value)]
    for path in sorted((ROOT / SCRIPTS).glob("*.js")):
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if re.search(r"\.mode\s*[!=]==?\s*[\"']", line):
                found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    return found


def test_no_module_outside_the_registry_branches_on_a_literal_mode():
    assert mode_branches_outside_the_registry() == []


@pytest.mark.parametrize("source, found", [
    ('if run["mode"] == "pairwise":\n    pass\n', "run['mode'] == 'pairwise'"),
    ("if run.mode != Mode.SELFCHAT:\n    pass\n", "run.mode != Mode.SELFCHAT"),
    ("EvalRun.objects.filter(pk=1, mode=Mode.TRAIN)\n", "mode=Mode.TRAIN"),
    ("Prediction.objects.filter(run__mode__in=(Mode.RATING,))\n", "run__mode__in=(Mode.RATING,)"),
    ("if mode in (Mode.RATING, Mode.YES_NO):\n    pass\n", "mode in (Mode.RATING, Mode.YES_NO)"),
])
def test_the_check_finds_a_branch_on_a_literal_mode(tmp_path, monkeypatch, source, found):
    (tmp_path / "reports").mkdir()
    (tmp_path / "reports" / "x.py").write_text(
        source + "if modes.reads(run.mode).by_rule:\n    pass\nif mode not in Mode.values:\n    pass\n")
    monkeypatch.setattr(__import__(__name__, fromlist=["ROOT"]), "ROOT", tmp_path)
    monkeypatch.setattr(__import__(__name__, fromlist=["PACKAGES"]), "PACKAGES", ("reports",))
    [hit] = mode_branches_outside_the_registry()
    assert hit.startswith("reports/x.py:1: ") and found in hit
