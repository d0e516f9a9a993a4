"""BotChat single-dialogue judge: a model shown the first N utterances of each generated dialogue
says whether any is machine-written; its verdicts give a pass@N curve next to the loop detector's."""
import json
import time
from types import SimpleNamespace

import pytest
from django.utils import timezone

from benchmarks.models import Item
from metrics import pass_at_n_stepwise
from modeleval import arena, inference, runner
from modeleval.actions import RunError, start_run
from modeleval.models import Mode, ModelSpec, ParseStatus, Prediction
from modeleval.scorers import selfchat_generation as selfchat
from modeleval.scorers import single
from modeleval.scorers.prompts import template_hash
from modeleval.selfchat_runs import run_selfchat
from modeleval.selfchat_runs.store import _record
from reports.contract import ReportOptions
from reports.render import render
from reports.service import make_report
from studies.botchat.recipe import SEED_UTTERANCES
from tests.selfchat.test_arena import SEED_PAIRS, two_runs  # noqa: F401  (fixture)


@pytest.mark.parametrize("reply, n, expected", [
    ("No", 3, ("no", None)),
    ("no.", 3, ("no", None)),
    ("Yes, 3", 3, ("yes", 2)),
    ("YES - utterance 2 sounds like a bot", 4, ("yes", 1)),
    ("Yes.\nUtterance 4 is too polite.", 4, ("yes", 3)),
    ("Yes, 7", 4, ("yes", None)),  # no utterance 7 was shown
    ("Yes", 4, ("yes", None)),
    ("I think so", 4, (None, None)),
    ("yes or no?\nNo, they all read as human.", 4, ("no", None)),  # a line saying both gives no verdict
    ("", 3, (None, None)),
    ("Nobody can tell", 3, (None, None)),  # "no" must be a word
])
def test_parse_single(reply, n, expected):
    assert single.parse_single(reply, n) == expected


def test_asked_range_stops_at_the_loop():
    assert single.asked_range(6, 2, None) == (range(3, 7), range(7, 7))
    # The loop starts at utterance 4 (0-based): the first 4 utterances hold no repeat, 5 and 6 do.
    assert single.asked_range(6, 2, 4) == (range(3, 5), range(5, 7))
    assert single.asked_range(6, 2, 2) == (range(3, 3), range(3, 7))


def test_pass_at_n_stepwise():
    points = pass_at_n_stepwise([{3: False, 4: True}, {3: True}, {}], range(1, 6))
    assert [(p.n, p.passed, p.total) for p in points] == [(1, 3, 3), (2, 3, 3), (3, 2, 3), (4, 3, 3), (5, 3, 3)]
    assert pass_at_n_stepwise([], [1])[0].share is None
    with pytest.raises(ValueError):
        pass_at_n_stepwise([{}], [0])


class FakeJudge:
    """Says "Yes, 3" to a dialogue that says "robot", cannot decide when the last utterance shown says
    "Waiting", else "No"; keeps the prompts."""

    def __init__(self):
        self.prompts = []

    def __call__(self, model, tokenizer, prompts, **kwargs):
        self.prompts += prompts
        return ["Yes, 3\nbecause" if "robot" in p else "Hard to say" if "Waiting" in shown(p)[-1] else "No"
                for p in prompts]


@pytest.fixture
def stub_judge(monkeypatch):
    judge = FakeJudge()
    monkeypatch.setattr(inference, "load", lambda spec: SimpleNamespace(model=None, tokenizer=None))
    monkeypatch.setattr(inference, "chat_text", lambda tokenizer, spec, user, system="": user)
    monkeypatch.setattr(inference.generation, "generate", judge)
    return judge


def shown(prompt):
    """The numbered utterances a prompt shows."""
    return [line for line in prompt.splitlines() if line[:1].isdigit() and ". " in line]


def test_single_judge_run_asks_each_n_and_short_circuits_loops(two_runs, stub_judge):
    alpha, beta = two_runs
    judge = stub_judge
    run = start_run(model=beta.model, benchmark=alpha.benchmark, mode=Mode.SINGLE_JUDGE, enqueue=False)
    assert run.prompt_version == "single-ai-judge-en/1"
    run = runner.run_sync(run)
    assert run.state == "finished", run.reason
    predictions = {p.item.meta["seed_id"]: p for p in Prediction.objects.filter(run=run).select_related("item")}
    assert predictions.keys() == {"s1", "s2", "s3"}
    looping = predictions["s1"]  # loops at utterance 4: asked at N = 3 and 4, failed without asking at 5 and 6
    assert [(v["n"], v["decided_by"]) for v in looping.options] == [(3, "judge"), (4, "judge"), (5, "loop"),
                                                                    (6, "loop")]
    assert not any(line.startswith("5. ") for p in judge.prompts if "Hi, how" in p for line in shown(p))  # no repeat
    for p in predictions.values():
        texts = [t["text"] for t in p.item.dialogue]
        for verdict in p.options:
            if verdict["decided_by"] == "judge":
                lines = shown(verdict["prompt"])
                assert len(lines) == verdict["n"]  # exactly the first N utterances
                assert lines[-1].endswith(texts[verdict["n"] - 1])
                assert (verdict["parsed"], verdict["index"], verdict["passed"]) == ("yes", 2, False)
            else:
                assert verdict["passed"] is False and verdict["loop_start"] == 4
        assert p.answer == "3" and p.parse_status == ParseStatus.PARSED
        assert json.loads(p.raw_output) == {str(v["n"]): v["reply"] for v in p.options if v["decided_by"] == "judge"}
    assert len(judge.prompts) == 2 + 4 + 4

    beta_run = runner.run_sync(start_run(model=beta.model, benchmark=beta.benchmark, mode=Mode.SINGLE_JUDGE,
                                         enqueue=False))
    beta_predictions = {p.item.meta["seed_id"]: p for p in Prediction.objects.filter(run=beta_run)}
    unsure = beta_predictions["s3"]  # "Waiting for someone?" is utterance 4: that verdict cannot be read
    assert unsure.parse_status == ParseStatus.UNPARSABLE and unsure.answer == "4"
    assert [(v["n"], v["parsed"], v["passed"]) for v in unsure.options] == [
        (3, "no", True), (4, None, False), (5, "no", True), (6, "no", True)]
    assert beta_predictions["s1"].answer == "pass" and beta_predictions["s1"].parse_status == ParseStatus.PARSED

    arena.make_pairs(runs=[alpha, beta], seed=2, benchmark_slug="single-judged")
    curves = {(c["system"], c["judged_by"]): c for c in
              make_report("single-judged", options=ReportOptions(n_resamples=10))["pairwise"]["selfchat"]["pass_at_n"]}
    judged_alpha, judged_beta = curves["alpha", "judge:beta"], curves["beta", "judge:beta"]
    assert [p["passed"] for p in judged_alpha["points"]] == [3, 3, 0, 0, 0, 0]
    assert [p["passed"] for p in judged_beta["points"]] == [3, 3, 3, 2, 3, 3]  # asked anew at each N
    assert (judged_beta["n_judgements"], judged_beta["n_asked"], judged_beta["n_unparsable"]) == (3, 12, 1)
    assert (judged_alpha["n_asked"], judged_alpha["n_unparsable"]) == (10, 0)
    assert ("alpha", "loop_detector") in curves and ("alpha", "humans") in curves


def test_identical_prompts_are_generated_once(db, stub_judge):
    model = ModelSpec.objects.create(name="twin", sha256="t" * 64)
    seed = ["Hi, how are you?", "Fine, thanks. And you?"]
    seeds = [("x1", seed), ("x2", seed)]
    chats = [selfchat.SelfChat(seed + ["Good.", "Busy week?"], 2), selfchat.SelfChat(seed + ["Good.", "Tired?"], 2)]
    settings = {"system_prompt": "Be brief.", "system_prompt_sha256": template_hash("Be brief.")}
    made = _record(model, "seeds.jsonl", None, settings, seeds, chats, [None, None], timezone.now(), 0.0, None)
    run = runner.run_sync(start_run(model=model, benchmark=made.benchmark, mode=Mode.SINGLE_JUDGE, enqueue=False))
    assert run.state == "finished", run.reason
    # N = 3 shows the same three utterances in both dialogues: one generation for both.
    assert len(stub_judge.prompts) == len(set(stub_judge.prompts)) == 3
    prompts = [v["prompt"] for p in Prediction.objects.filter(run=run) for v in p.options if v["n"] == 3]
    assert len(prompts) == 2 and prompts[0] == prompts[1]


def test_single_judge_refuses_arena_pairs(two_runs):
    alpha, beta = two_runs
    benchmark = arena.make_pairs(runs=[alpha, beta], seed=2, benchmark_slug="pairs-only")
    with pytest.raises(RunError) as refused:
        start_run(model=alpha.model, benchmark=benchmark, mode=Mode.SINGLE_JUDGE, enqueue=False)
    assert refused.value.code == "mode_unsuited"


def test_single_judge_end_to_end(packaged, mutual_path):
    start = time.perf_counter()
    runs = [run_selfchat(model=packaged, seeds_path=mutual_path, limit=2, utterances=5, max_new_tokens=cap,
                         system_prompt=prompt, batch_size=2)
            for cap, prompt in ((12, selfchat.DEFAULT_SYSTEM_PROMPT), (16, "Answer like a pirate, in one line."))]
    print(f"two self-chat runs: {time.perf_counter() - start:.0f} s")
    arena.make_pairs(runs=runs, seed=5, benchmark_slug="single-e2e")
    start = time.perf_counter()
    judges = [runner.run_sync(start_run(model=packaged, benchmark=run.benchmark, mode=Mode.SINGLE_JUDGE,
                                        enqueue=False)) for run in runs]
    print(f"two judge runs: {time.perf_counter() - start:.0f} s")
    labels = arena.run_labels(runs)
    report = make_report("single-e2e", options=ReportOptions(n_resamples=10))
    curves = {(c["system"], c["judged_by"]): c for c in report["pairwise"]["selfchat"]["pass_at_n"]}
    for run, judge in zip(runs, judges, strict=True):
        assert judge.state == "finished", judge.reason
        predictions = list(Prediction.objects.filter(run=judge).select_related("item"))
        assert len(predictions) == 2
        verdicts = {}
        for p in predictions:
            asked, looped = single.asked_range(5, SEED_UTTERANCES, p.item.meta["loop_start"])
            assert [v["n"] for v in p.options] == list(asked) + list(looped)
            for v in p.options:
                if v["decided_by"] == "judge":
                    assert len(shown(v["prompt"])) == v["n"]
                    assert (v["parsed"], v["index"]) == single.parse_single(v["reply"], v["n"])
                    assert v["passed"] == (v["parsed"] == "no")
            unparsable = any(v["decided_by"] == "judge" and v["parsed"] is None for v in p.options)
            assert p.parse_status == (ParseStatus.DECIDED if not asked else
                                      ParseStatus.UNPARSABLE if unparsable else ParseStatus.PARSED)
            verdicts[p.item_id] = {v["n"]: v["passed"] for v in p.options}
        print(f"judge on {labels[run.pk]}: {[p.answer for p in predictions]}, "
              f"{[v['reply'] for p in predictions for v in p.options if v['decided_by'] == 'judge'][:3]}")
        curve = curves[labels[run.pk], f"judge:{packaged.name}"]
        assert curve["n_judgements"] == 2 and [p["n"] for p in curve["points"]] == [1, 2, 3, 4, 5]
        assert [p["passed"] for p in curve["points"]] == [p.passed for p in pass_at_n_stepwise(
            list(verdicts.values()), range(1, 6))]
        assert [p["passed"] for p in curve["points"]][:2] == [2, 2]  # the seed alone is human
    html = render(report, "html")
    figure = html.split("<figcaption>pass@N of generated dialogues</figcaption>", 1)[1].split("</svg>", 1)[0]
    assert figure.lstrip().startswith("<svg") and f"judged by {packaged.name}" in figure


# --- few-shot examples for the pairwise judge -------------------------------------------------


def labelled_arena(two_runs, slug):
    """An arena whose items carry their answer: the conversation written by alpha involves a machine."""
    alpha, beta = two_runs
    benchmark = arena.make_pairs(runs=[alpha, beta], seed=3, benchmark_slug=slug)
    for item in Item.objects.filter(task__benchmark=benchmark):
        item.source_gold = {"involves_ai": "1" if item.meta["model_a"] == "alpha" else "2"}
        item.save(update_fields=["source_gold"])
    return benchmark


def pair_prompts_stub(monkeypatch):
    asked = []
    monkeypatch.setattr(inference, "load", lambda spec: SimpleNamespace(model=None, tokenizer=None))
    monkeypatch.setattr(inference, "chat_text", lambda tokenizer, spec, user, system="": user)
    monkeypatch.setattr(inference.generation, "generate",
                        lambda model, tokenizer, prompts, **kw: asked.extend(prompts) or ["Both"] * len(prompts))
    return asked


@pytest.mark.parametrize("strategy", ["random", "bm25_both", "fixed"])
def test_pairwise_fewshot_never_shows_the_item_or_its_twin(two_runs, monkeypatch, strategy):
    benchmark = labelled_arena(two_runs, f"fewshot-{strategy}")
    items = {i.external_id: i for i in Item.objects.filter(task__benchmark=benchmark)}
    asked = pair_prompts_stub(monkeypatch)
    fixed = sorted(items)[:3]
    run = runner.run_sync(start_run(model=two_runs[0].model, benchmark=benchmark, mode=Mode.PAIRWISE, enqueue=False,
                                    settings={"fewshot": {"strategy": strategy, "k": 2, "fixed_ids": fixed}}))
    assert run.state == "finished", run.reason
    judged = [p for p in Prediction.objects.filter(run=run).select_related("item")
              if p.parse_status != ParseStatus.DECIDED]
    assert len(judged) == 4  # alpha loops on s1: those 2 pairs are decided without prompts
    for p in judged:
        sources = {p.item.meta["source_a"], p.item.meta["source_b"]}
        assert len(p.fewshot_ids) == (2 if strategy != "fixed" else len([i for i in fixed if not sources & {
            items[i].meta["source_a"], items[i].meta["source_b"]}][:2]))
        for shot_id in p.fewshot_ids:
            shot = items[shot_id]
            assert shot_id != p.item.external_id and not sources & {shot.meta["source_a"], shot.meta["source_b"]}
        ab, ba = (step["prompt"] for step in p.options)
        # Both orders read the same solved examples, then the pair itself with no answer.
        assert ab.count("Answer:") == ba.count("Answer:") == len(p.fewshot_ids) + 1
        shots_ab, shots_ba = ab.rsplit("Below are two", 1)[0], ba.rsplit("Below are two", 1)[0]
        assert shots_ab == shots_ba
        for shot_id in p.fewshot_ids:
            answer = "Conversation 1" if items[shot_id].meta["model_a"] == "alpha" else "Conversation 2"
            assert f"{texts_of(items[shot_id])}\n\nWhich conversation" in shots_ab
            assert shots_ab.count("Answer: " + answer) >= 1
    assert all(prompt.endswith("Answer:") for prompt in asked)


def texts_of(item):
    return "\n".join(f"{t['speaker']}: {t['text']}" for t in item.fields["conversation_2"])


def test_pairwise_fewshot_needs_labelled_items(two_runs):
    alpha, beta = two_runs
    benchmark = arena.make_pairs(runs=[alpha, beta], seed=3, benchmark_slug="unlabelled")
    with pytest.raises(RunError) as refused:
        start_run(model=alpha.model, benchmark=benchmark, mode=Mode.PAIRWISE, enqueue=False,
                  settings={"fewshot": {"strategy": "random", "k": 2}})
    assert refused.value.code == "no_examples"
    zero_shot = start_run(model=alpha.model, benchmark=benchmark, mode=Mode.PAIRWISE, enqueue=False)
    assert zero_shot.settings["fewshot"] == {"strategy": "none", "k": 0, "fixed_ids": []}
    labelled = labelled_arena(two_runs, "labelled-fixed")
    with pytest.raises(RunError) as refused:
        start_run(model=alpha.model, benchmark=labelled, mode=Mode.PAIRWISE, enqueue=False,
                  settings={"fewshot": {"strategy": "fixed", "k": 1, "fixed_ids": ["p0001", "nope"]}})
    assert refused.value.code == "bad_settings" and "nope" in str(refused.value)
