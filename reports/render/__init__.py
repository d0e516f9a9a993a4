"""One report, four outputs: JSON a script reads back, CSV, HTML with inline SVG plots, LaTeX tables."""
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


def render(report, fmt):
    """The report as text in format `fmt` (json, csv, html, latex)."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; expected one of {sorted(FORMATS)}")
    return FORMATS[fmt][0](report)
