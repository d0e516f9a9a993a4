"""Every script in perf/ runs at a tiny size, as a subprocess, and exits 0: none breaks unseen when the code it
drives changes (perf/training_vs_trainer.py once called a loading helper that had been removed).

TINY holds each script's tiny command line (flags the script has); MODULES the files that are imported by a
script rather than run. A file in perf/ that is in neither fails test_every_perf_file_is_listed, so a new script
comes with its tiny size. SERVICES are the scripts that talk to PostgreSQL (and start gunicorn) themselves: each
gets a scratch database of its own, created and dropped by the script, on the server of the suite's database, and
the suite's environment (its Redis) otherwise. A script is skipped, with the reason printed, only where a
prerequisite that is not the platform's is absent: another venv (lm-evaluation-harness, Label Studio), a package
that is not a dependency (crowd-kit), the shared FED data, the packaged model."""
import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from perf._services import drop_database
from perf._target_venvs import default_venv, python_of
from tests.conftest import FED_PATH, ROOT
from tests.modeleval.conftest import HAS_MODEL, NO_MODEL

PERF = ROOT / "perf"
ENVS = PERF / ".envs"

# Files a script imports (or, _lm_eval_worker.py, starts in another venv), with the tiny case that runs them.
MODULES = {
    "_dialogbench_items.py": "scoring_vs_lm_eval.py --shape dialogbench",
    "_lm_eval_worker.py": "scoring_vs_lm_eval.py",
    "_rss.py": "scoring_vs_lm_eval.py",
    "_services.py": "annotator_load.py",
    "_shared_start_items.py": "scoring_vs_lm_eval.py --shape huynh",
    "_target_venvs.py": "scoring_vs_lm_eval.py",
    "annotator_floor.py": "annotator_load.py",
    "labelstudio_target.py": "annotator_load.py --target labelstudio",
}
SERVICES = {"annotator_load.py", "annotator_load.py --target labelstudio", "cycle_cost.py", "import_vs_copy.py",
            "multi_instance.py", "report_vs_copy.py"}
MODEL = {"fed_active_replay.py", "scoring_on_accelerator.py", "scoring_vs_lm_eval.py",
         "scoring_vs_lm_eval.py --shape dialogbench", "scoring_vs_lm_eval.py --shape huynh",
         "scoring_vs_lm_eval.py --shape diqad", "training_vs_trainer.py"}
LOAD = ["--users", "2", "--items", "12", "--k", "2", "--repeat", "1", "--workers", "1", "--threads", "2",
        "--max-seconds", "60", "--database-url", "{db}"]
# {db}: a scratch database URL; {tmp}: the test's tmp_path; {venv}: the running venv.
TINY = {
    "annotator_load.py": [*LOAD, "--floor", "--page"],
    "annotator_load.py --target labelstudio": ["--target", "labelstudio", "--ls-db", "sqlite", *LOAD],
    "crowdkit_reference.py": ["{tmp}/toy.json", "--out", "{tmp}/reference.json"],
    "cycle_cost.py": ["--cycles", "4", "--page", "--database-url", "{db}"],
    "fed_active_replay.py": ["--limit", "12", "--work", "{tmp}", "--seeds", "20", "--budgets", "4", "6"],
    "fewer_labels_speed.py": ["--items", "2000", "--labelled", "200", "--repeat", "1"],
    "first_page.sh": ["--reuse-venv", "{venv}", "{tmp}/clone"],
    "import_vs_copy.py": ["--items", "30", "--repeat", "1", "--database-url", "{db}"],
    "multi_instance.py": ["--users", "4", "--items", "12", "--k", "2", "--workers", "1", "--threads", "2",
                          "--max-seconds", "60", "--database-url", "{db}"],
    "report_vs_copy.py": ["--items", "60", "--repeat", "1", "--resamples", "10", "--database-url", "{db}"],
    "scoring_on_accelerator.py": ["--device", "cpu", "--tasks", "1", "--items", "2", "--dtypes", "float32",
                                  "--out", "{tmp}/out"],
    "scoring_vs_lm_eval.py": ["--items", "4", "--chunk", "2", "--repeat", "1", "--profile-items", "0",
                              "--context-tokens", "40", "--out", "{tmp}/out"],
    # DialogBench-shaped items, both sides capped to AVX2 kernels; a chunk of 3 items of one task
    # is enough for the scorer to read their instruction once (and the floor to replay that).
    "scoring_vs_lm_eval.py --shape dialogbench": ["--shape", "dialogbench", "--isa", "avx2", "--tasks", "2",
                                                  "--items", "6", "--chunk", "3", "--repeat", "1",
                                                  "--profile-items", "0", "--out", "{tmp}/out"],
    # Prompts sharing a long start against the plain transformers loop (no lm-eval venv needed): one item
    # asked with each seed's examples, two DiQAD chats.
    "scoring_vs_lm_eval.py --shape huynh": ["--shape", "huynh", "--items", "3", "--chunk", "3", "--repeat", "1",
                                            "--profile-items", "0", "--out", "{tmp}/out"],
    "scoring_vs_lm_eval.py --shape diqad": ["--shape", "diqad", "--items", "2", "--chunk", "2", "--repeat", "1",
                                            "--profile-items", "0", "--out", "{tmp}/out"],
    "training_vs_trainer.py": ["--examples", "16", "--layers", "1", "--max-length", "16", "--rounds", "1"],
}


def perf_files():
    return sorted(p.name for p in [*PERF.glob("*.py"), *PERF.glob("*.sh")])


def test_every_perf_file_is_listed():
    listed = {case.split()[0] for case in TINY} | set(MODULES)
    assert set(perf_files()) <= listed, f"give these a tiny command line in TINY (or MODULES): " \
                                        f"{sorted(set(perf_files()) - listed)}"
    assert set(MODULES.values()) <= set(TINY)
    for name in MODULES:  # a module that grows a command line is a script: it needs its own tiny case
        assert name.startswith("_") or '__name__ == "__main__"' not in (PERF / name).read_text(), name


def skip(reason):
    print(f"skipping: {reason}")
    pytest.skip(reason)


def against(case):
    """The comparison side scoring_vs_lm_eval.py takes for a tiny case: the plain loop for the shapes lm-eval
    has no task for."""
    return "plain" if {"huynh", "diqad"} & set(TINY[case]) else "lm_eval"


def prerequisites(case, tmp_path):
    """Skips when something the script needs, that is not the platform's, is absent."""
    script = case.split()[0]
    if case in MODEL and not HAS_MODEL:
        skip(NO_MODEL)
    if case in SERVICES and not os.environ.get("DATABASE_URL", "").startswith("postgres"):
        skip("needs PostgreSQL: DATABASE_URL names no PostgreSQL server")
    if script == "scoring_vs_lm_eval.py" and "plain" not in against(case) and not python_of("lmeval").is_file():
        skip(f"the lm-evaluation-harness venv is absent ({default_venv('lmeval')}; a full run of the script or "
             "perf/_target_venvs.py creates it)")
    if "--isa" in TINY[case] and "avx2" not in Path("/proc/cpuinfo").read_text():
        skip("--isa avx2 needs a processor with AVX2")
    if (case == "annotator_load.py --target labelstudio"
            and not (ENVS / "labelstudio" / "bin" / "label-studio").exists()):
        skip(f"the Label Studio venv is absent ({ENVS / 'labelstudio'}; see perf/labelstudio_target.py)")
    if script == "crowdkit_reference.py":
        if importlib.util.find_spec("crowdkit") is None:
            skip("crowd-kit is not installed (not a dependency: pip install crowd-kit==1.4.2)")
        stored = json.loads((ROOT / "tests" / "metrics" / "data" / "crowdkit_reference.json").read_text())
        (tmp_path / "toy.json").write_text(json.dumps({name: {"answers": d["answers"], "gold": d["gold"]}
                                                       for name, d in stored["data_sets"].items()}))
    if (script == "fed_active_replay.py" or "huynh" in TINY[case]) and not FED_PATH.is_file():
        skip(f"FED data not found at {FED_PATH} (set HB_SHARED_DATA)")
    if script == "first_page.sh":
        for tool in ("git", "curl"):
            if shutil.which(tool) is None:
                skip(f"{tool} is not installed")
        # bin/setup's stamp: the first 16 hex digits of sha256(requirements.txt + bin/setup)
        stamp = hashlib.sha256((ROOT / "requirements.txt").read_bytes() + (ROOT / "bin" / "setup").read_bytes())
        stamp = stamp.hexdigest()[:16]
        if not (Path(sys.prefix) / f".installed-platform-{stamp}").is_file():
            skip(f"the running venv {sys.prefix} was not installed by bin/setup for this requirements.txt")


def scratch_database(case):
    url = os.environ["DATABASE_URL"]
    name = url.rsplit("/", 1)[1].split("?")[0]
    return f"{url.rsplit('/', 1)[0]}/{name}_tiny_{case.split('.')[0]}"[:200]


def command(case, tmp_path):
    script = PERF / case.split()[0]
    values = {"tmp": str(tmp_path), "venv": sys.prefix,
              "db": scratch_database(case) if case in SERVICES else ""}
    args = [a.format(**values) for a in TINY[case]]
    return (["bash", str(script)] if script.suffix == ".sh" else [sys.executable, str(script)]) + args


def case_param(case):
    marks = [pytest.mark.slow]
    if case in SERVICES:
        marks.append(pytest.mark.services)
    if case in MODEL:
        marks.append(pytest.mark.model)
    return pytest.param(case, marks=marks, id=case.replace(" ", ""))


@pytest.mark.parametrize("case", [case_param(case) for case in TINY])
def test_the_script_runs_at_a_tiny_size(case, tmp_path):
    prerequisites(case, tmp_path)
    argv = command(case, tmp_path)
    started = time.perf_counter()
    try:
        done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=600,
                              env={**os.environ, "PYTHONUNBUFFERED": "1"})
    finally:
        if case in SERVICES:  # most scripts drop their database; import_vs_copy.py keeps it for a look
            drop_database(scratch_database(case))
    print(f"{' '.join(argv[1:])}: exit {done.returncode} after {time.perf_counter() - started:.0f} s")
    assert done.returncode == 0, (f"{' '.join(argv)}\n--- stdout\n{done.stdout[-3000:]}"
                                  f"\n--- stderr\n{done.stderr[-5000:]}")
