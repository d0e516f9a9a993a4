"""Hand-written items shaped like DialogBench's: a two-speaker dialogue, a question,
options of different lengths (some with leading spaces), rendered as prompts."""

from modeleval.scorers import prompts
from modeleval.scorers.loglikelihood import MCItem

EN_INSTRUCTION = "Read the dialogue and answer the question."

DIALOGUES = [
    (
        [
            ("speaker1", "I finally finished the marathon last weekend!"),
            ("speaker2", "Congratulations! How long did it take you?"),
            ("speaker1", "Just under four hours. My legs still hurt, but I'm so proud."),
        ],
        "What emotion does speaker1 express?",
        ["pride", "anger and resentment towards the organisers", " fear", "boredom"],
    ),
    (
        [
            ("speaker1", "Could you book me a table for two at an Italian place tonight?"),
            ("speaker2", "Sure. Do you have a preferred time?"),
            ("speaker1", "Around seven thirty, somewhere near the station if possible."),
        ],
        "What is the intent of speaker1?",
        ["restaurant reservation", "book a flight", "cancel an order", " ask for the weather forecast"],
    ),
    (
        [
            ("speaker1", "My laptop keeps shutting down when I open more than a few tabs."),
            ("speaker2", "It might be overheating. Have you cleaned the fan recently?"),
            ("speaker1", "No, I never have. It's about five years old."),
        ],
        "What is the best next response for speaker2?",
        [
            "Then dust in the fan is a likely cause; try cleaning it or using a cooling pad.",
            "I love Italian food.",
            "Five years is a long time for a dog.",
            " You should buy a new phone.",
        ],
    ),
    (
        [
            ("speaker1", "Did you hear that the library is closing early this month?"),
            ("speaker2", "Yes, they're renovating the second floor."),
        ],
        "Premise: the library is being renovated. Does the dialogue entail, contradict, or say nothing about it?",
        ["entailment", "contradiction", "neutral"],
    ),
    (
        [
            ("speaker1", "You're useless, nobody wants to hear your opinion."),
            ("speaker2", "I'm sorry you feel that way."),
        ],
        "Is the first utterance offensive?",
        ["yes", "no"],
    ),
    (
        [
            ("speaker1", "我明天要去北京出差，你知道那边天气怎么样吗？"),
            ("speaker2", "这几天北京降温了，最好带一件厚外套。"),
        ],
        "speaker1明天要去哪里？",
        ["北京", "上海", "广州", "不知道"],
    ),
]


def dialogue_text(turns):
    return prompts.render_dialogue({"speaker": s, "text": t} for s, t in turns)


def mc_items() -> list[MCItem]:
    items = []
    for turns, question, options in DIALOGUES:
        zh = any("\u4e00" <= ch <= "\u9fff" for ch in question)
        template = prompts.MC_LOGLIK_ZH if zh else prompts.MC_LOGLIK_EN
        context = template.format(
            instruction="阅读对话并回答问题。" if zh else EN_INSTRUCTION,
            dialogue=dialogue_text(turns),
            question=question,
        )
        items.append(MCItem(context, tuple(options), delimiter="" if zh else " "))
    return items
