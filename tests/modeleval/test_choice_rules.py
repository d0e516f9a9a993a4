"""The log-likelihood rules: one enum names them, and every rule picks an option whatever the options' lengths."""
import ast
import math
from pathlib import Path

import pytest

from modeleval.modes import multiple_choice
from modeleval.scorers.choice_rules import per_token, rule_picks
from modeleval.selectors import mc_picks
from reports.readable import GAP_RULES, RULE_COLUMNS, RULES, run_rule
from studies.vocabulary import Rule

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("annotation", "benchmarks", "core", "frontend", "humanbaseline", "metrics", "modeleval", "reports",
            "studies")
HOME = Path("studies/vocabulary.py")


def test_an_option_of_no_tokens_has_no_mean_and_is_never_preferred():
    assert per_token(-3.0, 0) == -math.inf
    assert per_token(-3.0, 2) == -1.5
    # A zero-token option has log-likelihood 0: per token it must not beat every real option.
    assert rule_picks([-4.0, 0.0, -1.0], [2, 0, 1], [5, 0, 3])[Rule.PER_TOKEN] == 2
    assert rule_picks([0.0, 0.0], [0, 0], [0, 0]) == {Rule.ACC: 0, Rule.ACC_NORM: 0, Rule.PER_TOKEN: 0}


def test_stored_options_with_no_tokens_are_read_without_dividing_by_zero():
    options = [{"key": "A", "logprob": 0.0, "n_tokens": 0, "n_chars": 0},
               {"key": "B", "logprob": -2.0, "n_tokens": 4, "n_chars": 9}]
    assert mc_picks(options) == {"acc": "A", "acc_norm": "A", "per_token": "B"}


def test_every_place_that_names_the_rules_takes_them_from_the_enum():
    assert tuple(Rule) == multiple_choice.RULES
    assert set(Rule) <= set(RULES) and set(Rule) <= set(GAP_RULES)
    assert set(RULE_COLUMNS) == set(Rule) - {Rule.ACC}  # acc's column depends on the run
    assert run_rule({"mode": "loglikelihood", "settings": {}}, "run") == Rule.PER_TOKEN


def rule_names_spelt_outside_the_enum():
    names = {rule.value for rule in Rule}
    found = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            relative = path.relative_to(ROOT)
            if relative == HOME or "migrations" in relative.parts:
                continue
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if isinstance(node, ast.Constant) and node.value in names:
                    found.append(f"{relative}:{node.lineno}: {node.value!r}")
    return found


def test_no_module_spells_a_rule_name():
    assert rule_names_spelt_outside_the_enum() == []


def test_the_check_finds_a_spelt_rule(tmp_path, monkeypatch):
    (tmp_path / "reports").mkdir()
    (tmp_path / "reports" / "x.py").write_text('if rule == "acc_norm":\n    pass\nif rule == Rule.ACC:\n    pass\n')
    monkeypatch.setattr(__import__(__name__, fromlist=["ROOT"]), "ROOT", tmp_path)
    monkeypatch.setattr(__import__(__name__, fromlist=["PACKAGES"]), "PACKAGES", ("reports",))
    assert rule_names_spelt_outside_the_enum() == ["reports/x.py:1: 'acc_norm'"]


@pytest.mark.parametrize("rule", list(Rule))
def test_a_rule_is_its_name(rule):
    assert rule == rule.value and f"{rule}" == rule.value
