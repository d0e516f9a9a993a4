"""The parts of perf/scoring_vs_lm_eval.py that decide what is compared: the items and the
agreement check. No model, no lm-eval venv: a word-level stand-in tokenizer."""

import importlib.util
import re
from collections import Counter
from pathlib import Path

import pytest

from modeleval.scorers.loglikelihood import MCResult, OptionScore

SCRIPT = Path(__file__).resolve().parents[2] / "perf" / "scoring_vs_lm_eval.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("scoring_vs_lm_eval", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class WordTokenizer:
    """One token per word or punctuation mark, leading space kept: enough for lengths and for
    encode_pair's prefix arithmetic."""

    def encode(self, text, add_special_tokens=False):
        return [hash(piece) % 50000 for piece in re.findall(r"\s*\w+|\s*[^\w\s]|\s+$", text)]


def test_items_are_deterministic_four_option_dialogues(bench):
    items = bench.build_items(WordTokenizer(), 60, seed=3, target=200)
    again = bench.build_items(WordTokenizer(), 60, seed=3, target=200)
    assert [(e["id"], e["item"], e["gold"]) for e in items] == [(e["id"], e["item"], e["gold"]) for e in again]
    assert len({e["id"] for e in items}) == 60
    for entry in items:
        item = entry["item"]
        assert len(item.options) == 4 and len(set(item.options)) == 4
        assert 0 <= entry["gold"] < 4
        assert item.context.rstrip().endswith(("Answer:", "答案："))
        assert "speaker1" in item.context and "speaker2" in item.context
    generated = [e for e in items if e["id"].startswith("gen-")]
    lengths = [len(WordTokenizer().encode(e["item"].context)) for e in generated]
    assert 150 <= sum(lengths) / len(lengths) <= 260
    # Some prompts end in a space and some are Chinese: HFLM's tokenisation rules get exercised.
    assert any(e["item"].context.endswith(" ") for e in items)
    assert any(e["language"] == "zh" for e in items)
    assert bench.build_items(WordTokenizer(), 60, seed=4, target=200) != items


def test_token_work_counts_shared_context_once(bench):
    items = bench.build_items(WordTokenizer(), 20, seed=3, target=200)
    work = bench.token_work(WordTokenizer(), items)
    assert work["theirs_forward_passes"] <= 80
    assert 2.5 < work["theirs_tokens"] / work["ours_tokens"] < 4
    assert work["ours_vocab_rows"] < work["ours_tokens"]


def _result(logprobs, options, greedy=None):
    greedy = greedy or [False] * len(options)
    return MCResult(tuple(OptionScore("c", " " + o, lp, g, 1, len(o))
                          for lp, o, g in zip(logprobs, options, greedy, strict=True)))


def test_compare_reports_differences_and_pick_mismatches(bench):
    from modeleval.scorers.loglikelihood import MCItem

    options = ("a", "bbbbbbbbbb", "cc", "dd")
    items = [{"id": f"i{k}", "item": MCItem("ctx", options), "gold": 1} for k in range(2)]
    ours = [_result([-5.0, -6.0, -9.0, -9.5], options), _result([-5.0, -6.0, -9.0, -9.5], options)]
    # Item 0: identical. Item 1: option 1 higher in lm-eval's numbers, so acc differs; acc_norm
    # (per character) picks option 1 on both sides; one is_greedy flag differs.
    theirs = [(-5.0, False), (-6.0, False), (-9.0, False), (-9.5, False),
              (-5.0, False), (-4.5, True), (-9.0, False), (-9.5, False)]
    check = bench.compare(items, ours, theirs)
    assert check["max_abs_diff"] == pytest.approx(1.5)
    assert check["worst"]["item"] == "i1" and check["worst"]["option"] == 1
    assert check["over_tolerance"] == 1
    assert check["acc_mismatches"] == 1 and check["acc_norm_mismatches"] == 0
    assert check["is_greedy_mismatches"] == 1
    assert check["acc"] == {"ours": 0.0, "theirs": 0.5}
    assert check["acc_norm"] == {"ours": 1.0, "theirs": 1.0}


def test_dialogbench_items_are_the_presets_prompts_sharing_each_tasks_instruction():
    from perf._dialogbench_items import dialogbench_items
    from studies.dialogbench import recipe as dialogbench

    entries = dialogbench_items(tasks=8, items=30, seed=3)
    assert entries == dialogbench_items(tasks=8, items=30, seed=3)
    tasks = [e["task"] for e in entries]
    assert tasks == sorted(tasks, key=list(dialogbench.TASK_NAMES).index)  # contiguous, in the preset's order
    assert len(set(tasks)) == 8 and len(entries) == 30 and len({e["id"] for e in entries}) == 30
    for entry in entries:
        item = entry["item"]
        # As modes.multiple_choice asks a base model under the preset: the option text right after the prompt.
        assert item.delimiter == "" and item.add_special_tokens
        assert len(item.options) == 4 and len(set(item.options)) == 4 and 0 <= entry["gold"] < 4
        template = dialogbench.PROMPTS[dialogbench.prompt_key(entry["task"], "en", "pretrain")]
        assert item.context.startswith(template.split("{")[0] + "speaker1: ")
        assert "speaker2: " in item.context


def test_token_work_counts_dialogbench_requests_as_the_preset_encodes_them(bench):
    from perf._dialogbench_items import dialogbench_items

    items = dialogbench_items(tasks=2, items=6, seed=3)
    work = bench.token_work(WordTokenizer(), items)
    assert work["theirs_forward_passes"] == 24
    assert 2.5 < work["theirs_tokens"] / work["ours_tokens"] < 4


def test_passes_work_counts_each_shared_prefix_once(bench):
    import torch

    passes = [{"ids": torch.ones((1, 30), dtype=torch.long), "base": 0, "prefix": True},
              {"ids": torch.ones((1, 200), dtype=torch.long), "base": 30, "prefix": False},
              {"ids": torch.ones((1, 180), dtype=torch.long), "base": 30, "prefix": False}]
    assert bench.passes_work(passes) == {"ours_tokens_after_reuse": 410, "ours_forward_passes": 3,
                                         "shared_prefix_passes": 1, "shared_prefix_tokens": 30}


def test_the_report_names_the_processor_and_the_instruction_set_cap(bench):
    figures = {"cpu": {"model_name": "Some CPU", "flags": {"avx2": True, "avx512f": True}}, "cores": 2,
               "cpu_capability": {"ours": "AVX2", "theirs": "AVX2"}, "isa": "avx2",
               "isa_env": {"ATEN_CPU_CAPABILITY": "avx2"}}
    text = " ".join(bench.isa_text(figures).split())
    assert "Some CPU" in text and "ATEN_CPU_CAPABILITY=avx2" in text and "AVX2 in ours, AVX2 in lm-eval" in text
    assert "approximates, but is not" in text
    assert "capped" not in bench.isa_text({**figures, "isa": "native"})
    summary = bench.cpu_summary()
    assert summary["model_name"] and set(summary["flags"]) == set(bench.CPU_FLAGS)


def test_huynh_items_share_each_seeds_examples_and_score_every_rating_spelling():
    from perf._shared_start_items import fed_path, huynh_items, rating_options
    from studies.huynh import recipe as huynh

    if not fed_path().is_file():
        pytest.skip(f"FED data not found at {fed_path()} (set HB_SHARED_DATA)")
    entries = huynh_items(9, seed=2)
    assert entries == huynh_items(9, seed=2) and len({e["id"] for e in entries}) == 9
    by_seed = {}
    for entry in entries:
        item = entry["item"]
        assert item.delimiter == "" and item.options == rating_options() == ("0", " 0", "1", " 1", "2", " 2", "3",
                                                                               " 3", "4", " 4")
        assert item.options[entry["gold"]].isdigit()
        assert item.context.startswith("Task: ") and item.context.endswith("\nRating:")
        assert item.context.count(huynh.FED_EXAMPLE.format(n=3)) == 1
        by_seed.setdefault(entry["id"].rsplit("-", 1)[1], []).append(item.context)
    assert len(by_seed) == 3
    # The items of a seed differ only after the seed's three examples (but for an item of a drawn dialog,
    # which takes the next example instead).
    shared = [Counter(c[: c.rindex("\n\n")] for c in contexts).most_common(1)[0][1] for contexts in by_seed.values()]
    assert sum(shared) >= 7
