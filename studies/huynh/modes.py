"""Huynh et al.'s recipes: examples chosen at random (3 for FED's ratings, 4 for the DSTC10 yes/no runs), the choice
repeated over seeds (one variant each), rated by the FED raters' mean; the task line is the appendix's, written per
quality (Table 8's layout in rating mode, Table 9's in yes/no mode)."""
from __future__ import annotations

import studies.huynh.recipe as huynh

from ..recipes import Rating


class RatedExamples(Rating):
    builds = "rated_examples"
    rated_examples = True

    def __init__(self, k: int, layout: tuple[str, dict]):
        self.settings = {"fewshot": {"strategy": "random", "k": k, "fixed_ids": []}, "seeds": list(huynh.SEEDS),
                         "instruction": ""}
        self.layout = layout


RECIPES = {"rating": RatedExamples(huynh.K, ("huynh-fed-table8-en/2", huynh.TEMPLATES)),
           "yes_no": RatedExamples(huynh.K_YES_NO, ("huynh-dstc10-table9-en/2", huynh.TEMPLATES))}
