"""A KoDialogBench run built with its preset: Korean prompts and continuations in the chosen style, the
study listed with where it differs; a Korean benchmark without the preset is refused rather than asked
in English."""
import pytest

from benchmarks.importers.dialogbench import multiple_choice_form
from benchmarks.models import Benchmark, Item, Task
from modeleval import actions, studies
from modeleval.modes import multiple_choice
from modeleval.actions import RunError
from modeleval.models import ModelSpec
from modeleval.scorers import kodialogbench

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
                        fields={"next_speaker": "A", "question": "화자1의 다음 말로 알맞은 것은?", "options": {"A": "비가 와.", "B": "축하해!", "C": "배고파.",
                                                                 "D": "몰라.", "E": "안녕."}})
    return bench


def start(bench, **settings):
    spec, _ = ModelSpec.objects.get_or_create(name="stand-in", source="stand-in", sha256="0" * 64)
    return actions.start_run(model=spec, benchmark=bench, mode="loglikelihood", enqueue=False, settings=settings)


def test_preset_run_asks_the_korean_prompts(korean):
    run = start(korean, preset="kodialogbench", style="option_numbers")
    assert run.settings["rule"] == "acc" and run.prompt_version == "kodialogbench-option_numbers-ko/1"
    requests = {item.external_id: (variant, prompt) for item, variant, prompt in
                multiple_choice.requests(run, list(Item.objects.filter(task__benchmark=korean).select_related("task")))}
    assert requests["e1"][1] == "화자1: 시험 잘 봤어?\n화자2: 응, 다 맞았어!\n질문: 화자2의 감정은?\n1. 기쁨\n2. 슬픔\n3. 분노\n정답:"
    protocol = studies.protocol(run.mode, run.settings)
    assert protocol["preset"] == "kodialogbench"
    assert {d["setting"] for d in protocol["differences"]} == {"template wording", "human figure"}
    direct = start(korean, preset="kodialogbench")
    prompts = {item.external_id: prompt for item, _, prompt in
               multiple_choice.requests(direct, list(Item.objects.filter(task__benchmark=korean).select_related("task")))}
    assert prompts["r1"] == "화자1: 시험 잘 봤어?\n화자2: 응, 다 맞았어!\n화자1:"
    item = Item.objects.get(external_id="r1")
    _, continuations = kodialogbench.prompt_and_continuations(item.dialogue, item.fields, item.fields["options"],
                                                              direct.settings["style"])
    assert continuations == ("비가 와.", "축하해!", "배고파.", "몰라.", "안녕.")


def test_a_korean_benchmark_is_never_asked_in_english(korean):
    with pytest.raises(RunError, match="no loglikelihood template in language 'ko'"):
        start(korean)
    with pytest.raises(RunError, match="style must be one of"):
        start(korean, preset="kodialogbench", style="free")
