"""The API backend's parts that need no server: retries, the key, the cache, refusals, DiQAD's prompt."""
import json
import math
import re

import httpx
import pytest

from benchmarks.formschema import rating_scale
from benchmarks.importers.diqad import quality_form
from modeleval import actions, apiclient, modes
from modeleval.apiscoring import ApiModel
from modeleval.models import ApiResponse, Backend, ModelSpec
from studies.diqad import recipe as diqad


@pytest.fixture(autouse=True)
def loopback_endpoints(settings):
    """These endpoints are on 127.0.0.1 (answered by a mock transport): the operator's allowance, said explicitly."""
    settings.API_HOSTS, settings.API_ALLOW_PRIVATE = ["127.0.0.1"], True


def endpoint(**kwargs):
    return apiclient.Endpoint("http://127.0.0.1:9/v1", "m", sleep=lambda s: None, **kwargs)


def client(handler):
    return httpx.Client(transport=httpx.MockTransport(handler))


def test_retries_with_backoff_on_429_and_5xx_then_answers():
    statuses = iter([429, 503, 200])
    seen = []

    def handler(request):
        seen.append(request)
        status = next(statuses)
        return httpx.Response(status, json={"ok": status} if status == 200 else {"error": "busy"},
                              headers={"retry-after": "0"} if status == 429 else {})

    waits = []
    ep = apiclient.Endpoint("http://127.0.0.1:9/v1", "m", sleep=waits.append, backoff_s=1, max_backoff_s=8)
    assert ep.post("/chat/completions", {"x": 1}, client(handler)) == {"ok": 200}
    assert len(seen) == 3 and seen[0].url == "http://127.0.0.1:9/v1/chat/completions"
    assert waits[0] == 0.0  # Retry-After honoured
    assert 0.5 <= waits[1] <= 2  # then exponential backoff with jitter


def test_gives_up_after_max_retries_and_never_retries_a_bad_request():
    calls = []

    def busy(request):
        calls.append(1)
        return httpx.Response(500, text="down")

    with pytest.raises(apiclient.ApiError, match="gave up after 3 attempts") as error:
        endpoint(max_retries=2).post("/completions", {}, client(busy))
    assert error.value.retryable and len(calls) == 3
    calls.clear()

    def bad(request):
        calls.append(1)
        return httpx.Response(400, text="no such parameter")

    with pytest.raises(apiclient.ApiError, match="HTTP 400") as error:
        endpoint(max_retries=5).post("/completions", {}, client(bad))
    assert not error.value.retryable and len(calls) == 1


def test_key_read_from_the_named_variable_and_sent_only_in_the_header(monkeypatch):
    headers = []

    def handler(request):
        headers.append(request.headers.get("authorization"))
        return httpx.Response(200, json={})

    ep = endpoint(key_env="HB_TEST_KEY")
    with pytest.raises(apiclient.ApiError, match="HB_TEST_KEY .* is not set") as error:
        ep.post("/completions", {}, client(handler))
    assert not error.value.retryable
    monkeypatch.setenv("HB_TEST_KEY", "sk-secret-123")
    body = {"model": "m", "prompt": "hi"}
    ep.post("/completions", body, client(handler))
    assert headers == ["Bearer sk-secret-123"]
    assert "sk-secret" not in json.dumps(body) and "sk-secret" not in apiclient.request_key(ep.base_url, "/c", body)


def test_key_env_must_be_a_name_never_a_key(db):
    with pytest.raises(actions.RunError, match="name an environment variable") as error:
        actions.register_api_model("x", "http://127.0.0.1:9/v1", "m", api_key_env="sk-abc/123=")
    assert error.value.code == "bad_key_env" and not ModelSpec.objects.exists()


def test_word_probabilities_from_top_logprobs_follow_a_whitespace_token():
    top = {"2": math.log(0.1), " ": math.log(0.5), "x": math.log(0.4)}
    after_space = {"1": math.log(0.6), "2": math.log(0.2)}
    probs = apiclient.word_probs_from_top(top, ["0", "1", "2"], follow={" ": after_space})
    assert probs == pytest.approx({"0": 0.0, "1": 0.5 * 0.6, "2": 0.1 + 0.5 * 0.2})
    assert apiclient.whitespace_tokens(top) == [" "]


def test_modes_refused_with_the_probe_reason():
    caps = {"chat": {"ok": True}, "completions": {"ok": True}, "top_logprobs": {"ok": False, "reason": "none given"},
            "prompt_logprobs": {"ok": False, "reason": "prompt log-probabilities are wrong"}}
    assert modes.api_refusal(caps, "generate") is None
    assert modes.api_refusal(caps, "rating", {"read": "generation"}) is None
    assert "top_logprobs" in modes.api_refusal(caps, "rating") and "none given" in modes.api_refusal(
        caps, "yes_no")
    assert modes.api_refusal(caps, "loglikelihood").endswith("prompt log-probabilities are wrong")
    assert "not available" in modes.api_refusal(caps, "selfchat")


def test_responses_cached_by_exact_request_and_stored_as_they_arrive(db):
    spec = ModelSpec.objects.create(name="api", backend=Backend.API, endpoint="http://127.0.0.1:9/v1", api_model="m",
                                    concurrency=2, capabilities={"chat": {"ok": True}})
    asked = []

    def handler(request):
        body = json.loads(request.content)
        asked.append(body["messages"][-1]["content"])
        if body["messages"][-1]["content"] == "fail":
            return httpx.Response(400, text="bad")
        return httpx.Response(200, json={"choices": [{"message": {"content": "re: " + asked[-1]}}],
                                         "usage": {"prompt_tokens": 3, "completion_tokens": 2}})

    model = ApiModel(spec)
    model.endpoint.sleep = lambda s: None
    real_post = model.endpoint.post
    model.endpoint.post = lambda path, body, c=None: real_post(path, body, client(handler))
    assert model.chat(["a", "b", "a"]) == {"a": "re: a", "b": "re: b"}
    assert sorted(asked) == ["a", "b"] and ApiResponse.objects.count() == 2
    with pytest.raises(apiclient.ApiError):
        model.chat(["c", "fail"])
    assert ApiResponse.objects.count() == 3  # "c" was paid for: kept although its batch failed
    again = ApiModel(spec)
    again.endpoint.post = model.endpoint.post
    asked.clear()
    assert again.chat(["a", "b", "c"])["c"] == "re: c" and asked == []  # nothing asked twice
    assert [call["cached"] for call in again.calls["a"]] == [True]
    assert set(ApiResponse.objects.values_list("fetched", flat=True)) == {1}
    assert "authorization" not in json.dumps(list(ApiResponse.objects.values("request", "response"))).lower()


def test_diqad_prompt_and_score_extraction():
    turns = [{"speaker": "user", "text": "Hi?"}, {"speaker": "expert", "text": "Hello."}]
    assert json.loads(diqad.dialogue_json(turns)) == [{"role": "user", "content": "Hi?"},
                                                       {"role": "assistant", "content": "Hello."}]
    values = rating_scale(next(q for q in quality_form()["questions"] if q["key"] == "score"))
    assert values == [0, 1, 2]  # exclusion codes (-1, -2, abandon) left out
    assert diqad.extract_score("score: 2", values) == 2
    assert diqad.extract_score("I think... Score：1. Actually score: 0", values) == 0
    assert diqad.extract_score("The answer is good, 2", values) == 2
    assert diqad.extract_score("score: -1", values) is None
    assert diqad.extract_score("between 1 and 2", values) is None


@pytest.mark.services
def test_request_slots_shared_across_processes_through_redis():
    from concurrent.futures import ThreadPoolExecutor

    from django.conf import settings

    from modeleval.apiscoring import ModelSlots

    if not settings.CELERY_BROKER_URL.startswith("redis://"):
        pytest.skip("needs CELERY_BROKER_URL (Redis)")
    # Two limiters over the same key stand for two worker processes.
    limiters = [ModelSlots(settings.CELERY_BROKER_URL, "slots-test", 2, 60) for _ in range(2)]
    limiters[0].redis.delete(limiters[0].key)
    inside, most = [0], [0]
    import threading
    import time

    lock = threading.Lock()

    def request(n):
        with limiters[n % 2].hold():
            with lock:
                inside[0] += 1
                most[0] = max(most[0], inside[0])
            time.sleep(0.05)
            with lock:
                inside[0] -= 1

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(request, range(16)))
    assert most[0] == 2 and limiters[0].redis.zcard(limiters[0].key) == 0


def fake_openai(request):
    """An OpenAI-compatible endpoint in miniature: chat answers "score: 1"; a completion's next token is
    " " (p=0.5) or "2" (p=0.2), and after a trailing space "1" (p=0.8) or "2" (p=0.1)."""
    body = json.loads(request.content)
    usage = {"prompt_tokens": 10, "completion_tokens": 1}
    if request.url.path.endswith("/chat/completions"):
        return httpx.Response(200, json={"choices": [{"message": {"content": "score: 1"}}], "usage": usage})
    top = ({"1": math.log(0.8), "2": math.log(0.1)} if body["prompt"].endswith(" ")
           else {" ": math.log(0.5), "2": math.log(0.2), "\n": math.log(0.1)})
    return httpx.Response(200, json={"choices": [{"text": " ", "logprobs": {"top_logprobs": [top]}}], "usage": usage})


def test_diqad_runs_through_an_api_model(db, monkeypatch):
    from benchmarks.actions import import_items
    from benchmarks.models import Benchmark
    from modeleval import apiscoring, runner, selectors
    from modeleval.models import Prediction, RunState
    from tests.conftest import DEMO_DATA

    real_client = httpx.Client
    monkeypatch.setattr(apiscoring.httpx, "Client",
                        lambda **kw: real_client(transport=httpx.MockTransport(fake_openai)))
    import_items(DEMO_DATA / "diqad_sample.jsonl", "diqad", "dq")
    benchmark = Benchmark.objects.get(slug="dq")
    spec = ModelSpec.objects.create(name="fake", backend=Backend.API, endpoint="http://127.0.0.1:9/v1",
                                    api_model="m", capabilities={"chat": {"ok": True}, "top_logprobs": {"ok": True}})
    run = runner.run_sync(actions.start_run(model=spec, benchmark=benchmark, mode="rating", enqueue=False,
                                            chunk_size=3))
    assert run.state == RunState.FINISHED, run.reason
    row = Prediction.objects.filter(run=run).first()
    # p(1) = 0.5 * 0.8, p(2) = 0.2 + 0.5 * 0.1, p(0) = 0
    assert row.probabilities["raw"] == pytest.approx({"0": 0.0, "1": 0.4, "2": 0.25})
    assert row.answer == "1" and [c["request"]["prompt"] for c in row.api_calls] == [row.prompt, row.prompt + " "]
    usage = selectors.api_usage(run)
    assert usage["requests"] == 16 and usage["prompt_tokens"] == 160 and usage["cached"] == 0
    again = runner.run_sync(actions.start_run(model=spec, benchmark=benchmark, mode="rating", enqueue=False))
    assert selectors.api_usage(again)["requests"] == 0 and selectors.api_usage(again)["cached"] == 16
    # DiQAD's preset asks its appendix C chat, every turn a message of the request, and reads the reply.
    generated = runner.run_sync(actions.start_run(model=spec, benchmark=benchmark, mode="rating", enqueue=False,
                                                  settings={"preset": "diqad"}))
    rows = list(Prediction.objects.filter(run=generated).select_related("item"))
    assert {p.answer for p in rows} == {"1"}
    for row in rows:
        (call,) = row.api_calls
        messages = call["request"]["messages"]
        assert [m["role"] for m in messages] == ["user", "assistant"] * 4 + ["user"]
        assert messages[1]["content"] == "好的，请提供对话，我将给出0到2的分数。"
        assert messages[3]["content"] == "分数: 0"
        assert messages[-1]["content"].startswith("[{'role': 'user', 'content': " + repr(row.item.dialogue[0]["text"]))
        assert json.loads(row.prompt) == messages
    with pytest.raises(actions.RunError, match="needs prompt_logprobs, which was not probed"):
        actions.start_run(model=spec, benchmark=benchmark, mode="loglikelihood", enqueue=False)


@pytest.mark.parametrize("echo, ok", [([-11.5, -0.34, -2.4, -0.45, -0.26], True),
                                      ([-9.6, -10.5, -11.2, -11.8, -8.5], False)])
def test_probe_trusts_prompt_logprobs_only_when_they_match_the_reference(monkeypatch, echo, ok):
    tokens = ["The", " capital", " of", " France", " is", " Paris"]
    reference = list(zip(tokens, [None, -11.5, -0.34, -2.4, -0.45, -0.26], strict=True))

    def handler(request):
        body = json.loads(request.content)
        if request.url.path.endswith("/chat/completions"):
            return httpx.Response(200, json={"choices": [{"message": {"content": "OK"}}]})
        if body.get("echo"):
            offsets = [0, 3, 11, 14, 21, 24, 30]
            return httpx.Response(200, json={"choices": [{"text": body["prompt"] + ".", "logprobs": {
                "tokens": tokens + ["."], "token_logprobs": [None, *echo, -1.0], "text_offset": offsets}}]})
        return httpx.Response(200, json={"choices": [{"text": " Paris", "logprobs": {
            "top_logprobs": [{" Paris": -0.26, " the": -2.0}]}}]})

    real_client = httpx.Client
    monkeypatch.setattr(apiclient.httpx, "Client", lambda **kw: real_client(transport=httpx.MockTransport(handler)))
    found = apiclient.probe(endpoint(), reference)
    assert found["chat"]["ok"] and found["completions"]["ok"] and found["top_logprobs"]["ok"]
    assert found["prompt_logprobs"]["ok"] is ok and found["prompt_logprobs"]["logprobs"][1:] == echo
    if not ok:
        assert found["prompt_logprobs"]["reason"].startswith("prompt log-probabilities of "
                                                             "'The capital of France is Paris' are wrong: the "
                                                             "endpoint gives -9.60, -10.50")
        assert "loglikelihood needs prompt_logprobs" in modes.api_refusal(found, "loglikelihood")


@pytest.mark.parametrize("stale", [False, True])
def test_probe_refuses_a_server_whose_prefix_cache_changes_a_prompts_figures(monkeypatch, stale):
    """A prompt, a longer one sharing its start, the first again: a server whose cache hands the first prompt the
    figures it kept from the longer one (stale) is refused the modes that read figures; one that answers the
    first prompt as before keeps them."""
    tokens = ["The", " capital", " of", " France", " is", " Paris"]
    reference = list(zip(tokens, [None, -11.5, -0.34, -2.4, -0.45, -0.26], strict=True))
    asked = []

    def figures(prompt):  # a stale cache answers with what it kept from the longer prompt asked just before
        return 1.5 if stale and len(asked) > 1 and asked[-2].startswith(prompt) and asked[-2] != prompt else 0.0

    def handler(request):
        body = json.loads(request.content)
        if request.url.path.endswith("/chat/completions"):
            return httpx.Response(200, json={"choices": [{"message": {"content": "OK"}}]})
        asked.append(body["prompt"])
        shift = figures(body["prompt"])
        if body.get("echo"):
            words = list(re.finditer(r" ?[^ ]+", body["prompt"]))
            known = [None, -11.5 + shift, -0.34, -2.4, -0.45, -0.26]
            logprobs = [known[n] if n < len(known) else -1.0 for n in range(len(words))]
            return httpx.Response(200, json={"choices": [{"text": body["prompt"] + ".", "logprobs": {
                "tokens": [w.group() for w in words] + ["."], "token_logprobs": [*logprobs, -1.0],
                "text_offset": [w.start() for w in words] + [len(body["prompt"])]}}]})
        return httpx.Response(200, json={"choices": [{"text": " Paris", "logprobs": {
            "top_logprobs": [{" Paris": -0.26 - shift, " the": -2.0 + shift}]}}]})

    real_client = httpx.Client
    monkeypatch.setattr(apiclient.httpx, "Client", lambda **kw: real_client(transport=httpx.MockTransport(handler)))
    found = apiclient.probe(endpoint(), reference)
    shared = apiclient.PROBE_PROMPT + apiclient.PROBE_SHARED_START
    assert shared in asked and asked.count(apiclient.PROBE_PROMPT) >= 2
    assert found["top_logprobs"]["ok"] is not stale and found["prompt_logprobs"]["ok"] is not stale
    if stale:
        assert "prefix cache returns stale" in found["top_logprobs"]["reason"]
        assert "prefix cache returns stale" in found["prompt_logprobs"]["reason"]
        assert "prefix cache" in modes.api_refusal(found, "rating")
    else:
        assert found["top_logprobs"]["prefix_cache"] == {"compared": 2, "max_difference": 0.0}
        assert found["prompt_logprobs"]["prefix_cache"]["max_difference"] == 0.0
        assert modes.api_refusal(found, "rating") is None
