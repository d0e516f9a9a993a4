"""The report's plots as inline SVG text (matplotlib, Agg backend, no pyplot state); their titles, axes and legends
in the reader's language (the data's names as they are)."""
import io
from collections import defaultdict

import matplotlib
from django.utils.translation import gettext

matplotlib.use("Agg")
from matplotlib import font_manager, rc_context  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

# Task names, systems and labels may be Chinese or Korean. Latin text keeps DejaVu Sans; a glyph it lacks comes
# from the first font below that has it (matplotlib's font fallback): Noto Sans CJK (apt fonts-noto-cjk, in the
# set-up and the image) first, then CJK fonts other systems ship. Only the installed ones are named, so a
# missing one costs no warning; the SVG names the same list for the browser that shows it.
CJK_FALLBACKS = ("Noto Sans CJK SC", "Noto Sans CJK KR", "Noto Sans CJK JP", "Source Han Sans SC", "Source Han Sans K",
                 "WenQuanYi Zen Hei", "WenQuanYi Micro Hei", "Droid Sans Fallback", "NanumGothic",
                 "Microsoft YaHei", "Malgun Gothic", "PingFang SC", "Apple SD Gothic Neo")


def font_families():
    installed = {font.name for font in font_manager.fontManager.ttflist}
    return ["DejaVu Sans", *(name for name in CJK_FALLBACKS if name in installed)]


# Text stays text (smaller, searchable) and ids are salted so that one report renders the same twice.
RC = {"svg.fonttype": "none", "svg.hashsalt": "humanbaseline", "font.size": 9, "font.family": font_families()}
MAX_PANELS = 12


def to_svg(fig):
    out = io.StringIO()
    fig.savefig(out, format="svg", bbox_inches="tight", metadata={"Date": None})
    text = out.getvalue()
    return text[text.index("<svg"):]


def _figure(width, height):
    return Figure(figsize=(width, height), layout="constrained")


def _legend(fig, ax):
    """The legend beside the axes, never over the data; none for a single unnamed series."""
    handles, labels = ax.get_legend_handles_labels()
    if handles:
        # "outside" places it in the figure's margin; constrained layout shrinks the axes to make room.
        fig.legend(handles, labels, loc="outside right upper", fontsize=7, frameon=False)


def gap_plot(report):
    """Human (majority) minus model accuracy per task, with the paired-bootstrap interval."""
    mc = report.get("multiple_choice")
    rows = [m for m in (mc or {}).get("models", []) if m.get("gap") is not None]
    if not rows:
        return None
    tasks = list(dict.fromkeys(m["task"] for m in rows)) + [None]  # None: over all tasks
    models = list(dict.fromkeys(m["model"] for m in rows))
    # Over all tasks, each model's gap with the interval that leads (the one matching how the items were drawn).
    overall = {}
    for m in mc["overall"]["models"]:
        prefix = "pooled_" if m.get("interval_lead") == "item-level" else ""
        overall[m["model"]] = {key: m.get(prefix + key) for key in ("gap", "gap_low", "gap_high")}
    leads = {m.get("interval_lead") for m in mc["overall"]["models"] if m.get("interval_lead")}
    overall_label = ({"item-level": gettext("overall, pooled items (item-level)"),
                      "within-task": gettext("overall, mean of tasks (within-task)")}[leads.pop()] if len(leads) == 1
                     else gettext("overall (leading interval)"))
    with rc_context(RC):
        fig = _figure(7, 0.35 * len(tasks) * max(1, len(models)) + 1.2)
        ax = fig.add_subplot()
        step = 0.8 / max(1, len(models))
        for j, model in enumerate(models):
            ys, xs, lows, highs = [], [], [], []
            for t, task in enumerate(tasks):
                m = overall.get(model) if task is None else next(
                    (r for r in rows if r["task"] == task and r["model"] == model), None)
                if m is None or m.get("gap") is None or m.get("gap_low") is None:
                    continue
                ys.append(t + j * step)
                xs.append(m["gap"])
                lows.append(m["gap"] - m["gap_low"])
                highs.append(m["gap_high"] - m["gap"])
            ax.errorbar(xs, ys, xerr=[lows, highs], fmt="o", capsize=3, label=model)
        ax.axvline(0, color="grey", linewidth=0.8)
        ax.set_yticks([t + step * (len(models) - 1) / 2 for t in range(len(tasks))], tasks[:-1] + [overall_label])
        ax.invert_yaxis()
        ax.set_xlabel(gettext("human (majority) accuracy minus model accuracy"))
        ax.set_title(gettext("Gap per task, %(level)s paired-bootstrap interval") % {
            "level": f"{int(report['options']['confidence'] * 100)}%"})
        _legend(fig, ax)
        return to_svg(fig)


def position_plot(report):
    """Accuracy by the correct answer's position, pooled over tasks (weighted by items)."""
    mc = report.get("multiple_choice")
    rows = [p for p in (mc or {}).get("positions", []) if p["source"] == "gold_position"]
    forced = [p for p in (mc or {}).get("positions", [])
              if p["source"] == "forced_position" and p["accuracy"] is not None]
    if not rows and not forced:
        return None
    series = defaultdict(lambda: defaultdict(lambda: [0.0, 0]))
    for p in rows:
        figures = {gettext("humans (majority)"): p["human_majority"], **p["models"]}
        for name, value in figures.items():
            if value is not None:
                series[name][p["position"]][0] += value * p["n_items"]
                series[name][p["position"]][1] += p["n_items"]
    for p in forced:
        cell = series[p["model"], "forced"][p["position"]]
        cell[0] += p["accuracy"] * p["n_items"]
        cell[1] += p["n_items"]
    letters = sorted({letter for s in series.values() for letter in s})
    with rc_context(RC):
        fig = _figure(6, 3.2)
        ax = fig.add_subplot()
        for name, cells in series.items():
            xs = [letters.index(k) for k in sorted(cells)]
            ys = [total / n for total, n in (cells[k] for k in sorted(cells))]
            forced = isinstance(name, tuple)
            ax.plot(xs, ys, marker="o", linestyle="--" if forced else "-",
                    label=gettext("%(model)s (gold forced)") % {"model": name[0]} if forced else name)
        ax.set_xticks(range(len(letters)), letters)
        ax.set_ylim(0, 1.05)
        ax.set_xlabel(gettext("position of the correct answer"))
        ax.set_ylabel(gettext("accuracy"))
        ax.set_title(gettext("Position bias"))
        _legend(fig, ax)
        return to_svg(fig)


def agreement_plot(report):
    """Fleiss' kappa and Krippendorff's alpha per task and question (campaign level)."""
    rows = report["agreement"]["campaigns"]
    if not rows:
        return None
    labels = [f"{r['campaign']}: {r['task']} / {r['question']}" for r in rows]
    with rc_context(RC):
        fig = _figure(7, 0.28 * len(rows) + 1.2)
        ax = fig.add_subplot()
        ys = range(len(rows))
        bars = ((-0.2, "fleiss_kappa", "Fleiss' kappa"), (0.2, "krippendorff_alpha", "Krippendorff's alpha"))
        for offset, key, name in bars:
            values = [r.get(key) or 0 for r in rows]
            ax.barh([y + offset for y in ys], values, height=0.4, label=gettext(name))
        ax.set_yticks(list(ys), labels)
        ax.invert_yaxis()
        ax.axvline(0, color="grey", linewidth=0.8)
        ax.set_xlabel(gettext("agreement (undefined shown as 0; see the table)"))
        ax.set_title(gettext("Agreement per question"))
        _legend(fig, ax)
        return to_svg(fig)


def scatter_plot(report):
    """Model rating against the mean human rating, one panel per model and quality."""
    panels = [p for p in (report.get("ratings") or {}).get("_scatter", []) if p["points"]][:MAX_PANELS]
    if not panels:
        return None
    cols = min(3, len(panels))
    rows = -(-len(panels) // cols)
    with rc_context(RC):
        fig = _figure(3 * cols, 2.8 * rows)
        for n, panel in enumerate(panels):
            ax = fig.add_subplot(rows, cols, n + 1)
            xs, ys = zip(*panel["points"], strict=True)
            ax.scatter(xs, ys, s=6, alpha=0.6)
            ax.set_xlabel(gettext("mean human rating"))
            ax.set_ylabel(gettext("model rating"))
            ax.set_title(f"{panel['model']}: {panel['task']} / {panel['quality']}", fontsize=8)
        return to_svg(fig)


def pass_at_n_plot(report):
    """pass@N per system: solid as judged by people, dashed by the loop detector, dotted by a judge model."""
    curves = [c for c in ((report.get("pairwise") or {}).get("selfchat") or {}).get("pass_at_n", []) if c["points"]]
    if not curves:
        return None
    with rc_context(RC):
        fig = _figure(6, 3.2)
        ax = fig.add_subplot()
        for curve in curves:
            points = [p for p in curve["points"] if p["share"] is not None]
            ax.plot([p["n"] for p in points], [p["share"] for p in points], marker="o", markersize=3,
                    linestyle={"loop_detector": "--", "humans": "-"}.get(curve["judged_by"], ":"),
                    label=gettext("%(system)s, judged by %(judged_by)s") % {"system": curve["system"],
                                                                   "judged_by": judged_by(curve["judged_by"])})
        ax.set_ylim(0, 1.05)
        ax.set_xlabel(gettext("N (utterances shown)"))
        ax.set_ylabel(gettext("share passing as human"))
        ax.set_title("pass@N")
        _legend(fig, ax)
        return to_svg(fig)


def judged_by(name):
    """Who judged a pass@N curve, for its legend: the people, the loop detector, or a judge model by its name."""
    if name.startswith("judge:"):
        return name.removeprefix("judge:")
    return {"humans": gettext("humans"), "loop_detector": gettext("loop detector")}.get(name, name)


def all_plots(report):
    """(title, svg) for every plot the report has data for."""
    plots = [("Gap per task", gap_plot), ("Position bias", position_plot), ("Agreement per question", agreement_plot),
             ("Model against the mean human rating", scatter_plot), ("pass@N of generated dialogues", pass_at_n_plot)]
    return [(title, svg) for title, make in plots if (svg := make(report))]
