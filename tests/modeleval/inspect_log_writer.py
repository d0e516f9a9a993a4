"""Writes an Inspect eval log with inspect_ai itself; run by the inspect venv's python (perf/_target_venvs.py),
never imported by the suite.

    python tests/modeleval/inspect_log_writer.py SPECS.json LOG_DIR

SPECS: [{"task": name, "format": "json" or "eval", "samples": [{"id", "input", "target", "reply"}]}], one log each.
Each sample is asked of inspect's own mock model (`mockllm/model`), which replies with the sample's `reply` in turn;
the `pattern` scorer reads the answer after "ANSWER:" from it. Prints each log's path, one a line.

inspect's mock model estimates token counts with tiktoken's o200k_base encoding, which is downloaded on first use;
with no network here, the mock counts words instead (the counts are not what is imported).
"""
import json
import sys

from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import Sample
from inspect_ai.model import ModelOutput, get_model
from inspect_ai.model._providers.mockllm import MockLLM
from inspect_ai.scorer import pattern
from inspect_ai.solver import generate


async def _words(self, text: str) -> int:
    return max(1, len(text.split()))


def main():
    spec_path, log_dir = sys.argv[1:3]
    with open(spec_path) as handle:
        specs = json.load(handle)
    MockLLM.count_text_tokens = _words
    for spec in specs:
        samples = [Sample(id=s["id"], input=s["input"], target=s["target"]) for s in spec["samples"]]
        replies = [ModelOutput.from_content(model="mockllm/model", content=s["reply"]) for s in spec["samples"]]
        task = Task(dataset=samples, solver=generate(), scorer=pattern(r"ANSWER:\s*(\S+)"), name=spec["task"])
        logs = inspect_eval(task, model=get_model("mockllm/model", custom_outputs=replies), log_dir=log_dir,
                            log_format=spec["format"], display="none")
        if logs[0].status != "success":
            sys.exit(f"inspect_ai wrote a log with status {logs[0].status}: {logs[0].error}")
        print(logs[0].location)


if __name__ == "__main__":
    main()
