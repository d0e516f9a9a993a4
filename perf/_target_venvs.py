"""The venvs of the third-party tools that read what the project writes or write what it reads, each apart from
the project's (their own pins never meet ours):

* lmeval: lm-evaluation-harness 0.4.13, used by perf/scoring_vs_lm_eval.py and by the lm-eval round trip
  (tests/modeleval/test_lmeval_roundtrip.py);
* inspect: inspect_ai 0.3.285, which writes the eval logs that tests/modeleval/test_inspect_import.py imports
  (its s3fs pins an older fsspec than the platform's, so it is not a platform dependency: the platform reads
  the log's JSON itself).

    python perf/_target_venvs.py NAME [VENV]

builds NAME's venv at VENV (default: $HB_<NAME>_VENV, else perf/.envs/NAME) when it is missing and prints its
python. torch is pinned as bin/setup pins it and installed first, so pip never picks a CUDA build on a CPU
machine (this machine's wheel cache holds the CPU one; elsewhere set HB_TORCH_INDEX, e.g.
https://download.pytorch.org/whl/cpu).
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TORCH = "torch==2.13.0"
# What each venv is built from: the versions the comparisons and round trips are about.
PACKAGES = {
    "lmeval": [TORCH, "lm-eval==0.4.13", "transformers==5.23.0", "accelerate", "sentencepiece", "psutil"],
    "inspect": ["inspect_ai==0.3.285"],
}


def default_venv(name: str) -> Path:
    return Path(os.environ.get(f"HB_{name.upper()}_VENV") or ROOT / "perf" / ".envs" / name)


def python_of(name: str, venv: Path | None = None) -> Path:
    return (venv or default_venv(name)) / "bin" / "python"


def ensure(name: str, venv: Path | None = None) -> Path:
    """NAME's venv python, the venv created first when it is missing."""
    venv = venv or default_venv(name)
    python = python_of(name, venv)
    if python.is_file():
        return python
    print(f"creating {venv} ({' '.join(PACKAGES[name])})", file=sys.stderr)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = [str(python), "-m", "pip", "install", "--quiet"]
    packages = PACKAGES[name]
    if TORCH in packages:
        index = os.environ.get("HB_TORCH_INDEX")
        subprocess.run(pip + (["--extra-index-url", index] if index else []) + [TORCH], check=True)
    # The torch pin holds while the rest is resolved: nothing may move it.
    constraint = venv / "torch-constraint.txt"
    constraint.write_text(TORCH + "\n")
    subprocess.run(pip + ["-c", str(constraint)] + packages, check=True)
    return python


if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in PACKAGES:
        sys.exit(f"usage: python perf/_target_venvs.py {{{','.join(PACKAGES)}}} [VENV]")
    print(ensure(sys.argv[1], Path(sys.argv[2]) if len(sys.argv) > 2 else None))
