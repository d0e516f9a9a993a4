"""Rating prompts that share a long start, as two of the project's presets ask a model, scored as the
platform scores them (`scorers.next_word.word_probs`: each rating word, with and without a leading space,
a continuation right after the prompt).

* huynh: Huynh et al.'s FED prompts (Appendix B, Table 8; `studies.huynh.recipe`): the task line, three
  rated FED dialogs drawn once per seed, then the rated item ending with "Rating:"; each item asked once per
  seed (0, 1, 2), so the items of a seed share the task line and its three examples. The items are FED's
  turn-level ones (HB_SHARED_DATA/fed/fed_data.json), rated 0-4 on Overall.
* diqad: DiQAD's appendix C chat (`studies.diqad.recipe`): its instruction, acknowledgement and three solved
  examples, then the dialogue to score as the last user turn, rendered by the model's chat template; the
  answers scored are "分数: 0" to "分数: 2". The dialogues are generated Chinese questions and answers.

Imported by perf/scoring_vs_lm_eval.py and the scorer's tests.
"""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

from modeleval.scorers.loglikelihood import MCItem
from modeleval.scorers.rating import SPELLINGS
from studies.diqad import recipe as diqad
from studies.huynh import recipe as huynh

FED_RATINGS = (0, 1, 2, 3, 4)  # FED's Overall scale


def fed_path() -> Path:
    return Path(os.environ.get("HB_SHARED_DATA", "/work/shared/data")) / "fed" / "fed_data.json"


def _turns(context: str) -> list[dict]:
    turns = []
    for line in context.split("\n"):
        speaker, _, text = line.partition(": ")
        turns.append({"speaker": speaker, "text": text})
    return turns


def fed_rated(path: Path | None = None) -> list[huynh.Rated]:
    """FED's turn-level items, each rated by its raters' mean Overall (rounded as the preset rounds)."""
    rated = []
    for k, entry in enumerate(json.loads((path or fed_path()).read_text())):
        if "response" not in entry:
            continue
        response = _turns(entry["response"])[0]
        rating = huynh.example_rating(entry["annotations"].get("Overall", []))
        if rating is not None:
            rated.append(huynh.Rated(f"fed-{k:03d}", tuple(_turns(entry["context"])), response, rating))
    return rated


def rating_options(ratings=FED_RATINGS) -> tuple[str, ...]:
    """The continuations `next_word.word_probs` scores: every rating in every spelling."""
    return tuple(s.format(r) for r in ratings for s in SPELLINGS)


def huynh_items(items: int, seed: int, path: Path | None = None) -> list[dict]:
    """`items` prompts: FED items drawn with `seed`, each asked with the examples of seeds 0, 1 and 2."""
    rated = fed_rated(path)
    examples = huynh.dialogs(rated)
    queries = random.Random(seed).sample(rated, min(len(rated), -(-items // len(huynh.SEEDS))))
    task = huynh.fed_task("overall", "Overall", dialog_level=False)
    options = rating_options()
    out = []
    for query in queries:
        asked = huynh.Rated(query.id, query.dialogue, query.response)
        for draw_seed in huynh.SEEDS:
            shots = huynh.draw(examples, huynh.K, draw_seed, huynh.item_turns(query.dialogue, None))
            text = huynh.fed_prompt(task, shots, asked, FED_RATINGS[-1])
            out.append({"id": f"{query.id}-seed-{draw_seed}", "language": "en",
                        "item": MCItem(text, options, delimiter=""), "gold": options.index(str(query.rating))})
    return out[:items]


# Generated questions and answers for DiQAD-shaped dialogues (a user asks, an expert answers).
ZH_QUESTIONS = ("社保断缴三个月会有什么影响", "孩子发烧三十八度五要不要去医院", "租房合同没到期房东要卖房怎么办",
                "信用卡逾期一天会影响征信吗", "新买的手机充电特别慢是什么原因", "公积金贷款和商业贷款哪个划算",
                "猫咪不吃东西还一直睡觉怎么回事", "考研英语作文怎么准备比较好", "高铁票改签要收手续费吗",
                "膝盖跑步后疼痛应该怎么处理")
ZH_ANSWERS = ("您好，这个问题需要分情况来看。", "根据相关规定，一般来说是可以的，但需要提前准备好材料。",
              "建议您先到当地的服务窗口咨询，带上身份证和相关证明。", "如果情况比较严重，最好尽快去正规机构处理。",
              "通常三到五个工作日就可以办好，具体以当地的要求为准。", "平时要注意休息，多喝水，避免过度劳累。",
              "另外，也可以通过官方网站或者手机应用在线查询办理进度。",
              "费用方面各地标准不一样，大概在几十到几百元之间。",
              "如果对结果有异议，可以在规定时间内申请复核。", "希望我的回答能够帮助到您，祝您生活愉快！")
ZH_FOLLOW_UPS = ("那需要带什么材料呢", "大概要多长时间", "费用是多少", "如果不处理会怎么样")


def diqad_dialogue(rng: random.Random) -> list[dict]:
    turns = [{"speaker": "user", "text": rng.choice(ZH_QUESTIONS)},
             {"speaker": "expert", "text": "".join(rng.sample(ZH_ANSWERS, rng.randint(2, 4)))}]
    if rng.random() < 0.5:
        turns += [{"speaker": "user", "text": rng.choice(ZH_FOLLOW_UPS)},
                  {"speaker": "expert", "text": "".join(rng.sample(ZH_ANSWERS, rng.randint(1, 3)))}]
    return turns


def diqad_items(tokenizer, items: int, seed: int) -> list[dict]:
    """`items` DiQAD chats, as a checkpoint with a chat template reads them (`inference.chat_text`)."""
    from modeleval.scorers import prompts

    rng = random.Random(seed)
    options = tuple(diqad.CHAT_ANSWER.format(score=s) for s in (0, 1, 2))
    out = []
    for k in range(items):
        messages = diqad.chat_messages(diqad_dialogue(rng))
        text = prompts.render_chat(tokenizer, prompts.with_system("", prompts.chat_messages(messages)))
        out.append({"id": f"diqad-{k:04d}", "language": "zh", "item": MCItem(text, options, delimiter=""),
                    "gold": rng.randrange(3)})
    return out
