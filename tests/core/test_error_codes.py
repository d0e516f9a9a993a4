"""Every refusal raised in the project's code names its code as a member of `Code`: a typo in a string code
would only show as a 500 when that refusal is first raised, a misspelt member fails at import."""
import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("annotation", "benchmarks", "core", "frontend", "humanbaseline", "metrics", "modeleval", "reports")
# The refusal types whose first argument is the code (ImportFailure and ReportBusy set their own).
REFUSALS = {"ActionError", "RunError"}


def refusals_with_a_code_not_from_code():
    found = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if not isinstance(node, ast.Call):
                    continue
                name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", None)
                if name not in REFUSALS or not node.args:
                    continue
                code = node.args[0]
                named = (isinstance(code, ast.Attribute) and isinstance(code.value, ast.Name)
                         and code.value.id == "Code")
                if not named and not isinstance(code, ast.Name):  # a variable passes a code received
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {ast.unparse(code)}")
    return found


def test_every_refusal_names_a_member_of_code():
    assert refusals_with_a_code_not_from_code() == []


def test_the_check_finds_a_string_code(tmp_path, monkeypatch):
    package = tmp_path / "modeleval"
    package.mkdir()
    (package / "x.py").write_text('raise RunError("no_such_code", "typo")\nraise RunError(Code.NO_ITEMS, "ok")\n')
    monkeypatch.setattr(__import__(__name__, fromlist=["ROOT"]), "ROOT", tmp_path)
    monkeypatch.setattr(__import__(__name__, fromlist=["PACKAGES"]), "PACKAGES", ("modeleval",))
    assert refusals_with_a_code_not_from_code() == ["modeleval/x.py:1: 'no_such_code'"]
