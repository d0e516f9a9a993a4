"""Every string the annotator, QC, expert and report pages show has its Simplified Chinese and Korean translation: the
strings are read from the pages' templates (Django's own templatize, as makemessages reads them) and scripts
(their gettext, ngettext and pgettext calls), and looked up in the catalogs as written (.po) and as compiled (.mo,
committed so that a fresh clone needs no gettext); each translation keeps its placeholders."""
import ast
import gettext
import re
from pathlib import Path

import pytest
from django.conf import settings
from django.utils.translation.template import templatize

ROOT = Path(settings.BASE_DIR)
TEMPLATES = ROOT / "frontend" / "templates"
SCRIPTS = ROOT / "frontend" / "static" / "frontend" / "js"
LOCALE = Path(settings.LOCALE_PATHS[0])
LANGUAGES = ("zh_Hans", "ko")

# The pages an annotator, a QC and an expert see, and every template and script they are made of.
PAGES = {
    "annotator": (["frontend/base.html", "frontend/home.html", "registration/login.html",
                   "frontend/password_change.html", "frontend/annotate.html"],
                  ["annotate.js", "form.js", "dialogue.js", "ask.js", "keys.js"]),
    "qc": (["frontend/base.html", "frontend/home.html", "frontend/review.html", "frontend/annotator_estimates.html"],
           ["review.js", "form.js", "dialogue.js", "ask.js", "keys.js"]),
    "expert": (["frontend/base.html", "frontend/home.html", "frontend/disagreements.html",
                "frontend/uncertain_items.html"],
               ["disagreements.js", "flags.js", "form.js", "dialogue.js", "ask.js", "keys.js"]),
    # A researcher's report page, its downloads' waiting page, and the report document in its frame.
    "report": (["frontend/base.html", "frontend/home.html", "frontend/report.html", "frontend/report_pending.html",
                "reports/report.html"], ["report.js"]),
    # A researcher's pages: the strings marked for translation so far (the gap while labels arrive).
    "researcher": (["frontend/base.html", "frontend/dashboard.html", "frontend/report.html"],
                   ["dashboard.js", "sequence.js"]),
}
# Scripts of other pages whose strings are translated too.
SCRIPTS_ALONE = ("manage_upload.js",)
TEMPLATE_DIRS = (TEMPLATES, ROOT / "reports" / "templates")
LITERAL = r"""u?'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*\""""
CALL = re.compile(rf"\b(gettext|ngettext|pgettext)\(\s*((?:(?:{LITERAL})\s*,?\s*)+)")
PLACEHOLDER = re.compile(r"%\(\w+\)s")


def calls(source):
    """(context or None, msgid, plural or None) of each translation call with literal arguments."""
    found = set()
    for match in CALL.finditer(source):
        args = [ast.literal_eval(a.lstrip("u")) for a in re.findall(LITERAL, match.group(2))]
        if match.group(1) == "pgettext":
            found.add((args[0], args[1], None))
        elif match.group(1) == "ngettext":
            found.add((None, args[0], args[1]))
        else:
            found.add((None, args[0], None))
    return found


def used(page):
    templates, scripts = PAGES[page]
    strings = set()
    for name in templates:
        path = next(folder / name for folder in TEMPLATE_DIRS if (folder / name).exists())
        strings |= calls(templatize(path.read_text(encoding="utf-8"), origin=name))
    for name in scripts:
        strings |= calls((SCRIPTS / name).read_text(encoding="utf-8"))
    return strings


def po_entries(path):
    """{(context, msgid): (msgstr, fuzzy)} of a .po file (msgstr[0] for a plural entry)."""
    entries = {}
    for block in re.split(r"\n\s*\n", path.read_text(encoding="utf-8")):
        fields, current, fuzzy = {}, None, False
        for line in block.splitlines():
            if line.startswith("#,") and "fuzzy" in line:
                fuzzy = True
            match = re.match(r'^(msgctxt|msgid_plural|msgid|msgstr(?:\[0\])?)(?:\[\d+\])? (".*")$', line)
            if match:
                current = match.group(1) if not line.startswith("msgstr[") or line.startswith("msgstr[0]") else None
                if current:
                    fields[current.replace("[0]", "")] = ast.literal_eval(match.group(2))
            elif line.startswith('"') and current:
                fields[current.replace("[0]", "")] += ast.literal_eval(line)
        if fields.get("msgid"):
            entries[(fields.get("msgctxt"), fields["msgid"])] = (fields.get("msgstr", ""), fuzzy)
    return entries


def catalogs(language):
    po, mo = {}, {}
    for domain in ("django", "djangojs"):
        po.update(po_entries(LOCALE / language / "LC_MESSAGES" / f"{domain}.po"))
        with open(LOCALE / language / "LC_MESSAGES" / f"{domain}.mo", "rb") as f:
            mo.update(gettext.GNUTranslations(f)._catalog)
    return po, mo


def untranslated(strings, language):
    """(missing, stale, placeholders): the msgids of `strings` the catalogs of `language` lack, have compiled from an
    older .po, or translate with other placeholders."""
    po, mo = catalogs(language)
    missing, stale, placeholders = [], [], []
    for context, msgid, plural in sorted(strings, key=str):
        text, fuzzy = po.get((context, msgid), ("", False))
        if not text or fuzzy:
            missing.append(msgid)
            continue
        key = f"{context}\x04{msgid}" if context else msgid
        compiled = mo.get((key, 0)) if plural else mo.get(key)
        if compiled != text:
            stale.append(msgid)
        if sorted(PLACEHOLDER.findall(text)) != sorted(PLACEHOLDER.findall(msgid)):
            placeholders.append(msgid)
    return missing, stale, placeholders


def check(strings, language):
    missing, stale, placeholders = untranslated(strings, language)
    assert not missing, f"untranslated in {language} (add them to frontend/locale, then bin/messages): {missing}"
    assert not stale, f"the compiled {language} catalog is older than its .po (run bin/messages): {stale}"
    assert not placeholders, f"translations that lose or add placeholders: {placeholders}"


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("page", sorted(PAGES))
def test_every_string_of_the_page_is_translated(page, language):
    strings = used(page)
    assert len(strings) > 20, strings  # the extraction found the page's strings
    check(strings, language)


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("script", SCRIPTS_ALONE)
def test_every_string_of_the_script_is_translated(script, language):
    strings = calls((SCRIPTS / script).read_text(encoding="utf-8"))
    assert len(strings) >= 4, strings
    check(strings, language)


def test_the_extraction_reads_templates_and_scripts():
    found = calls(templatize('{% load i18n %}{% translate "Submit" %}{% translate "Change" context "language" %}'
                             '{% blocktranslate count n=k %}{{ n }} item{% plural %}{{ n }} items{% endblocktranslate '
                             '%}'))
    assert found == {(None, "Submit", None), ("language", "Change", None), (None, "%(n)s item", "%(n)s items")}
    assert calls('gettext("Saved.") + fill(ngettext("%(n)s key", "%(n)s keys", n), { n })') == {
        (None, "Saved.", None), (None, "%(n)s key", "%(n)s keys")}


# The report's modules whose texts the HTML and LaTeX documents show in the reader's language: the reading guide,
# the templates of composed texts, the tables and the plots.
REPORT_MODULES = ("reports/readable.py", "reports/texts.py",
                  *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "reports" / "render").glob("*.py")))


def python_calls(source):
    """(context or None, msgid, None) of each gettext, gettext_noop, _ and pgettext call of a Python module with
    literal arguments (Python joins the pieces of a long literal as makemessages does)."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
            continue
        literal = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        if node.func.id == "pgettext" and len(literal) == 2:
            found.add((literal[0], literal[1], None))
        elif node.func.id in ("gettext", "gettext_noop", "_") and literal:
            found.add((None, literal[0], None))
    return found


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_text_the_report_renders_for_its_reader_is_translated(language):
    strings = set().union(*(python_calls((ROOT / module).read_text(encoding="utf-8")) for module in REPORT_MODULES))
    assert len(strings) > 150, len(strings)
    check(strings, language)
