"""LaTeX tables (booktabs) in the shape of the published ones: DialogBench (tasks as columns, humans
and models as rows), DiQAD (Acc, UAR, Kappa, Spearman, Pearson, P, R, F1), correlations per quality
and agreement. Undefined figures print as "--"; the reasons are in the JSON report."""
import re

from django.utils.translation import gettext

from ..build import public
from ..readable import how_to_read
from .anchored import anchored_tables
from .judge_card import judge_card_tables
from .sequential import sequential_table
from .tables import (
    agreement_table,
    correlation_table,
    dialogbench_table,
    diqad_tables,
    gap_table,
    in_language,
    pairwise_tables,
    paper_tables,
)

SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{",
           "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}


DAGGER = r"\dag{}"
# Chinese, Japanese and Korean text (task names, systems, notes): pdflatex cannot set it; xelatex with xeCJK and a
# CJK font can. Noto Serif CJK has the Han characters and Hangul both (apt fonts-noto-cjk).
CJK_TEXT = re.compile(r"[\u1100-\u11ff\u2e80-\u9fff\ua960-\ua97f\uac00-\ud7ff\uf900-\ufaff\uff00-\uffef"
                      r"\U00020000-\U0003134f]")
CJK_PREAMBLE = (r"\usepackage{xeCJK}", r"\setCJKmainfont{Noto Serif CJK SC}", r"\setCJKsansfont{Noto Sans CJK SC}")


def preamble(latex):
    """The packages a document needs for this export: booktabs, and xeCJK with a CJK font (compiled with
    xelatex) when it holds Chinese, Japanese or Korean text."""
    return [r"\usepackage{booktabs}", *(CJK_PREAMBLE if CJK_TEXT.search(latex) else ())]


def escape(text):
    return re.sub(r"[\\&%$#_{}~^]", lambda m: SPECIAL[m.group()], str(text))


def marks(c, letters):
    """A cell's superscript marks: a dagger for a small sample, its note's letter."""
    symbols = ([r"\dag"] if c.flag else []) + ([letters[c.note]] if c.note else [])
    return r"\textsuperscript{" + ",".join(symbols) + "}" if symbols else ""


def tabular(table):
    first = table.rows[0] if table.rows else []
    align = "".join("l" if c.style == "text" else "r" for c in first) or "l" * len(table.header)
    label = re.sub(r"[^A-Za-z0-9:-]+", "-", table.key)
    letters = table.note_marks()
    size = [r"\footnotesize", r"\setlength{\tabcolsep}{3pt}"] if table.narrow else [r"\small"]
    lines = [r"\begin{table}[t]", r"\centering", *size,
             rf"\caption{{{escape(table.title)}}}",
             rf"\label{{tab:{label}}}", rf"\begin{{tabular}}{{{align}}}", r"\toprule",
             " & ".join(escape(h) for h in table.header) + r" \\", r"\midrule"]
    for row in table.rows:
        lines.append(" & ".join(escape(c.text()) + marks(c, letters) for c in row) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    flags = sorted({c.flag for row in table.rows for c in row if c.flag})
    note = table.note
    if flags:
        # One "small sample:" before the reasons of every flagged cell (each flag, in the reader's language, says it).
        said = re.compile(rf"^{re.escape(gettext('small sample'))}\s*[:：]\s*")
        note = (note + " " if note else "") + "\u2020 " + gettext("small sample: %(why)s") % {
            "why": "; ".join(said.sub("", f) for f in flags)} + "."
    if letters:
        note = (note + " " if note else "") + "; ".join(f"({letter}) {text}" for text, letter in letters.items()) + "."
    if note:
        text = escape(note).replace("\u2020", DAGGER)
        lines.append(rf"\par\smallskip{{\footnotesize {text}}}")
    lines += [r"\end{table}", ""]
    return "\n".join(lines)


def render_latex(report):
    data = public(report)
    tables = [dialogbench_table(data), gap_table(data), *paper_tables(data), *diqad_tables(data),
              correlation_table(data), agreement_table(data), *pairwise_tables(data), *anchored_tables(data),
              sequential_table(data), *judge_card_tables(data)]
    head = [f"% Report on {data['scope']['benchmark']}, gold {data['scope']['gold']}, generated {data['generated_at']}",
            f"% code {data['provenance']['code'].get('commit') or 'outside git'}; needs \\usepackage{{booktabs}}",
            "% How to read this report:"]
    head += [f"% {part['topic']}: {part['text']}" for part in how_to_read(data)]
    head.append("")
    body = "\n".join(tabular(in_language(t)) for t in tables if t is not None)
    if CJK_TEXT.search(body):
        head.insert(2, "% holds Chinese, Japanese or Korean text: compile with xelatex and " + " ".join(CJK_PREAMBLE))
    return "\n".join(head) + body
