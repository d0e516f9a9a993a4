"""What a study is: a folder under studies/ and one line of the registry. Counted from the source (AST):
the comparisons of a run's preset to a study's, the tables keyed by a study's preset, and the scorer modules the
reports and the pages import, outside studies/; and studies/ imports nothing of ours."""
import ast
import sys
from pathlib import Path

import pytest

import studies
import studies.recipes

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("annotation", "benchmarks", "config", "core", "frontend", "humanbaseline", "metrics", "modeleval", "perf",
            "reports")
PRESETS = frozenset(studies.STUDIES)
HOME = "studies"


def is_preset_ref(node, literal: bool = True) -> bool:
    """A study's preset named: `botchat.PRESET`, a `DIQAD_PRESET`, or (where `literal`) the string "botchat"."""
    if isinstance(node, ast.Attribute):
        return node.attr == "PRESET"
    if isinstance(node, ast.Name):
        return node.id.endswith("_PRESET")
    if isinstance(node, ast.Constant):
        return literal and node.value in PRESETS
    if isinstance(node, ast.Tuple):
        return any(is_preset_ref(e, literal) for e in node.elts)
    return False


def is_run_preset(node) -> bool:
    """A run's preset read: `preset`, `x.preset`, `x["preset"]`, `x.get("preset")`."""
    if isinstance(node, ast.Name):
        return node.id == "preset"
    if isinstance(node, ast.Attribute):
        return node.attr == "preset"
    if isinstance(node, ast.Subscript):
        return isinstance(node.slice, ast.Constant) and node.slice.value == "preset"
    if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "get" and node.args:
        return isinstance(node.args[0], ast.Constant) and node.args[0].value == "preset"
    if isinstance(node, ast.Tuple):
        return any(map(is_run_preset, node.elts))
    return False


def is_nothing(node) -> bool:
    return isinstance(node, ast.Constant) and node.value in (None, "")


def python_files(root: Path, packages=PACKAGES, skip=(HOME,)):
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            relative = path.relative_to(root)
            if "migrations" in relative.parts or any(part.startswith(".") for part in relative.parts) \
                    or any(relative.is_relative_to(s) for s in skip):
                continue
            yield relative, ast.parse(path.read_text(), str(path))


def preset_comparisons(root: Path = ROOT, skip=(HOME,)) -> list[str]:
    """Comparisons that name a study's preset (`preset == botchat.PRESET`, `h["preset"] == "diqad"`) or test a
    run's preset against a table of presets (`settings.get("preset") in PRESETS`)."""
    found = []
    for relative, tree in python_files(root, skip=skip):
        for node in ast.walk(tree):
            if not isinstance(node, ast.Compare):
                continue
            sides = [node.left, *node.comparators]
            run_preset = any(map(is_run_preset, sides))
            named = any(is_preset_ref(s, literal=run_preset) for s in sides)
            against_table = run_preset and not all(
                is_nothing(s) or is_run_preset(s) for s in sides)
            if named or against_table:
                found.append(f"{relative}:{node.lineno}: {ast.unparse(node)}")
    return found


def preset_keyed_tables(root: Path = ROOT, skip=(HOME,)) -> list[str]:
    """Dicts whose keys name a study's preset (`{dialogbench.PRESET: ...}`, `{(Mode.RATING, diqad.PRESET): ...}`,
    `{"dialogbench": ..., "botchat": ...}`). A file format that happens to share a study's name is not a preset:
    only `X.PRESET` keys count, or literal keys that are all studies' presets, two or more."""
    found = []
    for relative, tree in python_files(root, skip=skip):
        for node in ast.walk(tree):
            if isinstance(node, ast.Dict):
                keys = [k for k in node.keys if k is not None]
            elif isinstance(node, ast.DictComp):
                keys = [node.key]
            else:
                continue
            by_attribute = [k for k in keys if is_preset_ref(k, literal=False)]
            literal = [k for k in keys if isinstance(k, ast.Constant)]
            all_studies = len(literal) >= 2 and all(k.value in PRESETS for k in literal)
            if by_attribute or all_studies:
                found.append(f"{relative}:{node.lineno}: {{{', '.join(ast.unparse(k) for k in keys[:3])}...}}")
    return found


def scorer_imports(root: Path = ROOT, packages=("reports", "frontend")) -> list[str]:
    found = []
    for relative, tree in python_files(root, packages):
        for node in ast.walk(tree):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) and node.level == 0 else []
            found += [f"{relative}:{node.lineno}: {name}" for name in names if name.startswith("modeleval.scorers")]
    return found


def study_modules_named_outside(root: Path = ROOT) -> list[str]:
    """Files outside studies/ that import one study's folder (`studies.botchat...`) rather than the registry: each
    is a file a new study would have to touch too."""
    found = set()
    for relative, tree in python_files(root):
        for node in ast.walk(tree):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) and node.level == 0 else []
            if any(name.split(".")[:2] in ([HOME, p] for p in PRESETS) for name in names):
                found.add(str(relative))
    return sorted(found)


def test_studies_import_nothing_of_ours():
    """studies/ is ground floor: the standard library only (no Django, no torch, no app of ours)."""
    ours = {p for p in PACKAGES} | {"tests"}
    for path in sorted((ROOT / HOME).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                roots = {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                roots = {node.module.split(".")[0]}
            else:
                continue
            assert roots <= set(sys.stdlib_module_names) | {HOME}, f"{path.relative_to(ROOT)} imports {roots}"
            assert not roots & ours


def test_every_study_folder_is_one_registry_line():
    folders = {p.parent.name for p in (ROOT / HOME).glob("*/__init__.py")}
    assert folders == set(studies.STUDIES)
    registry = (ROOT / HOME / "__init__.py").read_text()
    assert all(registry.count(f"    {name}.STUDY,\n") == 1 for name in folders)
    assert all(studies.get(name).preset == name for name in folders)


def test_no_preset_comparison_outside_the_studies():
    assert preset_comparisons() == []


def test_no_table_keyed_by_a_preset_outside_the_studies():
    assert preset_keyed_tables() == []


def test_the_reports_and_the_pages_import_no_scorer():
    assert scorer_imports() == []


def test_the_checks_find_what_they_count(tmp_path):
    (tmp_path / "reports").mkdir()
    (tmp_path / "reports" / "x.py").write_text(
        "from modeleval.scorers import botchat\nimport modeleval.scorers.pairwise\n"
        "if settings.get('preset') == botchat.PRESET:\n    pass\nif preset in PRESETS:\n    pass\n"
        "if preset is None or s['preset'] == '':\n    pass\n"
        "T = {(Mode.RATING, diqad.PRESET): 1}\nOURS = {'dialogbench': 1, 'botchat': 2}\nF = {'diqad': 1, 'fed': 2}\n"
        "if args.shape == 'dialogbench' or k not in ('judges', 'botchat'):\n    pass\n")
    assert [hit.split(":")[1] for hit in preset_comparisons(tmp_path)] == ["3", "5"]
    assert [hit.split(":")[1] for hit in preset_keyed_tables(tmp_path)] == ["9", "10"]
    assert [hit.split(":")[1] for hit in scorer_imports(tmp_path)] == ["1", "2"]


class ToyVerification(studies.recipes.Rating):
    settings = {"instruction": "Is the reply kind?"}
    template = ("toy-yes-no-en/1", "Dialogue:\n{context}\nReply: {response}\nKind?{answer}")


def test_a_registered_study_is_offered_and_followed_by_its_mode_family(monkeypatch):
    """The registry line is all the house needs: the yes/no family offers the study, takes its settings and its
    template, and runs of it carry its protocol."""
    from modeleval import modes

    toy = studies.Study(preset="toy", title="Toy (2026)", source="nowhere", published={"yes_no": {}},
                        standing={"*": (studies.Difference("setting", "theirs", "ours", "why"),)},
                        recipes={"yes_no": ToyVerification()})
    monkeypatch.setitem(studies.STUDIES, "toy", toy)
    settings = modes.resolve_settings("yes_no", "en", {"preset": "toy"})
    assert settings["instruction"] == "Is the reply kind?"
    assert modes.family("yes_no").default_template("yes_no", settings) == ToyVerification.template
    assert {"preset": "toy", "title": "Toy (2026)"} in studies.presets_for("yes_no")
    assert [d["setting"] for d in studies.protocol("yes_no", settings)["differences"]] == ["setting"]
    monkeypatch.delitem(studies.STUDIES, "toy")
    with pytest.raises(ValueError, match="preset must be one of"):
        modes.resolve_settings("yes_no", "en", {"preset": "toy"})
