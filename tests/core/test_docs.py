"""The README stays short enough to read in minutes, and every relative link of it and of docs/ leads to a file
that exists (a page moved or renamed breaks this test, not the reader)."""
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
LINK = re.compile(r"\]\(([^)#\s]+)(#[^)]*)?\)")


def test_readme_is_short():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").count("\n")
    assert lines <= 250, f"README.md has {lines} lines; move detail into docs/"


def test_readme_starts_with_the_two_commands():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```\n(.*?)```", text, flags=re.S)
    assert [b.strip() for b in blocks[:2]] == ["bin/run", "bin/test"]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(page):
    text = page.read_text(encoding="utf-8")
    broken = [target for target, _ in LINK.findall(text)
              if "://" not in target and not (page.parent / target).exists()]
    assert not broken, f"{page.relative_to(ROOT)} links to missing files: {broken}"
