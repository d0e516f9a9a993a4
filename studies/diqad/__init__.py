"""DiQAD (Zhao et al., 2023): dialogue quality 0-2 rated by a chat in Chinese (appendix C, `recipe`); its Tables
3 and 4 (`paper.json`).
"""
from ..study import Difference, Study
from . import recipe as diqad
from .modes import RECIPES

STUDY = Study(
    recipes=RECIPES,
    preset=diqad.PRESET,
    title="DiQAD (Zhao et al., 2023)",
    source="Zhao et al., DiQAD: A Benchmark Dataset for End-to-End Open-domain Dialogue Assessment (EMNLP 2023 "
           "Findings), section 5.1 and appendix C (the Chinese prompt); data: yukunZhao/"
           "Dataset_Dialogue_quality_evaluation",
    published={"rating": {"read": "generation", "system": ""}, "yes_no": {}},
    standing={
        "*": (
            Difference("test set", "a random 10,000-dialogue test split of DiQAD (section 5.1)",
                       "the run's items", "the split is not published: the released files hold the labelled "
                       "dialogues unsplit"),
        ),
        "rating": (
            Difference("the scored dialogue", "appendix C's {{dialogue}}, its layout not printed",
                       "the layout of the appendix's printed examples: \"[{\", each turn's 'role' and 'content' in "
                       "Python's quotes, \"}\" (the first speaker the user, the other the assistant)",
                       "the paper prints the examples, not how a dialogue fills {{dialogue}}"),
            Difference("the box around each dialogue", "appendix C sets each example's dialogue and {{dialogue}} "
                       "apart in a code box (the paper's text here marks it ```)",
                       "the dialogue alone as the user's message, without fences",
                       "the paper does not say that the box was part of the message rather than how the page sets a "
                       "quoted message; no fence is printed inside the examples' text"),
            Difference("reading the reply", "\"分数: N\" as the examples answer; the paper does not say how a reply "
                       "is read", "the last \"分数: N\" (either colon), else the reply's only number among 0-2, else "
                       "unreadable: wrong in Acc, UAR, Kappa, P, R and F1, left out of the correlations",
                       "the paper does not say"),
            Difference("decoding", "ChatGPT (gpt-3.5-turbo-0301) through the API and ChatGLM-6B, settings not "
                       "stated", f"greedy (temperature 0), at most {diqad.MAX_NEW_TOKENS} new tokens",
                       "the paper does not state them"),
            Difference("ChatGPT + CoT", "Table 3's chain-of-thought row", "not offered",
                       "its prompt is not published"),
        ),
        "yes_no": (
            Difference("verification question", "asked of annotators only (Figure 10), never of a model",
                       "an English prompt of ours (diqad.VERIFICATION_INSTRUCTION), examples from the items",
                       "the paper puts no such question to a model"),
        ),
    },
)
