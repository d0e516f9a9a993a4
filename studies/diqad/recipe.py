"""DiQAD (Zhao et al., 2023): the dialogue-quality question put to a model as the paper put it to its LLM rows
(Table 3: ChatGPT, ChatGLM-6B), and its needs-verification question.

Quality (its appendix C, the Chinese prompt): a chat. The user states the task and the 0/1/2 criteria, the
assistant acknowledges, then three solved examples, each a user turn holding a dialogue and the
assistant's "分数: N", then the dialogue to score as the last user turn. The texts are the appendix's
character for character (the print's code boxes around the dialogues are typesetting, not text). Every
dialogue, the examples' and the one scored, is written as the appendix prints its examples
(`chat_dialogue`): "[{", then each turn's role and content in Python's quotes, then "}". The reply is read
back: the last "分数: N" (`extract_score`).

Verification (not asked of models in the paper): an English instruction of ours, examples from the items,
each the dialogue as role/content JSON followed by "needs verification: yes/no".
"""
from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass

from ..text import prompt_text

PRESET = "diqad"  # settings {"preset": "diqad"} of the rating modes
# Appendix C, the Chinese prompt, as printed.
CHAT_INSTRUCTION = (
    "我会给出来自user和assistant的对话。对话以json格式保存，每项包括了其角色role（user或assistant）和消息内容content。"
    "请根据assistant的表现对其回复质量打分，标准如下：\n\n- 0分，低质量\n- 1分，中等质量\n- 2分，高质量\n\n"
    "注意你只需要输出一个分数代表回复的质量，不需要做任何解释。"
)
CHAT_ACKNOWLEDGEMENT = "好的，请提供对话，我将给出0到2的分数。"
# (the user's question, the assistant's answer), its score.
CHAT_EXAMPLES = (
    (("不超过十字的新闻。快！快！",
      "再短的新闻也很难低于40个字。不超过十字的就是新闻标题，如下香港机场航班大致正常，少量取消部分延误天津一中学生遭班主任体罚"
      "横纹肌溶解金融委全面加大对实体经济的支持力度国庆假期火车票明天开抢"), 0),
    (("平安保险生效7天2万还能退多少",
      "您好，很感谢您的提问，可以全额退款，因为生效7天还属于犹豫期，犹豫期退保是全额退的。希望我的回答能够帮助到您，祝您生活愉快！"),
     1),
    (("那去哪里可以查的到自己有没有被起诉呢",
      "通常去调取信息的话，您可以选择去公安局或是法院，提供您和您要查询的案件或当事人的身份关系，另外还有您的身份证以及户口本，"
      "还有就是说明您要查询的原因（这个法院那边会让您填表或是给您直接进行登记的）。您可以带好这些材料，法院那边都是可以帮您查的。"),
     2),
)
CHAT_ANSWER = "分数: {score}"
CHAT_DIALOGUE = "[{{{turns}}}"  # the examples' layout: "[{" ... "}", as printed
CHAT_TURN = "'role': {role}, 'content': {content}"
MAX_NEW_TOKENS = 16  # "分数: N" and some room; the paper states no limit
# What a run stores as its template: the strings above, by name.
CHAT_TEMPLATES = {"instruction": CHAT_INSTRUCTION, "acknowledgement": CHAT_ACKNOWLEDGEMENT, "answer": CHAT_ANSWER,
                  "dialogue": CHAT_DIALOGUE, "turn": CHAT_TURN,
                  **{f"example_{n}": json.dumps([*turns, score], ensure_ascii=False)
                     for n, (turns, score) in enumerate(CHAT_EXAMPLES, start=1)}}

VERIFICATION_INSTRUCTION = (
    "You are an expert in assessing dialogues between a user and an expert. Does the expert's answer need "
    "to be verified against external knowledge? The dialogue is a JSON list of turns with a role and a "
    "content. Answer yes or no."
)
VERIFICATION_SHOT = "dialogue: {context}\nneeds verification:{answer}"

_SCORE = re.compile(r"(?:分数|score)\s*[:：]?\s*(-?\d+)", re.IGNORECASE)
_NUMBER = re.compile(r"(?<![\d.])-?\d+(?![\d.])")


def roles(turns: Sequence[dict]) -> list[str]:
    """Each turn's role: the first speaker is the user, every other speaker the assistant (DiQAD's dialogues
    are between a user and an expert)."""
    first = turns[0]["speaker"] if turns else None
    return ["user" if t["speaker"] == first else "assistant" for t in turns]


def dialogue_json(turns: Sequence[dict]) -> str:
    """The dialogue as role/content JSON."""
    return json.dumps([{"role": role, "content": t["text"]} for role, t in zip(roles(turns), turns, strict=True)],
                      ensure_ascii=False)


def chat_dialogue(pairs: Sequence[tuple[str, str]]) -> str:
    """(role, text) pairs as appendix C prints its examples' dialogues."""
    return CHAT_DIALOGUE.format(turns=", ".join(CHAT_TURN.format(role=repr(role), content=repr(text))
                                                for role, text in pairs))


def chat_messages(turns: Sequence[dict]) -> tuple[tuple[str, str], ...]:
    """Appendix C's chat for one dialogue, as (role, content) messages ending with the user's turn."""
    messages = [("user", CHAT_INSTRUCTION), ("assistant", CHAT_ACKNOWLEDGEMENT)]
    for (question, answer), score in CHAT_EXAMPLES:
        messages += [("user", chat_dialogue([("user", question), ("assistant", answer)])),
                     ("assistant", CHAT_ANSWER.format(score=score))]
    scored = chat_dialogue([(role, t["text"]) for role, t in zip(roles(turns), turns, strict=True)])
    return (*messages, ("user", scored))


@dataclass(frozen=True)
class ChatPrompt:
    """A prompt of several chat turns: `asked` is what the model is asked, `text` how a prediction shows it."""
    messages: tuple[tuple[str, str], ...]
    example_ids: tuple[str, ...] = ()

    @property
    def asked(self) -> tuple[tuple[str, str], ...]:
        return self.messages

    @property
    def text(self) -> str:
        return prompt_text(self.messages)


def extract_score(text: str, values: Sequence[int]) -> int | None:
    """The score a reply gives: the last "分数: N" (or "score: N") with N among `values`, else the reply's only
    number among them; None when none (or several different ones) can be read."""
    stated = [int(n) for n in _SCORE.findall(text) if int(n) in values]
    if stated:
        return stated[-1]
    numbers = {int(n) for n in _NUMBER.findall(text)} & set(values)
    return numbers.pop() if len(numbers) == 1 else None
