// The expert's queue: each open disagreement with every annotator's answer, and the decision.
import { api, ApiError, config, el, say } from "./api.js";
import { renderDialogue, renderFields } from "./dialogue.js";
import { choicesOf } from "./form.js";

const root = document.getElementById("queue");
const campaignId = root.dataset.campaign;
const canResolve = Boolean(root.dataset.resolve);
const blind = Boolean(root.dataset.blind);
const forms = config("task-forms");
const notice = document.getElementById("notice");
const show = (value) => JSON.stringify(value);

async function entry(d) {
  const item = await api(`/api/v1/items/${d.item}/`);
  const form = forms[item.task];
  const primary = form.questions.find((q) => q.key === form.primary);
  const choices = choicesOf(primary, item);
  const name = `decide-${d.id}`;
  // Blind voters get no labels from the API: they decide without seeing who answered what.
  const labels = blind && !d.labels.length ? el("p", { class: "muted" }, "The panel votes blind: the answers are not shown.")
    : el("ul", { class: "labels" }, d.labels.map((l, i) =>
      el("li", {}, el("span", { class: "who" }, blind ? `Rater ${i + 1}` : String(l.annotator)), ": ", el("strong", {}, show(l.value)))));
  const reason = el("textarea", { id: `${name}-reason`, rows: 2 });
  const decision = canResolve && el("form", { class: "decision", onsubmit: (e) => { e.preventDefault(); resolve(d, e.target, choices); } },
    el("fieldset", { class: "choices" }, el("legend", {}, "Decision"), choices.map((c, i) =>
      el("label", { for: `${name}-${i}`, class: "choice" }, el("input", { type: "radio", name, id: `${name}-${i}`, value: i, required: true }), c.label))),
    el("label", { for: `${name}-reason` }, "Reason"), reason,
    el("button", { type: "submit", class: "primary" }, "Decide"));
  return el("li", { class: "card disagreement", dataset: { id: d.id } },
    el("h2", {}, `Item ${d.external_id}`, el("small", { class: "muted" }, ` batch ${d.batch}, round ${d.round}, guidelines v${d.guideline_version}`)),
    renderDialogue(item.dialogue), renderFields(item.fields), el("h3", {}, "Answers"), labels, decision);
}

async function resolve(d, formNode, choices) {
  const picked = formNode.querySelector("input[type=radio]:checked");
  if (!picked) { say(notice, "Choose a decision first.", "error"); return; }
  try {
    await api(`/api/v1/disagreements/${d.id}/resolve/`, { method: "POST",
      body: { value: choices[picked.value].value, reason: formNode.querySelector("textarea").value } });
    await load();
    say(notice, `Item ${d.external_id} decided: ${choices[picked.value].label}.`, "ok");
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    say(notice, error.body.detail, "error");
  }
}

async function load() {
  const open = await api(`/api/v1/disagreements/?campaign=${campaignId}&status=open&limit=50`);
  const list = document.getElementById("disagreements");
  list.replaceChildren(...await Promise.all(open.results.map(entry)));
  if (!open.results.length) list.replaceChildren(el("li", { class: "card" }, "No open disagreements."));
  const done = await api(`/api/v1/disagreements/?campaign=${campaignId}&status=resolved&limit=50`);
  document.getElementById("settled").replaceChildren(...done.results.map((d) => el("tr", {},
    el("td", {}, d.external_id), el("td", {}, show(d.resolved_value)), el("td", {}, d.resolved_by || d.method), el("td", {}, d.reason))));
}

load().catch((error) => say(notice, error.body?.detail || "Could not load the queue.", "error"));
