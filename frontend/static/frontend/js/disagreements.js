// The expert's queue: each open disagreement with every annotator's whole answer (by the options' labels,
// with their reasons and comments; no names where the panel votes blind), and the decision. A decision
// is sent once: the button stays disabled until the server has answered.
import { api, ApiError, config, el, say } from "./api.js";
import { renderItem } from "./dialogue.js";
import { showFlags } from "./flags.js";
import { choicesOf, describeAnswers } from "./form.js";

const root = document.getElementById("queue");
const campaignId = root.dataset.campaign;
const canResolve = Boolean(root.dataset.resolve);
const blind = Boolean(root.dataset.blind);
const forms = config("task-forms");
const notice = document.getElementById("notice");
const deciding = new Set();
const labelOf = (choices, value) => choices.find((c) => JSON.stringify(c.value) === JSON.stringify(value))?.label ?? JSON.stringify(value);

function answerList(form, item, given) {
  // A gold panel's voters get no one's answers from the server: they decide without seeing the votes.
  if (blind && !given.answers.length) return el("p", { class: "muted blind" }, "The panel votes blind: the answers are not shown.");
  return el("ul", { class: "labels" }, given.answers.map((a) => {
    const parts = describeAnswers(form, item, a.answers);
    const main = parts.find((p) => p.primary);
    const rest = parts.filter((p) => !p.primary);
    return el("li", {}, el("span", { class: "who" }, a.annotator), ": ", el("strong", {}, main ? main.text : "—"),
      rest.length ? el("ul", { class: "answer-details" }, rest.map((p) => el("li", {}, `${p.label}: `, el("span", { class: "prewrap" }, p.text)))) : null);
  }));
}

function flagList(flags) {
  if (!flags.length) return null;
  return [el("h3", {}, "Comments from annotators"), el("ul", { class: "flags" }, flags.map((f) =>
    el("li", {}, el("span", { class: "who" }, f.author || "An annotator"), `, round ${f.round}: `, el("span", { class: "prewrap" }, f.comment))))];
}

async function entry(d) {
  const [item, given] = await Promise.all([api(`/api/v1/items/${d.item}/`), api(`/api/v1/disagreements/${d.id}/answers/`)]);
  const form = forms[item.task];
  const primary = form.questions.find((q) => q.key === form.primary);
  const choices = choicesOf(primary, item);
  const name = `decide-${d.id}`;
  const reason = el("textarea", { id: `${name}-reason`, rows: 2 });
  const decision = canResolve && el("form", { class: "decision", onsubmit: (e) => { e.preventDefault(); resolve(d, e.target, choices); } },
    el("fieldset", { class: "choices" }, el("legend", {}, "Decision"), choices.map((c, i) =>
      el("label", { for: `${name}-${i}`, class: `choice${c.excludes ? " excludes" : ""}` },
        el("input", { type: "radio", name, id: `${name}-${i}`, value: i, required: true }), c.label))),
    el("label", { for: `${name}-reason` }, "Reason"), reason,
    el("button", { type: "submit", class: "primary" }, "Decide"));
  return el("li", { class: "card disagreement", dataset: { id: d.id } },
    el("h2", {}, `Item ${d.external_id}`, el("small", { class: "muted" }, ` batch ${d.batch}, round ${d.round}, guidelines v${d.guideline_version}`)),
    renderItem(item), el("h3", {}, "Answers"), answerList(form, item, given), flagList(given.flags), decision);
}

async function resolve(d, formNode, choices) {
  if (deciding.has(d.id)) return;  // a second click sends nothing
  const picked = formNode.querySelector("input[type=radio]:checked");
  if (!picked) { say(notice, "Choose a decision first.", "error"); return; }
  const button = formNode.querySelector("button[type=submit]");
  deciding.add(d.id);
  button.disabled = true;
  try {
    await api(`/api/v1/disagreements/${d.id}/resolve/`, { method: "POST",
      body: { value: choices[picked.value].value, reason: formNode.querySelector("textarea").value } });
    await load();
    say(notice, `Item ${d.external_id} decided: ${choices[picked.value].label}.`, "ok");
  } catch (error) {
    button.disabled = false;
    if (!(error instanceof ApiError)) throw error;
    say(notice, error.body.detail, "error");
  } finally {
    deciding.delete(d.id);
  }
}

async function settledRows(done) {
  // Decisions by their labels: the item's form gives the option labels.
  return Promise.all(done.results.map(async (d) => {
    let shown = JSON.stringify(d.resolved_value);
    try {
      const item = await api(`/api/v1/items/${d.item}/`);
      const form = forms[item.task];
      shown = labelOf(choicesOf(form.questions.find((q) => q.key === form.primary), item), d.resolved_value);
    } catch { /* the raw value is still right */ }
    return el("tr", {}, el("td", {}, d.external_id), el("td", {}, shown), el("td", {}, d.resolved_by || d.method), el("td", {}, d.reason));
  }));
}

async function load() {
  const open = await api(`/api/v1/disagreements/?campaign=${campaignId}&status=open&limit=50`);
  const list = document.getElementById("disagreements");
  list.replaceChildren(...await Promise.all(open.results.map(entry)));
  if (!open.results.length) list.replaceChildren(el("li", { class: "card" }, "No open disagreements."));
  const done = await api(`/api/v1/disagreements/?campaign=${campaignId}&status=resolved&limit=50`);
  document.getElementById("settled").replaceChildren(...await settledRows(done));
  await showFlags(campaignId, document.getElementById("flags-card"), document.getElementById("flags"));
}

load().catch((error) => say(notice, error.body?.detail || "Could not load the queue.", "error"));
