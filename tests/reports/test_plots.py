"""Plot legends never cover data: each legend lies outside its axes (checked on the drawn figure)."""
import matplotlib.transforms as mtransforms
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg

from reports.render import plots

MODELS = ["smollm2-135m-instruct", "qwen2.5-0.5b-instruct", "a-third-model-with-a-long-name"]


def report():
    tasks = ["dialogue_nli", "emotion_detection", "intent_classification"]
    rows = [{"task": t, "model": m, "gap": 0.1 * i - 0.2, "gap_low": 0.1 * i - 0.4, "gap_high": 0.1 * i + 0.1}
            for i, (t, m) in enumerate((t, m) for t in tasks for m in MODELS)]
    positions = [{"source": "gold_position", "position": p, "n_items": 10, "human_majority": 0.95,
                  "models": {m: v for m, v in zip(MODELS, (1.0, 0.9, 0.02), strict=True)}} for p in "ABCD"]
    positions += [{"source": "forced_position", "position": p, "n_items": 10, "accuracy": 1.0, "model": MODELS[0]}
                  for p in "ABCD"]
    return {
        "options": {"confidence": 0.95},
        "multiple_choice": {"models": rows, "positions": positions,
                            "overall": {"models": [{"model": m, "gap": 0.9, "gap_low": 0.8, "gap_high": 1.0}
                                                   for m in MODELS]}},
        "agreement": {"campaigns": [{"campaign": 1, "task": t, "question": "answer", "fleiss_kappa": 0.98,
                                     "krippendorff_alpha": 0.97} for t in tasks]},
        "pairwise": {"selfchat": {"pass_at_n": [
            {"system": m, "judged_by": judge,
             "points": [{"n": n, "share": 1.0 if j % 2 else 0.0} for n in range(3, 12)]}
            for j, (m, judge) in enumerate((m, judge) for m in MODELS for judge in ("humans", "loop_detector"))]}},
        "ratings": None,
    }


@pytest.fixture
def figures(monkeypatch):
    drawn = {}
    original = plots.to_svg

    def keep(fig):
        drawn[len(drawn)] = fig
        return original(fig)

    monkeypatch.setattr(plots, "to_svg", keep)
    return drawn


@pytest.mark.parametrize("plot", [plots.gap_plot, plots.position_plot, plots.agreement_plot, plots.pass_at_n_plot])
def test_legends_lie_outside_the_axes(figures, plot):
    assert plot(report()) is not None
    [fig] = figures.values()
    canvas = FigureCanvasAgg(fig)  # the figure as saved (constrained layout applied), drawn to measure it
    canvas.draw()
    renderer = canvas.get_renderer()
    legends = [*fig.legends, *(ax.get_legend() for ax in fig.axes if ax.get_legend())]
    assert legends, "the plot has more than one series: it needs a legend"
    for legend in legends:
        box = legend.get_window_extent(renderer)
        for ax in fig.axes:
            inside = mtransforms.Bbox.intersection(box, ax.get_window_extent(renderer))
            assert inside is None or inside.width * inside.height < 1, f"{plot.__name__}: legend over the data"
        assert fig.bbox.contains(box.x0, box.y0) and fig.bbox.contains(box.x1 - 1, box.y1 - 1)


def test_a_single_unlabelled_series_gets_no_empty_legend(figures, recwarn):
    data = report()
    data["multiple_choice"]["positions"] = [{"source": "gold_position", "position": p, "n_items": 1,
                                             "human_majority": None, "models": {}} for p in "AB"]
    plots.position_plot(data)
    assert not [w for w in recwarn if "No artists with labels" in str(w.message)]
    [fig] = figures.values()
    assert not fig.legends and not any(ax.get_legend() for ax in fig.axes)


# DialogBench's task names as its Chinese release gives them, and a Korean one (KoDialogBench).
CJK_TASKS = ["情感识别", "意图分类", "对话推理", "감정 인식"]


def cjk_report():
    data = report()
    for row in data["multiple_choice"]["models"]:
        row["task"] = CJK_TASKS[["dialogue_nli", "emotion_detection", "intent_classification"].index(row["task"])]
    return data


def test_chinese_and_korean_task_names_are_drawn_with_a_font_that_has_their_glyphs(figures, tmp_path):
    from matplotlib import font_manager, ft2font

    if not any("Noto Sans CJK" in font.name for font in font_manager.fontManager.ttflist):
        print("skipping: no CJK font installed (apt-get install fonts-noto-cjk)")
        pytest.skip("no CJK font installed (apt-get install fonts-noto-cjk)")
    assert plots.gap_plot(cjk_report()) is not None
    [fig] = figures.values()
    fig.savefig(tmp_path / "gap.png", dpi=100)
    assert (tmp_path / "gap.png").stat().st_size > 5_000
    texts = [t for t in fig.findobj(lambda a: hasattr(a, "get_text") and hasattr(a, "get_fontproperties"))
             if any(ord(ch) > 0x2e80 for ch in t.get_text())]
    assert {ch for t in texts for ch in t.get_text() if ord(ch) > 0x2e80} >= {ch for n in CJK_TASKS[:3] for ch in n}
    for text in texts:
        prop = text.get_fontproperties()
        # The fonts matplotlib draws this text with: each family of the list it has, in order (its fallback list).
        paths = font_manager.fontManager._find_fonts_by_props(prop)
        font = font_manager.get_font(paths)
        font.set_size(prop.get_size_in_points(), 72)
        drawn = {item.char: item for item in font._layout(text.get_text(), ft2font.LoadFlags.NO_HINTING)}
        for ch in {ch for ch in text.get_text() if ord(ch) > 0x2e80}:
            item = drawn[ch]
            # Glyph index 0 is the font's missing-glyph box (notdef).
            assert item.glyph_index != 0, f"{ch!r} in {text.get_text()!r} is drawn as the missing-glyph box"
            assert item.ft_object.get_char_index(ord(ch)) == item.glyph_index
            assert "CJK" in item.ft_object.family_name, item.ft_object.family_name
    # Latin text keeps its font.
    assert plots.RC["font.family"][0] == "DejaVu Sans"
