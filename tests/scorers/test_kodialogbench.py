"""KoDialogBench's prompts (Jang et al. 2024, section 4 and appendix B: speaker tags "화자N:", "질문:", "정답:",
response selection ending with the next speaker's tag, 2 to 19 classes) and its two averages (Table 4: the
mean of the six comprehension task means; and the mean of the 14 comprehension sets)."""
import pytest

from modeleval.scorers import kodialogbench as kdb

TURNS = [{"speaker": "A", "text": "오늘 날씨 정말 좋다."}, {"speaker": "B", "text": "응, 산책 가자!"}]
EMOTIONS = {"A": "기쁨", "B": "슬픔", "C": "분노"}


def test_direct_style_scores_each_class_after_the_answer_marker():
    prompt, continuations = kdb.prompt_and_continuations(TURNS, {"question": "화자1의 감정은?"}, EMOTIONS, "direct")
    assert prompt == "화자1: 오늘 날씨 정말 좋다.\n화자2: 응, 산책 가자!\n질문: 화자1의 감정은?\n정답:"
    assert continuations == ("기쁨", "슬픔", "분노")


def test_class_description_lists_the_classes():
    prompt, continuations = kdb.prompt_and_continuations(TURNS, {"question": "화자1의 감정은?"}, EMOTIONS,
                                                         "class_description")
    assert prompt.endswith("\n질문: 화자1의 감정은?\n보기: 기쁨, 슬픔, 분노\n정답:")
    assert continuations == ("기쁨", "슬픔", "분노")


def test_option_numbers_score_the_numbers():
    prompt, continuations = kdb.prompt_and_continuations(TURNS, {"question": "화자1의 감정은?"}, EMOTIONS,
                                                         "option_numbers")
    assert prompt.endswith("\n질문: 화자1의 감정은?\n1. 기쁨\n2. 슬픔\n3. 분노\n정답:")
    assert continuations == ("1", "2", "3")


def test_response_selection_ends_with_the_next_speakers_tag():
    candidates = {"A": "좋아, 공원으로 가자.", "B": "나는 피자를 좋아해.", "C": "내일 시험이야.", "D": "고마워.",
                  "E": "비가 온대."}
    prompt, continuations = kdb.prompt_and_continuations(TURNS, {"next_speaker": "A"}, candidates, "direct")
    assert prompt == "화자1: 오늘 날씨 정말 좋다.\n화자2: 응, 산책 가자!\n화자1:"
    assert continuations == tuple(candidates.values())
    # A speaker who has not spoken yet gets the next number.
    prompt, _ = kdb.prompt_and_continuations(TURNS, {"next_speaker": "C"}, candidates, "class_description")
    assert prompt.endswith("\n화자3:")


def test_a_korean_item_never_gets_an_english_template():
    with pytest.raises(ValueError, match="Korean question"):
        kdb.prompt_and_continuations(TURNS, {}, EMOTIONS, "direct")


def test_up_to_19_classes():
    dialog_acts = {f"c{n}": f"행위{n}" for n in range(19)}
    _, continuations = kdb.prompt_and_continuations(TURNS, {"question": "화행은?"}, dialog_acts, "direct")
    assert len(continuations) == 19
    with pytest.raises(ValueError, match="2 to 19"):
        kdb.prompt_and_continuations(TURNS, {"question": "화행은?"}, {**dialog_acts, "x": "기타"}, "direct")


def test_both_averages():
    # Three sets over two tasks: the task means are 0.5 and 0.8, so the two averages differ.
    sets = {"topic/k-sns": 0.4, "topic/socialdial": 0.6, "emotion/k-ed": 0.8}
    tasks = {"topic/k-sns": "topic", "topic/socialdial": "topic", "emotion/k-ed": "emotion"}
    result = kdb.averages(sets, tasks)
    assert result["task_means"] == pytest.approx({"topic": 0.5, "emotion": 0.8})
    assert result["mean_of_task_means"] == pytest.approx(0.65)
    assert result["mean_of_sets"] == pytest.approx(0.6)
