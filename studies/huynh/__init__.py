"""Huynh et al. (2023): LLMs as dialogue raters on FED (rating) and DSTC10 (yes/no), with random examples drawn
once per seed (`recipe`); its Tables 2 and 3 of correlations (`paper.json`).
"""
from ..study import Difference, Study
from . import recipe as huynh
from .modes import RECIPES

STUDY = Study(
    recipes=RECIPES,
    preset=huynh.PRESET,
    title="LLMs as dialogue raters on FED (Huynh et al., 2023)",
    source="Huynh et al., Understanding the Effectiveness of Very Large Language Models on Dialog Evaluation "
           "(IWSDS 2023), sections 3-4, appendix B (Table 8, FED) and appendix C (Table 9, DSTC10); FED ratings "
           "(Mehri and Eskenazi, 2020)",
    published={
        "rating": {"fewshot": {"strategy": "random", "k": huynh.K}, "seeds": list(huynh.SEEDS), "top_k": 3,
                   "read": "probabilities"},
        "yes_no": {"fewshot": {"strategy": "random", "k": huynh.K_YES_NO}, "seeds": list(huynh.SEEDS)},
    },
    standing={
        "*": (
            Difference("examples of a drawn dialog's own items", "section 3.3: the same random examples for every "
                       "test point", "the same k for every item, except that an item of a drawn example's own "
                       "conversation takes the next example of the seed's order in its place",
                       "the paper does not say what those items were shown; their own example would show them "
                       "their rating"),
            Difference("example ratings", "one integer rating per example (Table 8: 1/2, 1/2, 2/2)",
                       "the mean of FED's raters rounded half up, which gives Table 8's three ratings",
                       "the paper does not say how FED's five ratings became one"),
        ),
        "rating": (
            Difference("the rated item's block", "Table 8 prints the task line and one example",
                       "after the examples, the rated item laid out as an example is (its turns, \"Response: ...\") "
                       "ending with \"Rating:\", under no header; one blank line between the task line, each "
                       "example and the rated item",
                       "the paper prints no rated item after its example, and its typeset table shows no blank "
                       "lines"),
            Difference("task line of each quality", "Table 8: \"rate how interesting the response is with regards "
                       "to the dialog history\"", "the same sentence with the quality's word; the overall quality "
                       "and the dialog-level qualities as huynh.TURN_WHAT and DIALOG_WHAT word them (after FED's "
                       "questions), \"Given a dialog, rate ...\" at dialog level",
                       "the paper prints the line for interestingness only"),
            Difference("rating weights", "section 3.1: w_i = p_i / sum p_j over the top 3 ratings, p_i called their "
                       "log probabilities", "p_i the ratings' probabilities, each summed over its spellings (\"1\", "
                       "\" 1\")", "a ratio of log probabilities would weigh the less likely rating more; the paper "
                       "does not say which tokens stand for a rating"),
            Difference("the rating kept", "Table 8's caption: the output truncated to the integer 0, 1 or 2",
                       "section 3.1's weighted rating (continuous) for the correlations, the likeliest rating "
                       "beside it as the answer", "the paper states both; its correlations are of section 3.1's"),
        ),
        "yes_no": (
            Difference("example answers", "Table 9: each example answered Yes or No",
                       "Yes when the raters' rounded mean is above the middle of the quality's scale, else No",
                       "the paper does not say how a rated example became Yes or No, and FED holds scale ratings"),
            Difference("yes and no", "p_model(yes) and p_model(no)",
                       "each summed over its spellings (yes, Yes, YES; with and without a leading space)",
                       "the paper does not say which tokens stand for yes and no; Table 9's answer is \"Yes\""),
            Difference("dialogue-level items and background", "Table 9 prints a context and a response, "
                       "\"Background info: none\"",
                       "a dialogue-level item (FED-Dial) without a Response line, asked \"Is the above conversation "
                       "a good conversation?\"; an item with knowledge or a persona shows it as its background",
                       "the paper prints neither a dialogue-level item nor an item with background"),
        ),
    },
)
