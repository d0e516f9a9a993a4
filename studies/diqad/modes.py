"""DiQAD's recipes: its LLM rows' appendix C chat in Chinese with its own three examples, the reply read back as
"分数: N" (rating); the verification question, asked of annotators only in the paper, put to a model in English
with the dialogue as its role/content JSON (yes/no)."""
from __future__ import annotations

from collections.abc import Mapping

import studies.diqad.recipe as diqad

from ..recipes import Rating


class Chat(Rating):
    settings = {"instruction": "", "read": "generation", "max_new_tokens": diqad.MAX_NEW_TOKENS}
    layout = ("diqad-appendix-c-zh/1", diqad.CHAT_TEMPLATES)
    builds = "chat"

    def validate(self, resolved: Mapping) -> None:
        if resolved["read"] != "generation":
            raise ValueError("the diqad preset asks in a chat and reads the reply (分数: N), as the paper's ChatGPT "
                             "and ChatGLM rows: read must be \"generation\"")
        fewshot = resolved.get("fewshot") or {}
        if fewshot.get("strategy", "none") != "none" and fewshot.get("k", 0) > 0:
            raise ValueError("the diqad preset's examples are the three of its appendix C: leave fewshot out")


class Verification(Rating):
    settings = {"dialogue_format": "json", "instruction": diqad.VERIFICATION_INSTRUCTION}
    template = ("diqad-verification-fewshot-en/1", diqad.VERIFICATION_SHOT)


RECIPES = {"rating": Chat(), "yes_no": Verification()}
