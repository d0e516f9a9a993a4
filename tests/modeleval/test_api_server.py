"""A real OpenAI-compatible server on this machine: llama.cpp's server (llama-cpp-python[server])
serving the packaged GGUF on 127.0.0.1, registered as an API model and scored through on a real
Celery worker on the `cpu` queue; the same items scored in-process must agree."""
import importlib.util
import json
import os
import re
import socket
import sys
import time
from itertools import pairwise

import httpx
import pytest
from django.utils import timezone

from benchmarks.actions import import_items
from benchmarks.models import Benchmark
from modeleval import actions, arena, runner, selectors
from modeleval.models import ApiResponse, ChunkState, EvalRun, Prediction, RunState
from modeleval.scorers import loading
from modeleval.scorers import selfchat_generation as selfchat
from modeleval.scorers.prompts import template_hash
from modeleval.selfchat_runs.store import _record
from tests.conftest import ROOT

from .conftest import LoggedProcess, wait_for

pytestmark = [pytest.mark.model, pytest.mark.slow, pytest.mark.django_db(transaction=True)]
HAS_SERVER = importlib.util.find_spec("llama_cpp") is not None
NO_SERVER = "llama_cpp is not installed (bin/setup-test installs llama-cpp-python[server]): API server tests skipped"
ALIAS = "smollm2-gguf"
AGREEMENT = 0.9


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LlamaServer(LoggedProcess):
    """`python -m llama_cpp.server` on 127.0.0.1 only (SIGKILL takes it down as a crash would); both lives
    of a restarted server write to one log."""

    def __init__(self, port, log_path):
        self.port = port
        super().__init__(
            [sys.executable, "-m", "llama_cpp.server", "--model", str(loading.packaged_model_path()),
             "--model_alias", ALIAS, "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "2048",
             "--n_threads", "1", "--verbose", "False"],
            log_path, mode="a", env={**os.environ, "OMP_NUM_THREADS": "1"})
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                pytest.fail(f"llama.cpp server exited: {self.tail()}")
            try:
                if httpx.get(f"{self.endpoint}/models", timeout=2).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.5)
        pytest.fail(f"llama.cpp server did not start: {self.tail()}")

    @property
    def endpoint(self):
        return f"http://127.0.0.1:{self.port}/v1"

    def answered(self):
        """Requests the server answered 200 so far (uvicorn's access log, both lives of the server)."""
        self.log.flush()
        text = self.log_path.read_text(errors="replace")
        return len(re.findall(r'"POST /v1/(?:chat/)?completions HTTP/1.1" 200', text))


@pytest.fixture(autouse=True)
def loopback_endpoints(settings):
    """The server listens on 127.0.0.1: registering it needs the operator's allowance, said explicitly here (and
    in the worker's environment)."""
    settings.API_HOSTS, settings.API_ALLOW_PRIVATE = ["127.0.0.1"], True


@pytest.fixture
def server(tmp_path, db):
    if not HAS_SERVER:
        print(NO_SERVER)
        pytest.skip(NO_SERVER)
    started = LlamaServer(free_port(), tmp_path / "llama-server.log")
    yield started
    started.stop()


@pytest.fixture(scope="module")
def api_worker(start_worker):
    # One quick retry per request: a killed server fails the chunk's attempt, and the chunk's own
    # attempts (2 s, 4 s, ... apart) wait for the restart.
    return start_worker("api", queue="cpu", HB_API_MAX_RETRIES="1", HB_API_MAX_BACKOFF="1",
                        HB_API_HOSTS="127.0.0.1", HB_API_ALLOW_PRIVATE="1")


@pytest.fixture
def api_model(server, packaged):
    return actions.register_api_model("smollm2-api", server.endpoint, ALIAS, concurrency=2, reference="packaged")


def finished(run_id):
    run = EvalRun.objects.get(pk=run_id)
    return run if run.state not in (RunState.QUEUED, RunState.RUNNING) else None


def answers(run):
    return {p.item.external_id: p.answer for p in Prediction.objects.filter(run=run).select_related("item")}


def agreement(api_run, local_run):
    mine, theirs = answers(api_run), answers(local_run)
    assert mine.keys() == theirs.keys()
    return sum(mine[k] == theirs[k] for k in mine) / len(mine)


def test_probe_stores_what_the_server_serves_and_refuses_log_likelihood(api_model, server):
    caps = api_model.capabilities
    assert api_model.is_api and api_model.sha256 == "" and api_model.source == server.endpoint
    assert caps["chat"]["ok"] and caps["completions"]["ok"] and caps["top_logprobs"]["ok"]
    # The server's prompt cache (on by default) answers a prompt asked again after one sharing its start as before.
    print("\nnext-token figures asked again:", json.dumps(caps["top_logprobs"]["prefix_cache"]))
    assert caps["top_logprobs"]["prefix_cache"]["compared"] >= 2
    prompt = caps["prompt_logprobs"]
    print("\nprompt log-probabilities:", json.dumps(prompt))
    benchmark = import_dialogbench()
    if prompt["ok"]:  # a later server version whose figures agree with the in-process reference
        assert prompt["max_difference"] <= 1e-2
    else:
        assert "wrong" in prompt["reason"] or "differs" in prompt["reason"]
    with pytest.raises(actions.RunError) as refused:
        actions.start_run(model=api_model, benchmark=benchmark, mode="loglikelihood")
    assert refused.value.code == "mode_unsupported"
    assert (prompt.get("reason") or "not implemented") in str(refused.value)
    assert not EvalRun.objects.exists()


def import_dialogbench():
    import_items(ROOT / "benchmarks" / "demo_data" / "dialogbench_sample.jsonl", "dialogbench", "db")
    return Benchmark.objects.get(slug="db")


QUESTIONS = ["My landlord kept my deposit. What can I do?", "How do I stop my bike chain from squeaking?",
             "I feel lonely since I moved to a new city.", "Should I pay off my loan or invest?",
             "What is a good way to learn fractions?", "My phone battery drains very fast.",
             "Can my employer read my private email?", "My car won't start on cold mornings.",
             "How much should I save each month?", "My child is afraid of the dark."]
GOOD = ["Ask for an itemised list in writing; if they refuse, file a small-claims case with your receipts.",
        "Clean it with a degreaser, then apply a drop of chain oil to each link and wipe off the rest.",
        "That is hard. Joining a club or a class is a good way to meet people; would you like some ideas?",
        "Compare the loan's interest rate with the return you can expect; high-interest debt comes first.",
        "Use pizza slices or paper strips to show halves and quarters, then write them as numbers.",
        "Check which apps use the battery in the settings, lower the screen brightness, update the system.",
        "On a work account usually yes; on your private account, not without your consent in most places.",
        "A weak battery is the usual cause in the cold; have it tested and check the terminals.",
        "A common rule is about 20 percent of your income, after an emergency fund of three months.",
        "A night light and a calm bedtime routine help; talk about the fear without laughing at it."]
BAD = ["Deposits.", "Bikes are nice.", "Cities are big.", "Money is money.", "Fractions are numbers.",
       "Phones are phones.", "Email was invented long ago.", "Cars have engines.", "Saving.", "It is dark at night."]


SCORE_INSTRUCTION = (
    "You are an expert in assessing the quality of dialogues between a user and an expert. Score the quality of the "
    "expert's answers in the dialogue:\n2: the answers meet every dimension: grammatical, relevant, consistent, "
    "empathetic, informative and proactive;\n1: the answers address the user's question but are incomplete, less "
    "informative or less proactive;\n0: the answers fail a basic dimension: no or wrong answer, not relevant, not "
    "empathetic, grammatical errors, or not consistent.\nThe dialogue is a JSON list of turns with a role and a "
    "content. Answer in the form \"score: N\".")
SCORE_SHOT = "dialogue: {context}\nscore:{answer}"


def import_diqad(tmp_path):
    path = tmp_path / "diqad.jsonl"
    with open(path, "w") as out:
        for n, question in enumerate(QUESTIONS):
            for kind, answer, label in (("good", GOOD[n], 2), ("bad", BAD[n], 0)):
                out.write(json.dumps({"id": f"q{n:02d}-{kind}", "domain": "legal", "label": label,
                                      "dialogue": [{"speaker": "user", "text": question},
                                                   {"speaker": "expert", "text": answer}]}) + "\n")
    import_items(path, "diqad", "dq-api")
    return Benchmark.objects.get(slug="dq-api")


SEEDS = [("s1", ["Hi, how are you?", "Fine, thanks. And you?"]),
         ("s2", ["Where were you last night?", "At the cinema with Tom."]),
         ("s3", ["Is this seat taken?", "No, please sit down."]),
         ("s4", ["Did you finish the report?", "Almost, one page left."]),
         ("s5", ["What are you cooking?", "Pasta with tomatoes."]),
         ("s6", ["Are you coming to the party?", "I think so, after work."])]


def make_arena():
    def fake(name, lines):
        model = actions.ModelSpec.objects.create(name=name, sha256=name[0] * 64)
        chats = [selfchat.SelfChat(list(u) + list(more), 2) for (_, u), more in zip(SEEDS, lines, strict=False)]
        settings = {"system_prompt": "Be brief.", "system_prompt_sha256": template_hash("Be brief.")}
        return _record(model, "seeds.jsonl", None, settings, SEEDS, chats, [None] * len(SEEDS), timezone.now(),
                       0.0, None)

    robot = fake("robot", [["As an AI language model, I am fine.", "As an AI, I have no evenings."]] * len(SEEDS))
    human = fake("human-like", [["Good, busy week.", "Work again?"], ["What film?", "A comedy."],
                                ["Thanks!", "Waiting for someone?"], ["Great, send it soon.", "Will do."],
                                ["Smells good.", "Want some?"], ["Nice, see you there.", "Bring a friend."]])
    return arena.make_pairs(runs=[robot, human], seed=3, benchmark_slug="arena-api")


def test_generation_rating_pairwise_on_a_cpu_worker_agree_with_in_process(api_model, api_worker, packaged,
                                                                          tmp_path):
    dialogbench, diqad, pairs = import_dialogbench(), import_diqad(tmp_path), make_arena()
    # The rating is read from the score tokens' probabilities, after a prompt that asks for "score: N".
    rating = {"dialogue_format": "json", "instruction": SCORE_INSTRUCTION}
    plans = [("generate", dialogbench, {}, None), ("rating", diqad, rating, SCORE_SHOT), ("pairwise", pairs, {}, None)]
    api_runs = [actions.start_run(model=api_model, benchmark=b, mode=m, settings=s, prompt_template=t, chunk_size=4)
                for m, b, s, t in plans]
    local_runs = []
    for mode, benchmark, settings, template in plans:  # in this process meanwhile
        run = runner.run_sync(actions.start_run(model=packaged, benchmark=benchmark, mode=mode, settings=settings,
                                                prompt_template=template, chunk_size=4, enqueue=False))
        assert run.state == RunState.FINISHED, run.reason
        local_runs.append(run)
    figures = {}
    for (mode, _, _, _), api_run, local_run in zip(plans, api_runs, local_runs, strict=True):
        run = wait_for(lambda pk=api_run.pk: finished(pk), 900, f"the API {mode} run to end", [api_worker])
        assert run.state == RunState.FINISHED, run.reason
        assert all(c.worker.startswith("api@") for c in run.chunks.all())
        rows = list(Prediction.objects.filter(run=run))
        assert len(rows) == run.items_total and all(r.api_calls for r in rows)
        call = rows[0].api_calls[0]
        assert call["request"]["model"] == ALIAS and call["response"]["choices"] and "usage" in call
        usage = selectors.api_usage(run)
        assert usage["requests"] > 0 and usage["prompt_tokens"] > 0
        figures[mode] = {"agreement": agreement(run, local_run), "items": run.items_total, **usage}
    print("\nAPI vs in-process:", json.dumps(figures, indent=1))
    assert figures["rating"]["agreement"] >= AGREEMENT
    assert figures["pairwise"]["agreement"] >= AGREEMENT
    # The rating's probabilities are read from top_logprobs: the most likely score and the expected rating.
    row = Prediction.objects.filter(run=api_runs[1]).first()
    assert set(row.probabilities["raw"]) == {"0", "1", "2"} and 0 <= row.rating <= 2


def test_server_killed_mid_run_finishes_after_restart_without_paying_twice(server, api_model, api_worker,
                                                                          tmp_path):
    benchmark = import_dialogbench()
    before = server.answered()
    spec = api_model
    spec.concurrency = 1
    spec.save(update_fields=["concurrency"])
    run = actions.start_run(model=spec, benchmark=benchmark, mode="generate", chunk_size=3, max_attempts=8,
                            settings={"system": "Answer with the letter of the option."})
    wait_for(lambda: ApiResponse.objects.count() >= 4, 600, "some answers before the kill", [api_worker],
             every=0.05)
    server.kill()
    killed_at = ApiResponse.objects.count()
    time.sleep(3)  # requests fail meanwhile: the client retries, the chunk attempt fails and is retried
    restarted = LlamaServer(server.port, server.log_path)
    try:
        run = wait_for(lambda: finished(run.pk), 900, "the run to finish after the restart", [api_worker])
        assert run.state == RunState.FINISHED, run.reason
        rows = list(Prediction.objects.filter(run=run))
        assert len(rows) == len({r.item_id for r in rows}) == run.items_total == 12  # no duplicate
        assert all(c.state == ChunkState.DONE for c in run.chunks.all())
        assert run.events.filter(kind="chunk_attempt_failed").exists()  # the kill did land mid-run
        # Each request was answered over the network exactly once: every answer the two servers gave
        # is one cache row, and no cache row was fetched twice.
        assert set(ApiResponse.objects.values_list("fetched", flat=True)) == {1}
        assert restarted.answered() - before == ApiResponse.objects.count() == 12
        reused = [c for r in rows for c in r.api_calls if c["cached"]]
        print(f"\nkilled after {killed_at} answers; {len(reused)} answers reused from the cache after the restart")
        assert reused  # the failed attempt's answers were read back, not asked for again
    finally:
        restarted.stop()


def test_diqad_appendix_c_chat_through_the_server(api_model, tmp_path):
    """DiQAD's preset through llama.cpp's server: every turn of appendix C's chat is a message of the request, the
    server's reply is read back as the study reads it (分数: N)."""
    from studies.diqad import recipe as diqad

    benchmark = import_diqad(tmp_path)
    run = runner.run_sync(actions.start_run(model=api_model, benchmark=benchmark, mode="rating", limit=2,
                                            settings={"preset": "diqad"}, enqueue=False))
    assert run.state == RunState.FINISHED, run.reason
    rows = list(Prediction.objects.filter(run=run).select_related("item"))
    assert len(rows) == 2
    for row in rows:
        (call,) = row.api_calls
        messages = call["request"]["messages"]
        assert [(m["role"], m["content"]) for m in messages] == list(diqad.chat_messages(row.item.dialogue))
        assert row.raw_output == call["response"]["choices"][0]["message"]["content"]
        value = diqad.extract_score(row.raw_output, [0, 1, 2])
        assert row.answer == ("" if value is None else str(value))


def test_selfchat_through_the_api_on_a_cpu_worker_as_botchats_gpt_py(api_model, api_worker, server, tmp_path):
    """BotChat's GPT-4, GPT-3.5 and Claude rows self-chatted through an API (botchat/chat_api/gpt.py): every chat
    sent as alternating turns after the system prompt, the last the other side's, temperature 0, the reply
    stripped. The same through this platform's API backend against llama.cpp's server, on a `cpu` worker."""
    import studies
    from modeleval import selfchat_runs
    from studies.botchat import recipe as botchat

    seeds = tmp_path / "seeds.jsonl"
    seeds.write_text("".join(json.dumps({"id": k, "utterances": u + ["A real third chat."]}) + "\n"
                             for k, u in SEEDS[:2]))
    before = server.answered()
    run = selfchat_runs.start_selfchat(model=api_model, seeds_path=seeds, preset="botchat", utterances=5,
                                       max_new_tokens=40)
    run = wait_for(lambda: finished(run.pk), 900, "the API self-chat run to end", [api_worker])
    assert run.state == RunState.FINISHED, run.reason
    settings = run.settings
    assert (settings["backend"], settings["decoding"], settings["max_new_tokens"]) == ("api", "greedy", 40)
    assert settings["system_prompt"] == botchat.SELFCHAT_SYSTEM_PROMPT
    assert api_model.endpoint in settings["token_counter"]
    assert run.events.filter(kind="started", figures__worker__startswith="api@").exists()
    asked = list(ApiResponse.objects.order_by("pk"))
    assert len(asked) == 2 * 3 and server.answered() - before == 6  # 3 chats to write for each of 2 seeds
    for prediction in Prediction.objects.filter(run=run).select_related("item"):
        utterances = [turn["text"] for turn in prediction.item.dialogue]
        assert len(utterances) == 5 and utterances[:2] == dict(SEEDS)[prediction.item.external_id]
        for step in prediction.options:
            sent = json.loads(step["prompt"])
            assert sent == selfchat.messages(utterances[:step["index"]], botchat.SELFCHAT_SYSTEM_PROMPT)
            roles = [m["role"] for m in sent]
            assert roles[0] == "system" and roles[-1] == "user" and all(a != b for a, b in pairwise(roles[1:]))
            assert utterances[step["index"]] == step["reply"].strip() == step["text"]
            [answer] = [a for a in asked if a.request["messages"] == sent]
            assert (answer.request["temperature"], answer.request["max_tokens"]) == (0, 40)
            assert prediction.item.meta["utterance_tokens"][step["index"]] == answer.completion_tokens
        assert prediction.item.meta["utterance_tokens"][:2] == [None, None]
    # Greedy is the study's decoding for a model behind an API: only the shorter dialogues and replies were set.
    changed = [d for d in studies.protocol("selfchat", settings)["differences"] if d["why"] == "set for this run"]
    assert [(d["setting"], d["published"], d["ours"]) for d in changed] == [("utterances", "16", "5"),
                                                                             ("max_new_tokens", "1024", "40")]
    # The same dialogues asked again: every answer comes from the cache, none from the server.
    again = selfchat_runs.start_selfchat(model=api_model, seeds_path=seeds, preset="botchat", utterances=5,
                                         max_new_tokens=40)
    again = wait_for(lambda: finished(again.pk), 600, "the second self-chat run to end", [api_worker])
    assert again.state == RunState.FINISHED and server.answered() - before == 6


def test_dialogbench_asks_a_model_behind_an_api_as_its_gpt_rows(api_model, server):
    """DialogBench's paper, section 4 (Implementation Details): ChatGPT and GPT-4 at temperature 0, presence_penalty
    0.6 and frequency_penalty 0; the preset asks any model behind an API so."""
    from studies.dialogbench import recipe as dialogbench

    benchmark = import_dialogbench()
    run = runner.run_sync(actions.start_run(model=api_model, benchmark=benchmark, mode="generate", limit=1,
                                            settings={"preset": "dialogbench"}, enqueue=False))
    assert run.state == RunState.FINISHED, run.reason
    assert (run.settings["evaluator"], run.position_policy) == ("api", "as_is")
    bodies = [call["request"] for p in Prediction.objects.filter(run=run) for call in p.api_calls]
    assert bodies and all((b["temperature"], b["presence_penalty"], b["frequency_penalty"], b["max_tokens"]) ==
                          (0, 0.6, 0, dialogbench.MAX_NEW_TOKENS) for b in bodies)
