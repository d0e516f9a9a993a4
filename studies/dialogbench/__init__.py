"""DialogBench (Ou et al., 2024): twelve multiple-choice dialogue tasks, asked by per-option perplexity or by a
chat model's reply read back as its released code reads it (`recipe`); its Tables 2 and 3 (`paper.json`).
"""
from ..study import Difference, Study
from ..vocabulary import Rule
from . import recipe as dialogbench
from .modes import RECIPES

# DialogBench's chat-model evaluators that read the dialogue as chat history (src/qwen.py, baichuan.py, chatglm.py,
# internlm.py, moss.py, kwaiyii.py and llama.py: the data's history / messages fields), not prompt_SFT.
_HISTORY = Difference("chat history", "src/<evaluator>.py: the dialogue as the chat's history turns (the data's "
                      "history / messages fields), the question and options as the last query",
                      "the prompt_SFT text (the dialogue, then the question and options) as one user message",
                      "the released data files hold prompt_SFT and prompt_pretrain only: their history and messages "
                      "fields are not in the repository")
_OWN_CHAT = Difference("the model's chat", "the model's own chat() from its remote code (trust_remote_code), its "
                       "generation config set to greedy, 128 new tokens", "the tokenizer's chat template (or the "
                       "model's registered chat_template), greedy, 128 new tokens",
                       "models load here from local files without running their remote code; a tokenizer without a "
                       "chat template asks the plain prompt: register the model with its template")

_QWEN_SYSTEM = Difference("Qwen's system prompt", "src/qwen.py calls the model's chat(), whose default system "
                          "prompt is \"You are a helpful assistant.\"", "the system message the tokenizer's chat "
                          "template adds by itself, if any (a run may set one with system=..., listed as set for the "
                          "run)", "chat() is remote code, never run here; the template is what the checkpoint ships")

STUDY = Study(
    recipes=RECIPES,
    preset=dialogbench.PRESET,
    title="DialogBench (Ou et al., 2024)",
    positions=dialogbench.position_policy,
    source="kwai/DialogBench commit 239a5cc: config/prompt.json, src/utils.py, src/baseEval.py, src/evaluate.py and "
           "its evaluators (qwen.py, baichuan.py, llama.py, chat_template.py, ...); the paper, section 4",
    published={
        "loglikelihood": {"continuation": "text", "rule": Rule.PER_TOKEN},
        "generate": {"max_new_tokens": dialogbench.MAX_NEW_TOKENS, "system": ""},
    },
    standing={
        "generate": (
            Difference("reply limit", "128 new tokens in the released code (src/utils.py GEN_KWARGS); 256 in the "
                       "paper's text (section 4, Evaluation Method and Implementation Details)", "128 new tokens",
                       "the paper and its released code disagree; the preset follows the code whose prompts and "
                       "extraction it reproduces (a run may set max_new_tokens=256, listed as set for this run)"),
        ),
        **{f"generate:evaluator={name}": (_HISTORY, _OWN_CHAT)
           for name in dialogbench.EVALUATORS if name not in ("llama", "qwen")},
        "generate:evaluator=qwen": (_HISTORY, _OWN_CHAT, _QWEN_SYSTEM),
        "generate:evaluator=llama": (_HISTORY,),
        "generate:evaluator=api": (
            Difference("the GPT rows' requests", "ChatGPT and GPT-4 (gpt-3.5-turbo-0613, gpt-4-0314) through "
                       "OpenAI's API at temperature 0, presence_penalty 0.6, frequency_penalty 0 (paper, section 4); "
                       "their messages and reply limit not published",
                       "prompt_SFT as one user message, temperature 0, presence_penalty 0.6, frequency_penalty 0, "
                       "128 tokens", "the repository has no code for its GPT rows: the paper states their "
                       "parameters, not what was sent"),
        ),
        "*": (
            Difference("tokenizer", "the slow (Python) tokenizer: AutoTokenizer.from_pretrained(..., use_fast=False) "
                       "in src/baseEval.py", "the checkpoint's tokenizer as transformers loads it: the fast one where "
                       "the checkpoint has one, and always for a GGUF file",
                       "a GGUF file carries only what the fast tokenizer is built from; the two agree on almost every "
                       "text but may split some strings apart, which moves an option's log-likelihood"),
            Difference("human baseline", "3 experts on 50 items per task, an item right when 2 of 3 are",
                       "as many raters as the campaign has, on the items they answered",
                       "the paper's expert answers are not published; our annotators are counted the same way"),
        ),
    },
)
