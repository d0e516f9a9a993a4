"""One report, four outputs: JSON a script reads back, CSV, HTML with inline SVG plots, LaTeX tables. HTML and LaTeX
are for people: their headings, table headers and notes are in the reader's language (the figures stored once, in no
language; JSON and CSV name them by the same keys in every language)."""
from django.conf import settings
from django.utils import translation

from .csv import render_csv
from .html import render_html
from .json import render_json
from .latex import render_latex

# format -> (renderer, media type, file extension)
FORMATS = {
    "json": (render_json, "application/json", "json"),
    "csv": (render_csv, "text/csv", "csv"),
    "html": (render_html, "text/html", "html"),
    "latex": (render_latex, "application/x-latex", "tex"),
}


# The formats whose text depends on the reader's language.
FOR_PEOPLE = frozenset({"html", "latex"})


def text_language(fmt, language=None):
    """The language `fmt` is rendered in for a reader of `language` (None: English): "" for a format that is the same
    in every language."""
    if fmt not in FOR_PEOPLE:
        return ""
    return translation.get_supported_language_variant(language) if language else settings.LANGUAGE_CODE


def render(report, fmt, language=None):
    """The report as text in format `fmt` (json, csv, html, latex), for a reader of `language` (None: English)."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; expected one of {sorted(FORMATS)}")
    with translation.override(text_language(fmt, language) or settings.LANGUAGE_CODE):
        return FORMATS[fmt][0](report)
