"""The mode registry: every scoring mode has exactly one family, every family holds the whole contract,
and the package stays importable without torch (the web process validates runs with it)."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

from modeleval import modes
from modeleval.models import Mode

ROOT = Path(__file__).resolve().parents[2]
CONTRACT = ("MODES", "DEFAULTS", "TEMPLATES", "ORDERS_OPTIONS", "api_need", "unsuited", "defaults", "validate",
            "default_template", "check_run_template", "check_run", "requests", "score")


def test_every_mode_has_one_family_and_only_the_writing_ones_do_not_score():
    owners = {mode: [f.__name__ for f in modes.FAMILIES if mode in f.MODES] for mode in Mode.values}
    assert {mode: len(found) for mode, found in owners.items()} == {mode: 1 for mode in Mode.values}
    assert [mode for mode in Mode.values if not modes.scores(mode)] == [Mode.SELFCHAT, Mode.TRAIN]
    assert modes.modes_where(writes=modes.Writes.DIALOGUES) == (Mode.SELFCHAT,)
    assert modes.modes_where(writes=modes.Writes.CLASSIFIER) == (Mode.TRAIN,)


@pytest.mark.parametrize("family", modes.SCORING, ids=lambda f: f.__name__.rsplit(".", 1)[-1])
def test_each_scoring_family_holds_the_whole_contract(family):
    assert [name for name in CONTRACT if not hasattr(family, name)] == []
    assert set(family.DEFAULTS) == set(family.MODES)
    assert {mode for mode, _, _ in family.TEMPLATES} <= set(family.MODES)


@pytest.mark.parametrize("family", modes.FAMILIES, ids=lambda f: f.__name__.rsplit(".", 1)[-1])
def test_each_family_declares_each_mode_s_plan_and_report(family):
    assert set(family.PLAN) == set(family.MODES) and hasattr(family, "unsuited")
    for mode in family.MODES:
        declared = family.PLAN[mode]
        assert declared.scores == (declared.writes is None) == (declared.refusal is None)
        assert (declared.report.answer == modes.Answer.NONE) == (not declared.scores)


@pytest.mark.parametrize("mode", [m for m in Mode.values if modes.scores(m)])
def test_each_mode_resolves_its_defaults_and_has_a_default_template(mode):
    settings = modes.resolve_settings(mode, "en", None)
    version, text = modes.default_template(mode, settings)
    assert version and text
    if mode != Mode.CLASSIFY:
        modes.check_run_template(mode, text, settings)


def test_a_typo_in_the_settings_is_refused_for_every_mode():
    for mode in filter(modes.scores, Mode.values):
        with pytest.raises(ValueError, match="unknown settings"):
            modes.resolve_settings(mode, "en", {"batchsize": 4})


def test_the_registry_imports_no_torch():
    code = ("import sys, django; django.setup(); import modeleval.modes, modeleval.actions, modeleval.selectors; "
            "sys.exit('torch' in sys.modules)")
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True, timeout=120,
                   env={**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings"})
