// The human-versus-model gap while labels arrive (the report's `sequential` section): per task, judge and model,
// the confidence sequence (valid at every look) beside the fixed-n interval (valid only at a number of labels set
// in advance), the verdict under the researcher's margin, and the sequence drawn against the labels so far.
import { el, fmt } from "./api.js";
import { fill, gettext, ngettext } from "./i18n.js";

const SVG = "http://www.w3.org/2000/svg";

function svg(tag, attrs = {}, ...children) {
  const node = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, value);
  node.append(...children);
  return node;
}

export function verdictText(row) {
  if (row.verdict === "separated") return gettext("Separated: the gap is not 0");
  if (row.verdict === "equivalent") return fill(gettext("Equivalent within ±%(margin)s"), { margin: row.margin });
  if (row.more_labels === null || row.more_labels === undefined) {
    return fill(gettext("Continue: no verdict in sight within the %(n)s items"), { n: row.N });
  }
  const how = row.next_labels === "more raters per item" ? gettext("more raters per item") : gettext("new items");
  const reaches = row.reaches === "equivalent" ? gettext("equivalent") : gettext("separated");
  return fill(ngettext("Continue: about %(n)s more label (%(how)s) until it may look %(reaches)s",
    "Continue: about %(n)s more labels (%(how)s) until it may look %(reaches)s", row.more_labels),
  { n: row.more_labels, how, reaches });
}

const lead = (row) => (row.weighted ? "cs_active" : "cs_anchored");
const interval = (low, high) => (low === null || low === undefined ? "—" : `${fmt(low)} – ${fmt(high)}`);

// The lead sequence's band against the labels (log scale), with 0 and the margin marked.
export function sequencePlot(row, width = 320, height = 110) {
  const points = (row.path || []).filter((p) => p.low !== null && p.high !== null);
  const label = fill(gettext("Confidence sequence of %(task)s, %(model)s, against the labels so far"),
    { task: row.task, model: row.model });
  if (points.length < 2) return el("p", { class: "muted" }, gettext("Too few labels to draw the sequence yet."));
  const pad = 28;
  const lo = Math.min(-row.margin, ...points.map((p) => Math.max(p.low, points.at(-1).low - 2 * (points.at(-1).high - points.at(-1).low))));
  const hi = Math.max(row.margin, ...points.map((p) => Math.min(p.high, points.at(-1).high + 2 * (points.at(-1).high - points.at(-1).low))));
  const x = (t) => pad + (width - pad - 6) * Math.log(t / points[0].t) / Math.log(points.at(-1).t / points[0].t || 2);
  const y = (v) => 6 + (height - 22) * (1 - (Math.min(Math.max(v, lo), hi) - lo) / (hi - lo || 1));
  const band = [...points.map((p) => `${x(p.t)},${y(p.high)}`), ...points.slice().reverse().map((p) => `${x(p.t)},${y(p.low)}`)];
  return svg("svg", { viewBox: `0 0 ${width} ${height}`, width, height, role: "img", "aria-label": label, class: "sequence-plot" },
    svg("title", {}, label),
    svg("rect", { x: pad, y: y(row.margin), width: width - pad - 6, height: Math.max(y(-row.margin) - y(row.margin), 0.5), fill: "#1a7f3722" }),
    svg("polygon", { points: band.join(" "), fill: "#0b5cad44", stroke: "#0b5cad" }),
    svg("polyline", { points: points.map((p) => `${x(p.t)},${y(p.estimate)}`).join(" "), fill: "none", stroke: "#1b1f24" }),
    svg("line", { x1: pad, x2: width - 6, y1: y(0), y2: y(0), stroke: "#b42318", "stroke-dasharray": "4 3" }),
    svg("text", { x: 2, y: y(0) + 4, "font-size": 10 }, "0"),
    svg("text", { x: pad, y: height - 2, "font-size": 10 }, String(points[0].t)),
    svg("text", { x: width - 6, y: height - 2, "font-size": 10, "text-anchor": "end" },
      fill(gettext("%(n)s labels"), { n: points.at(-1).t })));
}

export function showSequences(report, campaign, body, plots) {
  const rows = ((report.sequential || {}).gaps || []).filter((r) => String(r.campaign_id) === String(campaign));
  if (!rows.length) {
    body.replaceChildren(el("tr", {}, el("td", { colspan: 6, class: "muted" },
      gettext("No gap yet: it needs people's labels and two model runs on the same items."))));
    plots.replaceChildren();
    return;
  }
  body.replaceChildren(...rows.map((r) => el("tr", { dataset: { verdict: r.verdict } },
    el("td", {}, r.task),
    el("td", {}, fill(gettext("%(model)s (judge %(judge)s)"), { model: r.model, judge: r.judge })),
    el("td", {}, fill(gettext("%(n)s of %(total)s"), { n: r.n, total: r.N })),
    el("td", { class: "sequence" }, `${fmt(r[`${lead(r)}_estimate`])} [${interval(r[`${lead(r)}_low`], r[`${lead(r)}_high`])}]`),
    el("td", { class: "muted" }, `[${interval(r.fixed_anchored_low, r.fixed_anchored_high)}]`),
    el("td", { class: "verdict" }, el("strong", {}, verdictText(r))))));
  plots.replaceChildren(...rows.slice(0, 4).map((r) => el("figure", { class: "sequence-figure" }, sequencePlot(r),
    el("figcaption", { class: "muted" }, `${r.task} · ${fill(gettext("%(model)s (judge %(judge)s)"), { model: r.model, judge: r.judge })}`))));
}
