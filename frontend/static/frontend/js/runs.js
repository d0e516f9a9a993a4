// Model runs: start one, watch its progress by polling while any run is active, cancel it.
import { api, ApiError, el, say } from "./api.js";

const $ = (id) => document.getElementById(id);
const notice = $("notice");
const ACTIVE = ["queued", "running"];
let timer = null;

function row(run) {
  const p = run.progress;
  const active = ACTIVE.includes(run.state);
  return el("tr", { dataset: { run: run.id, state: run.state } },
    el("td", {}, `#${run.id}`), el("td", {}, run.model), el("td", {}, run.benchmark), el("td", {}, run.mode),
    el("td", { class: `state ${run.state}` }, run.state, run.reason && run.state !== "finished" ? ` (${run.reason})` : ""),
    el("td", {}, el("progress", { max: p.items_total || 1, value: p.items_done, "aria-label": `Run ${run.id} progress` }),
      ` ${p.items_done}/${p.items_total} items`),
    el("td", {}, active ? el("button", { type: "button", class: "danger", onclick: () => cancel(run.id) }, "Cancel")
      : run.state === "finished" ? el("a", { href: `/reports/${run.benchmark}/` }, "Report") : ""));
}

async function refresh() {
  clearTimeout(timer);
  const runs = await api("/api/v1/runs/?limit=20");
  $("runs").replaceChildren(...runs.results.map(row));
  if (runs.results.some((r) => ACTIVE.includes(r.state))) timer = setTimeout(() => refresh().catch(retry), 1000);
}
const retry = () => { timer = setTimeout(() => refresh().catch(retry), 3000); };

async function cancel(id) {
  try {
    await api(`/api/v1/runs/${id}/cancel/`, { method: "POST", body: { reason: "cancelled from the runs page" } });
    say(notice, `Run ${id} cancelled.`, "ok");
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    say(notice, error.body.detail || error.message, "error");
  }
  await refresh();
}

$("start-run").addEventListener("submit", async (event) => {
  event.preventDefault();
  const limit = $("limit").value;
  const body = { model: $("model").value, benchmark: $("benchmark").value, mode: $("mode").value,
    limit: limit ? Number(limit) : null };
  try {
    const run = await api("/api/v1/runs/", { method: "POST", body });
    await refresh();
    say(notice, `Run ${run.id} started on ${run.progress.items_total} items.`, "ok");
    return;
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    const detail = error.body.detail || Object.entries(error.body).map(([k, v]) => `${k}: ${v}`).join("; ");
    say(notice, `Refused: ${detail}`, "error");
  }
  await refresh();
});
// Enabled only once the handler above is attached: an early click must not submit the bare form.
$("start").disabled = false;

refresh().catch(retry);
