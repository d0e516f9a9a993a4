"""A KoDialogBench run built with its preset: Korean prompts and continuations in the chosen style, the
study listed with where it differs; a Korean benchmark without the preset is refused rather than asked
in English."""
import pytest

import studies
from benchmarks.importers.dialogbench import multiple_choice_form
from benchmarks.models import Benchmark, Item, Task
from modeleval import actions
from modeleval.actions import RunError
from modeleval.models import ModelSpec
from modeleval.modes import multiple_choice
from studies.kodialogbench import recipe as kodialogbench

FORM = multiple_choice_form()  # options come from the items


@pytest.fixture
def korean(db):
    bench = Benchmark.objects.create(slug="kdb", name="KoDialogBench sample", language="ko")
    emotion = Task.objects.create(benchmark=bench, slug="dc_emotion_k-ed", name="Emotion", form=FORM)
    response = Task.objects.create(benchmark=bench, slug="rs_k-sns", name="Response selection", form=FORM)
    turns = [{"speaker": "A", "text": "시험 잘 봤어?"}, {"speaker": "B", "text": "응, 다 맞았어!"}]
    Item.objects.create(task=emotion, external_id="e1", dialogue=turns, source_gold={"answer": "A"},
                        fields={"question": "화자2의 감정은?", "options": {"A": "기쁨", "B": "슬픔", "C": "분노"}})
    Item.objects.create(task=response, external_id="r1", dialogue=turns, source_gold={"answer": "B"},
                        fields={"next_speaker": "A", "question": "화자1의 다음 말로 알맞은 것은?",
                                "options": {"A": "비가 와.", "B": "축하해!", "C": "배고파.", "D": "몰라.",
                                            "E": "안녕."}})
    acts = Task.objects.create(benchmark=bench, slug="dc_dialog_act_k-tdd", name="Dialog act", dimension="Dialog Act",
                               form=FORM)
    Item.objects.create(task=acts, external_id="a1", dialogue=[{"speaker": "2", "text": "추워졌대."},
                                                                {"speaker": "1", "text": "아 진짜?"}],
                        source_gold={"answer": "B"},
                        fields={"question": "보기 중 대화의 마지막 발화의 의도로 가장 알맞은 것은?",
                                "options": {"A": "지시", "B": "단언", "C": "언약", "D": "표현"}})
    return bench


def start(bench, **settings):
    spec, _ = ModelSpec.objects.get_or_create(name="stand-in", source="stand-in", sha256="0" * 64)
    return actions.start_run(model=spec, benchmark=bench, mode="loglikelihood", enqueue=False, settings=settings)


def test_preset_run_asks_the_korean_prompts(korean):
    run = start(korean, preset="kodialogbench", style="option_numbers")
    assert run.settings["rule"] == "acc" and run.prompt_version == "kodialogbench-option_numbers-ko/2"
    requests = {item.external_id: (variant, prompt) for item, variant, prompt in
                multiple_choice.requests(run, list(Item.objects.filter(task__benchmark=korean).select_related("task")))}
    assert requests["e1"][1] == ("[대화]\n화자1: 시험 잘 봤어?\n화자2: 응, 다 맞았어!\n\n[보기]\n1) 기쁨\n2) 슬픔\n3) "
                                 "분노\n\n질문: 화자2의 감정은?\n정답:")
    protocol = studies.protocol(run.mode, run.settings)
    assert protocol["preset"] == "kodialogbench"
    assert {d["setting"] for d in protocol["differences"]} == {"class descriptions", "speaker numbers", "human figure",
                                                               "style"}
    assert "could not be read" not in str(protocol)
    direct = start(korean, preset="kodialogbench")
    assert direct.settings["style"] == "by_task"
    assert "style" not in {d["setting"] for d in studies.protocol(direct.mode, direct.settings)["differences"]}
    prompts = {item.external_id: prompt for item, _, prompt in
               multiple_choice.requests(direct,
                                        list(Item.objects.filter(task__benchmark=korean).select_related("task")))}
    assert prompts["r1"] == "화자1: 시험 잘 봤어?\n화자2: 응, 다 맞았어!\n화자1:"
    # Each task in the study's method: the dialog acts with their descriptions, the corpus's speaker numbers kept.
    assert prompts["a1"].startswith("[대화]\n화자2: 추워졌대.\n화자1: 아 진짜?\n\n[보기]\n지시: 상대에게 충고,")
    assert prompts["e1"] == "화자1: 시험 잘 봤어?\n화자2: 응, 다 맞았어!\n\n질문: 화자2의 감정은?\n정답:"
    item = Item.objects.get(external_id="r1")
    _, continuations = kodialogbench.prompt_and_continuations(item.dialogue, item.fields, item.fields["options"],
                                                              direct.settings["style"], item.task.dimension)
    assert continuations == ("비가 와.", "축하해!", "배고파.", "몰라.", "안녕.")


def test_a_korean_benchmark_is_never_asked_in_english(korean):
    with pytest.raises(RunError, match="no loglikelihood template in language 'ko'"):
        start(korean)
    with pytest.raises(RunError, match="style must be one of"):
        start(korean, preset="kodialogbench", style="free")


@pytest.mark.model
@pytest.mark.slow
def test_packaged_model_scores_each_task_in_its_method(packaged, korean):
    """The packaged model through the preset, end to end: each option's continuation after the study's prompt, the
    highest summed log-likelihood the answer (acc)."""
    from modeleval.models import Prediction
    from tests.modeleval.test_scoring import sync_run

    run = sync_run(packaged, korean, mode="loglikelihood", settings={"preset": "kodialogbench"})
    rows = {p.item.external_id: p for p in Prediction.objects.filter(run=run).select_related("item")}
    assert set(rows) == {"e1", "r1", "a1"}
    assert [o["continuation"] for o in rows["a1"].options] == [" 지시", " 단언", " 언약", " 표현"]
    assert [o["continuation"] for o in rows["r1"].options] == [" 비가 와.", " 축하해!", " 배고파.", " 몰라.", " 안녕."]
    assert rows["a1"].options[0]["context"].startswith("[대화]\n화자2: 추워졌대.")
    for row in rows.values():
        best = max(row.options, key=lambda o: o["logprob"])
        assert row.answer == best["key"] and row.correct == (row.answer == row.gold)
