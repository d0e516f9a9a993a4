"""Word counts for every script the studies use: unspaced Chinese counts its characters, spaced text (English,
Korean) its words; the self-chat report's utterance lengths use that count and say which they needed."""
import pytest

from metrics import scripts_counted, word_count
from reports.sections.selfchat import selfchat_section


@pytest.mark.parametrize(("text", "words"), [
    ("I passed the exam today!", 5),
    ("我今天通过了考试！", 8),                   # 8 characters, the full-width ! is no word
    ("你好， world 2024", 4),                    # 2 characters, "world", "2024"
    ("오늘 시험에 합격했어요!", 3),               # Korean is spaced: its words are the runs between spaces
    ("東京へ行きます。", 7),                      # kana and kanji, the ideographic full stop no word
    ("  ", 0), ("……", 0), ("— ok —", 1),
])
def test_word_count(text, words):
    assert word_count(text) == words


def test_a_chinese_utterance_is_not_one_word():
    assert len("这个回答没有解决用户的问题".split()) == 1  # noqa: SIM905 -- str.split is what the report counted before
    assert word_count("这个回答没有解决用户的问题") == 13


def test_scripts_counted():
    assert scripts_counted(["hello there", "오늘 좋아요"]) == "spaces"
    assert scripts_counted(["你好", "谢谢你"]) == "characters"
    assert scripts_counted(["你好", "thanks"]) == "characters and spaces"
    assert scripts_counted([]) == "spaces"


def test_selfchat_utterance_lengths_count_chinese_by_characters():
    seed = ["你好", "你好呀"]
    dialogues = {"item_id": [1, 2], "system": ["zh-bot", "en-bot"],
                 "utterances": [seed + ["我今天很开心", "为什么呢"], ["hi", "hello", "I am fine", "good to hear that"]],
                 "seed_utterances": [2, 2], "loop_start": [None, None], "labels": []}
    section = selfchat_section(dialogues)
    rows = {row["system"]: row for row in section["utterance_length"]}
    assert rows["zh-bot"]["words_mean"] == pytest.approx(5.0)  # 6 and 4 characters
    assert rows["zh-bot"]["words_counted_by"] == "characters"
    assert rows["en-bot"]["words_mean"] == pytest.approx(3.5) and rows["en-bot"]["words_counted_by"] == "spaces"
    assert "each Chinese character" in section["note"]
