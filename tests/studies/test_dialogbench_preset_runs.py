"""Runs under the DialogBench preset, with the packaged model, on items imported from the released shape."""
import json

import pytest

from benchmarks.actions import import_items
from benchmarks.models import Benchmark
from modeleval import actions, runner, selectors
from modeleval.models import ParseStatus, Prediction, RunState
from studies.dialogbench import recipe as dialogbench

pytestmark = [pytest.mark.model, pytest.mark.slow]

OPTIONS = {"A": "Joy", "B": "Anger", "C": "Fear", "D": "Sadness"}


def released_line(dialogue, question, label):
    values = {"dialogue_content": dialogue, "test_question": question, "option_str": dialogbench.option_str(OPTIONS)}
    return {"prompt_pretrain": dialogbench.PROMPTS["Emotion Classification Pretrain En"].format(**values),
            "prompt_SFT": dialogue + "\n" + dialogbench.PROMPTS["Emotion Classification En"].format(**values),
            "choices": OPTIONS, "label": label}


@pytest.fixture
def released_benchmark(db, tmp_path):
    path = tmp_path / "Emotion_Classification.json"
    lines = [released_line("speaker1: I finally passed my exam!\nspeaker2: "
                           "Congratulations!", "How does speaker1 feel?", "A"),
             released_line("speaker1: Someone scratched my new car.\nspeaker2: Oh no.", "How does speaker1 feel?", "B")]
    path.write_text("\n".join(json.dumps(line) for line in lines))
    import_items(path, None, "db-released")
    return Benchmark.objects.get(slug="db-released")


def sync_run(spec, benchmark, **kwargs):
    run = runner.run_sync(actions.start_run(model=spec, benchmark=benchmark, enqueue=False, **kwargs))
    assert run.state == RunState.FINISHED, run.reason
    return run


def test_perplexity_run_scores_each_choice_after_prompt_pretrain(packaged, released_benchmark):
    run = sync_run(packaged, released_benchmark, settings={"preset": "dialogbench"})
    assert run.prompt_version == "dialogbench-pretrain-en/1"
    assert json.loads(run.prompt_template) == dialogbench.prompts_for("en", "pretrain")
    rows = list(Prediction.objects.filter(run=run).select_related("item"))
    assert len(rows) == 2
    for p in rows:
        assert {o["context"] for o in p.options} == {p.item.fields["prompt_pretrain"]}
        assert [o["continuation"] for o in p.options] == list(OPTIONS.values())  # no delimiter
        best = max(p.options, key=lambda o: o["logprob"] / o["n_tokens"])
        assert p.answer == p.answer_per_token == best["key"] and p.parse_status == ParseStatus.SCORED


def test_generation_run_asks_prompt_sft_and_reports_both_accuracies(packaged, released_benchmark):
    run = sync_run(packaged, released_benchmark, mode="generate", settings={"preset": "dialogbench"},
                   position_policy="gold_at_each_position")
    assert run.settings["max_new_tokens"] == 128
    rows = list(Prediction.objects.filter(run=run).select_related("item"))
    assert len(rows) == 8  # 2 items, the gold at each of 4 positions
    for p in rows:
        extraction = p.probabilities["extraction"]
        assert (extraction["hard"], extraction["easy"]) == dialogbench.extract_choice(p.raw_output, "en")
        assert p.answer == (extraction["easy"] or "")
        sft = p.item.fields["prompt_SFT"]
        if p.variant == p.item.source_gold["answer"]:  # the gold where it was: the options as given
            assert sft in p.prompt
        else:
            assert sft.split("【Candidate options】")[0] in p.prompt and "【Candidate options】A. " in p.prompt
    summary = selectors.run_summary(run)
    figures = summary["tasks"]["emotion_detection"]
    graded = [p for p in rows if p.gold]
    assert figures["accuracy"] == pytest.approx(sum(p.answer == p.gold for p in graded) / len(graded))
    assert figures["accuracy_hard"] == pytest.approx(
        sum(p.probabilities["extraction"]["hard"] == p.gold for p in graded) / len(graded))
    assert summary["overall_accuracy_hard"] == figures["accuracy_hard"]


def test_a_preset_run_with_a_template_that_is_not_its_prompts_is_refused(packaged, released_benchmark):
    with pytest.raises(actions.RunError, match="JSON object of task name -> prompt"):
        actions.start_run(model=packaged, benchmark=released_benchmark, mode="generate",
                          settings={"preset": "dialogbench"}, prompt_template="{dialogue}\nAnswer:", enqueue=False)
    # A template of the preset's own shape is the run's prompts.
    custom = {"Emotion Classification": "{dialogue_content}\nFeeling? {option_str}"}
    run = actions.start_run(model=packaged, benchmark=released_benchmark, mode="generate",
                            settings={"preset": "dialogbench"}, prompt_template=json.dumps(custom), enqueue=False)
    assert run.prompt_version == "custom"


@pytest.mark.parametrize("name, evaluator, policy, rendered, special", [
    ("smollm2-135m-instruct", "default", "as_is", lambda sft: sft, True),
    ("llama2-7b-chat", "llama", "as_is", lambda sft: dialogbench.llama2_prompt(sft, "<s>"), False),
    ("qwen-7b-chat", "qwen", "gold_at_each_position", lambda sft: f"<chat>{sft}</chat>", False),
])
def test_each_model_is_asked_as_the_released_evaluator_of_its_name_asks_it(released_benchmark, monkeypatch, name,
                                                                          evaluator, policy, rendered, special):
    """src/evaluate.py: a model without an evaluator of its own gets prompt_SFT as it is (no chat template, the
    tokenizer's special tokens added); LLaMA-2 the released template with its default system prompt; Qwen its own
    chat, every item asked with the answer at each position, pooled (src/qwen.py) in the headline table."""
    from types import SimpleNamespace

    from modeleval import inference
    from modeleval.models import ModelSpec
    from reports.contract import ReportOptions
    from reports.render import render
    from reports.service import make_report

    asked = []

    def generate(model, tokenizer, prompts, add_special_tokens=False, **kwargs):
        asked.extend((p, add_special_tokens) for p in prompts)
        return ["A"] * len(prompts)

    monkeypatch.setattr(inference, "load", lambda spec: SimpleNamespace(model=None, tokenizer=SimpleNamespace(
        bos_token="<s>")))
    monkeypatch.setattr(inference, "chat_text", lambda tokenizer, spec, user, system="": f"<chat>{user}</chat>")
    monkeypatch.setattr(inference.generation, "generate", generate)
    spec = ModelSpec.objects.create(name=name, sha256="f" * 64)
    run = sync_run(spec, released_benchmark, mode="generate", settings={"preset": "dialogbench"})
    assert (run.settings["evaluator"], run.position_policy) == (evaluator, policy)
    rows = list(Prediction.objects.filter(run=run).select_related("item"))
    assert len(rows) == (8 if policy != "as_is" else 2)
    for p in rows:
        if p.variant in ("", p.item.source_gold["answer"]):
            assert p.prompt == rendered(p.item.fields["prompt_SFT"])
    assert {flag for _, flag in asked} == {special}
    report = make_report("db-released", options=ReportOptions(n_resamples=10))
    [headline] = report["multiple_choice"]["headline"]
    graded = [p for p in rows if p.gold]
    assert headline["per_task"]["emotion_detection"] == pytest.approx(
        sum(p.answer == p.gold for p in graded) / len(graded))
    assert ("pooled" in headline["figure"]) == (policy != "as_is") and headline["evaluator"] == evaluator
    assert ("pooled over positions" in render(report, "html")) == (policy != "as_is")
