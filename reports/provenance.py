"""What code and libraries computed a report: the git commit when there is one, and versions."""
import subprocess
from functools import lru_cache
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("django", "numpy", "scipy", "statsmodels", "krippendorff", "scikit-learn", "matplotlib")


def _git(*args):
    try:
        done = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


# Cached per process: a long-running server keeps running the code it loaded, whatever the checkout says later.
@lru_cache(maxsize=1)
def code_version():
    """{commit, dirty, packages}; commit is null outside a git checkout (e.g. a wheel install)."""
    commit = _git("rev-parse", "HEAD")
    status = _git("status", "--porcelain", "--untracked-files=no") if commit else None
    versions = {}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return {"commit": commit, "dirty": bool(status) if commit else None, "packages": versions}
