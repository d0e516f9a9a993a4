"""Every management command exits non-zero when what it was asked to do failed, so that a script or a scheduler
that checks the status does not take a failure for success: `score` whose run failed above all."""
import os
import socket
import subprocess
import sys

import pytest
from django.conf import settings as django_settings
from django.core.management import CommandError, call_command

from benchmarks.actions import import_items
from benchmarks.models import Benchmark
from modeleval.models import Backend, EvalRun, ModelSpec, RunState
from tests.conftest import DEMO_DATA, ROOT

from .test_api_egress import stub  # noqa: F401 (fixture: a small OpenAI-compatible server)


def closed_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def benchmark(db):
    import_items(DEMO_DATA / "dialogbench_sample.jsonl", "dialogbench", "db-demo")
    return Benchmark.objects.get(slug="db-demo")


def api_model(name, endpoint):
    return ModelSpec.objects.create(name=name, backend=Backend.API, endpoint=endpoint, api_model="m",
                                    capabilities={"chat": {"ok": True}, "completions": {"ok": True}})


@pytest.fixture
def loopback(settings):
    settings.API_HOSTS, settings.API_ALLOW_PRIVATE = ["127.0.0.1"], True
    settings.MODELEVAL_API_CLIENT = {**settings.MODELEVAL_API_CLIENT, "max_retries": 0, "backoff_s": 0}


@pytest.mark.django_db(transaction=True)  # the command runs in its own process and reads what the test wrote
def test_score_exits_non_zero_when_its_run_failed(benchmark):
    api_model("down", f"http://127.0.0.1:{closed_port()}/v1")  # nothing listens: every request is refused
    database = django_settings.DATABASES["default"]
    env = {**os.environ, "DATABASE_URL": f"postgres://{database['USER']}@{database['HOST'] or '127.0.0.1'}:"
                                         f"{database['PORT'] or 5432}/{database['NAME']}",
           "HB_API_HOSTS": "127.0.0.1", "HB_API_ALLOW_PRIVATE": "1", "HB_API_MAX_RETRIES": "0"}
    done = subprocess.run([sys.executable, "manage.py", "score", "--model", "down", "--benchmark", "db-demo",
                           "--mode", "generate", "--limit", "1", "--sync", "--max-attempts", "1"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    run = EvalRun.objects.get()
    assert run.state == RunState.FAILED, (run.state, done.stdout, done.stderr)
    assert done.returncode != 0, (done.returncode, done.stdout, done.stderr)
    assert f"run {run.pk} failed" in done.stderr


@pytest.mark.django_db
def test_score_exits_zero_when_its_run_finished_and_not_when_it_stopped(benchmark, loopback, stub):  # noqa: F811
    api_model("up", stub.endpoint)
    call_command("score", model="up", benchmark="db-demo", mode="generate", limit=1, sync=True)
    assert EvalRun.objects.get().state == RunState.FINISHED
    api_model("down", f"http://127.0.0.1:{closed_port()}/v1")
    with pytest.raises(CommandError, match="failed"):
        call_command("score", model="down", benchmark="db-demo", mode="generate", limit=1, sync=True,
                     max_attempts=1)


@pytest.mark.django_db
def test_a_cancelled_selfchat_or_a_run_still_going_is_no_success(benchmark, monkeypatch):
    from modeleval.management.commands import score, selfchat

    run = EvalRun.objects.create(model=ModelSpec.objects.create(name="tiny", sha256="0" * 64), benchmark=benchmark,
                                 mode="loglikelihood", prompt_template="{x}", prompt_sha256="0" * 64,
                                 state=RunState.CANCELLED, reason="cancelled by a person")
    monkeypatch.setattr(selfchat, "run_selfchat", lambda **kwargs: run)
    with pytest.raises(CommandError, match="cancelled"):
        call_command("selfchat", model="tiny", seeds_benchmark="db-demo")
    run.state = RunState.RUNNING
    with pytest.raises(CommandError, match="still running"):
        score.Command.require_finished(run)


@pytest.mark.django_db
@pytest.mark.parametrize("command, args, options", [
    ("import_items", ["/no/such/file.jsonl"], {"benchmark": "x"}),
    ("export_items", ["/tmp/out.jsonl"], {"benchmark": "no-such", "format": "jsonl"}),
    ("import_ratings", ["/no/such/file.json"], {"benchmark": "x", "format": "fed"}),
    ("import_hf_dataset", ["/no/such/folder"], {"benchmark": "x"}),
    ("export_hf_dataset", ["/tmp/hf-out"], {"benchmark": "no-such"}),
    ("audit_qc_sample", ["999"], {}),
    ("reclaim_leases", [], {"campaign": 999}),
    ("register_api_model", ["judge"], {"endpoint": "http://127.0.0.1:9/v1", "api_model": "m"}),
    ("make_pairs", [], {"runs": [999, 998]}),
    ("score", [], {"model": "no-such", "benchmark": "x"}),
    ("train", [], {"base": "no-such", "benchmark": "x"}),
    ("selfchat", [], {"model": "no-such", "seeds_benchmark": "x"}),
])
def test_every_command_refusing_its_work_exits_non_zero(command, args, options):
    with pytest.raises((CommandError, SystemExit)):
        call_command(command, *args, **options)
