// The researcher's view of a campaign: progress per batch from the annotation API, and per annotator
// and per question from the report (which computes agreement and its band).
import { api, el, fmt, pct, say } from "./api.js";
import { showFlags } from "./flags.js";
import { showSequences } from "./sequence.js";

const root = document.getElementById("dashboard");
const { campaign, benchmark } = root.dataset;
const $ = (id) => document.getElementById(id);
const notice = $("notice");
const cells = (...values) => values.map((v) => el("td", {}, v ?? "—"));

async function progress() {
  const batches = await api(`/api/v1/batches/?campaign=${campaign}&limit=500`);
  const rows = batches.results;
  const done = rows.reduce((s, b) => s + b.progress.done, 0);
  const total = rows.reduce((s, b) => s + b.progress.total, 0);
  const again = rows.filter((b) => b.round > 1).length;
  $("totals").replaceChildren(el("progress", { max: total || 1, value: done, "aria-label": "Campaign progress" }),
    ` ${done} of ${total} items done · ${rows.length} batches · re-annotation rate ${pct(rows.length ? again / rows.length : null)} (${again} batches sent back at least once)`);
  $("batches").replaceChildren(...rows.map((b) => el("tr", {},
    el("td", {}, root.dataset.batchLinks ? el("a", { href: `/batches/${b.id}/review/` }, `Batch ${b.number}`) : `Batch ${b.number}`),
    ...cells(b.state.replace("_", " "), b.round),
    el("td", {}, el("progress", { max: b.progress.total || 1, value: b.progress.done, "aria-label": `Batch ${b.number}` }), ` ${b.progress.done}/${b.progress.total}`),
    ...cells(b.progress.disagreements, b.progress.excluded))));
}

// The report is computed by a worker and stored: while it is computed the API answers its state and progress
// (reports.access.status_of); the tables say so and fill in when it is ready.
const REPORT_RETRY_MS = 2000;
const FAILED_RETRY_MS = 10000;
const LIVE_REFRESH_MS = 30000;
let live;

function reportNote(text) {
  $("annotators").replaceChildren(el("tr", {}, el("td", { colspan: 6, class: "muted report-pending" }, text)));
  $("agreement").replaceChildren(el("tr", {}, el("td", { colspan: 7, class: "muted report-pending" }, text)));
}

function pending(s) {
  if (s.state === "failed") return `The report could not be computed: ${s.error || "an error"}.`;
  const step = s.state === "queued" ? "waiting for a worker" : `${s.step || "computing"}, ${Math.round(100 * (s.progress || 0))}%`;
  return `The report's figures are being computed (${step}); they fill in here when ready.`;
}

// The researcher's margin for "equivalent" (a report option): a changed one asks for the report under it.
const margin = $("margin");
const marginQuery = () => (margin && margin.checkValidity() && margin.value !== "" ? `&equivalence_margin=${encodeURIComponent(margin.value)}` : "");
margin?.addEventListener("change", () => { if (margin.checkValidity()) fromReport(); });

async function fromReport() {
  if (!root.dataset.report) {
    $("annotators").replaceChildren(el("tr", {}, el("td", { colspan: 6 }, "Figures per annotator come with the report (researchers and staff).")));
    return;
  }
  let report;
  try {
    report = await api(`/api/v1/reports/?benchmark=${encodeURIComponent(benchmark)}&campaign=${campaign}&format=json${marginQuery()}`);
  } catch (error) {
    reportNote(`${error.body?.detail || "Could not load the figures."} Trying again shortly.`);
    setTimeout(fromReport, FAILED_RETRY_MS);
    return;
  }
  if (report.code === "report_computing") {
    reportNote(pending(report));
    setTimeout(fromReport, report.state === "failed" ? FAILED_RETRY_MS : REPORT_RETRY_MS);
    return;
  }
  const mine = (rows) => rows.filter((r) => String(r.campaign_id) === campaign);
  showSequences(report, campaign, $("sequences"), $("sequence-plots"));
  // Live: labels keep arriving, and the stored report is recomputed when they do; look again in a while.
  clearTimeout(live);
  live = setTimeout(fromReport, LIVE_REFRESH_MS);
  $("annotators").replaceChildren(...mine(report.annotators).map((a) => el("tr", {},
    ...cells(a.annotator, a.n_annotations, a.median_reading_seconds === null ? null : `${fmt(a.median_reading_seconds, 1)} s`,
      pct(a.accuracy_vs_qc), pct(a.peer_agreement), a.rejected_rounds))));
  $("agreement").replaceChildren(...mine(report.agreement.campaigns).map((r) => el("tr", {},
    ...cells(r.task, r.primary ? `${r.question} (primary)` : r.question, r.n_items, fmt(r.fleiss_kappa), r.band,
      fmt(r.krippendorff_alpha), pct(r.percent_agreement)))));
}

Promise.all([progress(), fromReport(),
  showFlags(campaign, $("flags-card"), $("flags"))]).catch((error) => say(notice, error.body?.detail || "Could not load the figures.", "error"));
