"""KoDialogBench (Jang et al., 2024): Korean dialogue comprehension and response selection by log-likelihood,
each task in its paper's prompting method (`recipe`); its tables (`paper.json`).
"""
from ..study import Difference, Study
from ..vocabulary import Rule
from . import recipe as kodialogbench
from .modes import RECIPES

STUDY = Study(
    recipes=RECIPES,
    preset=kodialogbench.PRESET,
    title="KoDialogBench (Jang et al., 2024)",
    source=f"Jang, Lee and Yu, KoDialogBench (LREC-COLING 2024), section 4.1.2 and appendix B; {kodialogbench.SOURCE}: "
           "kodialogbench/utils.py (doc_to_text_*), the task yaml files (each task's method; lm-eval multiple_choice, "
           "zero-shot, acc)",
    published={"loglikelihood": {"continuation": "text", "rule": Rule.ACC, "style": kodialogbench.BY_TASK}},
    standing={
        "*": (
            Difference("class descriptions", "each item's own option_description in the released data "
                       "(doc_to_text_direct_prompting_with_description)",
                       "the item's fields.option_description; an item without it lists the descriptions appendix "
                       "B.2 prints for K-TDD's four dialog acts, and any other class by its name alone",
                       "an item imported without the released data's option_description carries no other "
                       "description of its classes"),
            Difference("speaker numbers", "the released data's speaker ids, as the item's question uses them",
                       "the item's own numbers where its speakers are named by number (화자2, 2); speakers named "
                       "otherwise are numbered by first appearance",
                       "an item whose speakers carry no number has no other numbering for its question to use"),
            Difference("human figure", "3 native speakers on the same 50 items per set, the mean of their "
                       "accuracies", "the campaign's raters on the items they answered",
                       "the speakers' answers are not published"),
        ),
    },
)
