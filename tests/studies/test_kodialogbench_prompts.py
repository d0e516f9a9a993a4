"""KoDialogBench's prompts (Jang et al. 2024, section 4 and appendix B: speaker tags "화자N:", "질문:", "정답:",
response selection ending with the next speaker's tag, 2 to 19 classes) and its two averages (Table 4: the
mean of the six comprehension task means; and the mean of the 14 comprehension sets)."""
import re

import pytest

from studies.kodialogbench import recipe as kdb

TURNS = [{"speaker": "A", "text": "오늘 날씨 정말 좋다."}, {"speaker": "B", "text": "응, 산책 가자!"}]
EMOTIONS = {"A": "기쁨", "B": "슬픔", "C": "분노"}


def test_direct_style_scores_each_class_after_the_answer_marker():
    prompt, continuations = kdb.prompt_and_continuations(TURNS, {"question": "화자1의 감정은?"}, EMOTIONS, "direct")
    assert prompt == "화자1: 오늘 날씨 정말 좋다.\n화자2: 응, 산책 가자!\n\n질문: 화자1의 감정은?\n정답:"
    assert continuations == ("기쁨", "슬픔", "분노")


def test_class_description_lists_the_classes_between_the_dialogue_and_the_question():
    prompt, continuations = kdb.prompt_and_continuations(TURNS, {"question": "화자1의 감정은?"}, EMOTIONS,
                                                         "class_description")
    assert prompt == ("[대화]\n화자1: 오늘 날씨 정말 좋다.\n화자2: 응, 산책 가자!\n\n"
                      "[보기]\n기쁨\n슬픔\n분노\n\n질문: 화자1의 감정은?\n정답:")
    assert continuations == ("기쁨", "슬픔", "분노")
    # An item's own descriptions (the released data's option_description pairs) are the choices' lines.
    described = {"question": "화자1의 감정은?", "option_description": [["기쁨", "즐거운 감정"], ["슬픔", "슬픈 감정"],
                                                                      ["분노", "화난 감정"]]}
    prompt, _ = kdb.prompt_and_continuations(TURNS, described, EMOTIONS, "class_description")
    assert "\n\n[보기]\n기쁨: 즐거운 감정\n슬픔: 슬픈 감정\n분노: 화난 감정\n\n질문:" in prompt


def test_option_numbers_score_the_numbers():
    prompt, continuations = kdb.prompt_and_continuations(TURNS, {"question": "화자1의 감정은?"}, EMOTIONS,
                                                         "option_numbers")
    assert prompt == ("[대화]\n화자1: 오늘 날씨 정말 좋다.\n화자2: 응, 산책 가자!\n\n"
                      "[보기]\n1) 기쁨\n2) 슬픔\n3) 분노\n\n질문: 화자1의 감정은?\n정답:")
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


# --- appendix B's own examples --------------------------------------------------------------------------------
# The Korean lines of each example as appendix B prints them. The two-column print breaks lines inside words
# ("속마음 을", "감정 은무엇인가") and interleaves each line's English translation, so the prompt is compared with
# the appendix character for character apart from whitespace, line by line in order; its line layout, blank
# lines included (the released utils.py's, which the print does not show), is held exactly by the string itself.


def turns(*lines):
    return [{"speaker": speaker, "text": text} for speaker, text in (line.split(": ", 1) for line in lines)]


def appendix(paper, section, following):
    text = paper("kodialogbench.txt")
    return text[text.index(section):text.index(following, text.index(section))]


def assert_printed(section, prompt):
    """Every line of the prompt appears in the appendix's example, in order, character for character apart
    from whitespace."""
    printed, at = re.sub(r"\s", "", section), 0
    for line in filter(None, prompt.split("\n")):
        found = printed.find(re.sub(r"\s", "", line), at)
        assert found >= 0, f"not printed in this order in appendix B: {line!r}"
        at = found + len(re.sub(r"\s", "", line))


B1 = turns("화자2: 그동안 많이 힘들었겠군요.", "화자1: 맞아. 근데 이젠 가족들에게 속마음을 털어놓을 수 있어 기뻐.",
           "화자2: 가족들에게 마음을 털어 놓아 편안하시군요.")
K_ED = {"A": "불안", "B": "슬픔", "C": "당황", "D": "분노", "E": "상처", "F": "기쁨"}  # Table 8's K-ED classes


def test_appendix_b1_direct_prompting(paper):
    prompt, continuations = kdb.prompt_and_continuations(
        B1, {"question": "대화에서 화자1이 느끼는 감정은 무엇인가?"}, K_ED, kdb.BY_TASK, "Emotion")
    assert prompt == ("화자2: 그동안 많이 힘들었겠군요.\n화자1: 맞아. 근데 이젠 가족들에게 속마음을 털어놓을 수 있어 "
                      "기뻐.\n화자2: 가족들에게 마음을 털어 놓아 편안하시군요.\n\n질문: 대화에서 화자1이 느끼는 감정은 "
                      "무엇인가?\n정답:")
    assert continuations == tuple(K_ED.values())
    assert_printed(appendix(paper, "B.1. Direct Prompting", "B.2."), prompt)


def test_the_question_keeps_pointing_at_the_speaker_it_names():
    """Appendix B.1 opens with 화자2: numbering speakers by who speaks first would make the question's 화자1 the
    other speaker. Numbered speakers keep their numbers; unnumbered ones are numbered by first appearance."""
    question = {"question": "대화에서 화자1이 느끼는 감정은 무엇인가?"}
    prompt, _ = kdb.prompt_and_continuations(B1, question, K_ED, "direct")
    assert prompt.startswith("화자2: 그동안") and "\n화자1: 맞아." in prompt
    by_digit = [{"speaker": t["speaker"][-1], "text": t["text"]} for t in B1]  # the corpus's "2", "1"
    assert kdb.prompt_and_continuations(by_digit, question, K_ED, "direct")[0] == prompt
    named = [{"speaker": {"화자2": "상담사", "화자1": "내담자"}[t["speaker"]], "text": t["text"]} for t in B1]
    assert kdb.speaker_numbers(named) == {"상담사": 1, "내담자": 2}
    with pytest.raises(ValueError, match="carry no number"):
        kdb.speaker_numbers([*B1, {"speaker": "상담사", "text": "네."}])
    with pytest.raises(ValueError, match="names 화자3, whom the dialogue does not have"):
        kdb.prompt_and_continuations(B1, {"question": "화자3의 감정은?"}, K_ED, "direct")


def test_appendix_b2_class_descriptions(paper):
    dialogue = turns("화자2: 잠깐 일시적으로 추워진 거래 키키", "화자1: 아 진짜? 다행이다",
                     "화자1: 한파라고 해서 진짜 오잉 했잖아!", "화자2: 나도 한파 주의보 문자 와서 당황함")
    acts = {"A": "지시", "B": "단언", "C": "언약", "D": "표현"}  # K-TDD's dialog acts (Table 8)
    prompt, continuations = kdb.prompt_and_continuations(
        dialogue, {"question": "보기 중 대화의 마지막 발화의 의도로 가장 알맞은 것은?"}, acts, kdb.BY_TASK,
        "Dialog Act")
    assert prompt == ("[대화]\n화자2: 잠깐 일시적으로 추워진 거래 키키\n화자1: 아 진짜? 다행이다\n화자1: 한파라고 해서 "
                      "진짜 오잉 했잖아!\n화자2: 나도 한파 주의보 문자 와서 당황함\n\n[보기]\n"
                      "지시: 상대에게 충고, 제안, 명령, 요구, 질문, 부탁 등을 하는 발화\n"
                      "단언: 자신의 의견을 진술, 주장하거나 상대의 의견을 반박하는 발화\n"
                      "언약: 상대와 약속을 하거나 상대의 요청을 거절하는 발화\n"
                      "표현: 인사, 감사, 사과, 긍정 및 부정 감정 표현 등을 하는 발화\n\n"
                      "질문: 보기 중 대화의 마지막 발화의 의도로 가장 알맞은 것은?\n정답:")
    assert continuations == ("지시", "단언", "언약", "표현")
    assert_printed(appendix(paper, "B.2. Direct Prompting with Class Descriptions", "B.3."), prompt)


def test_appendix_b3_option_prompting(paper):
    dialogue = turns(
        "화자1: 이렇게 늦게까지 뭐하세요?", "화자2: 요리하고 있었어요! 당신은요?", "화자1: 개 산책시키고 있어요.",
        "화자2: 이렇게 늦게까지! 그냥 요리 연습 중이에요. 몇 살이에요?", "화자1: 이 늦은 시간에 타코를 만드시네요.",
        "화자2: 네! 나 타코 좋아해요! 제가 싫어하는 건 별로 없어요, 23살이에요.", "화자1: 어디 사세요?",
        "화자2: 지금은 오리건주에 살고 있지만 올해 전세계를 돌아다녔어요.", "화자1: 앨라배마에 가보셨어요?",
        "화자2: 네. 거기서 먹은 타코가 정말 맛있었어요! 어디에 사세요?", "화자1: 몽고메리에 살고 있어요.",
        "화자2: 요트를 거기 근처에 보관하고 있어요. 지금은 빌려주고 있어요.", "화자1: 요트가 멋지네요.")
    facts = {"A": "3개월 후에 세 쌍둥이를 출산할 예정입니다.",
             "B": "빨간색에 파란색 줄무늬가 있어 레이스할 때 반짝반짝 빛납니다.",
             "C": "저는 여행을 정말 좋아합니다.", "D": "가는 곳마다 온갖 종류의 음식을 다 먹어봤어요."}
    prompt, continuations = kdb.prompt_and_continuations(
        dialogue, {"question": "보기 중 화자2에 관한 서술로 옳은 것은?"}, facts, kdb.BY_TASK, "Fact")
    lines = prompt.split("\n")
    assert lines[:2] == ["[대화]", "화자1: 이렇게 늦게까지 뭐하세요?"] and lines[14:16] == ["", "[보기]"]
    assert lines[16:] == ["1) 3개월 후에 세 쌍둥이를 출산할 예정입니다.",
                          "2) 빨간색에 파란색 줄무늬가 있어 레이스할 때 반짝반짝 빛납니다.",
                          "3) 저는 여행을 정말 좋아합니다.", "4) 가는 곳마다 온갖 종류의 음식을 다 먹어봤어요.", "",
                          "질문: 보기 중 화자2에 관한 서술로 옳은 것은?", "정답:"]
    assert continuations == ("1", "2", "3", "4")
    assert_printed(appendix(paper, "B.3. Option Prompting", "B.4."), prompt)


def test_appendix_b4_response_selection(paper):
    dialogue = turns("화자2: 요새 샐러드 파는 가게", "화자2: 많아졌따", "화자1: 맞아 그리고 진짜",
                     "화자1: 퀄리티도 좋더라 요새는", "화자2: 응 매날 사먹고 싶게 생겼어", "화자2: 샐러드인데도",
                     "화자1: 근데 가격도", "화자1: 비싸더라고...")
    candidates = {"A": "그니까 좀 비싸", "B": "오늘 날씨 좋다", "C": "나 내일 출근해"}
    prompt, continuations = kdb.prompt_and_continuations(dialogue, {"next_speaker": "화자2"}, candidates, kdb.BY_TASK,
                                                         "Response Selection")
    assert prompt == "\n".join(f"{t['speaker']}: {t['text']}" for t in dialogue) + "\n화자2:"
    assert continuations == tuple(candidates.values())
    assert_printed(appendix(paper, "B.4. Response Selection Prompting", "C. Detailed Results"), prompt)


def test_each_task_in_the_papers_method():
    """Section 4.1.2: dialog acts with class descriptions, fact identification by option numbers, response
    selection by completion, every other task directly."""
    assert kdb.style_of(kdb.BY_TASK, "Dialog Act", False) == "class_description"
    assert kdb.style_of(kdb.BY_TASK, "fact", False) == "option_numbers"
    assert kdb.style_of(kdb.BY_TASK, "Topic", False) == "direct"
    assert kdb.style_of(kdb.BY_TASK, "Topic", True) == "response_selection"
    assert kdb.style_of("direct", "Dialog Act", False) == "direct"
