// The annotator workspace: lease an item, show it, take the answers, submit, fetch the next one.
// A submission keeps one client_submission_id until the server has answered it, so retries after a
// lost connection can never make a second label.
import { api, ApiError, el, isNetworkError, say } from "./api.js";
import { renderDialogue, renderFields } from "./dialogue.js";
import { buildForm } from "./form.js";

const page = document.getElementById("workspace");
const campaignId = page.dataset.campaign;
const $ = (id) => document.getElementById(id);
const notice = $("notice");
const guidelines = $("guidelines");
let lease = null;
let form = null;
let sending = false;
let countdown = null;

const idKey = (assignmentId) => `hb-submission-${assignmentId}`;
function submissionId(assignmentId) {
  // Kept in sessionStorage so that a reload in the middle of a retry still reuses it.
  let id = sessionStorage.getItem(idKey(assignmentId));
  if (!id) {
    id = crypto.randomUUID();
    sessionStorage.setItem(idKey(assignmentId), id);
  }
  return id;
}

function startCountdown(seconds) {
  clearInterval(countdown);
  const until = Date.now() + seconds * 1000;
  const box = $("countdown");
  const tick = () => {
    const left = Math.max(0, Math.ceil((until - Date.now()) / 1000));
    box.textContent = left ? `Minimum reading time: ${left} s left` : "Minimum reading time reached";
    box.classList.toggle("waiting", left > 0);
    if (!left) clearInterval(countdown);
  };
  tick();
  countdown = setInterval(tick, 250);
}

function showProgress(progress) {
  const bar = $("progress");
  bar.max = progress.total || 1;
  bar.value = progress.done;
  $("progress-text").textContent = `Batch ${progress.batch}, round ${progress.round}: ${progress.done} of ` +
    `${progress.total} items done` + (progress.mine !== undefined ? ` · ${progress.mine} labelled by you` : "");
}

function show(data) {
  lease = data;
  const { item, task } = data;
  $("task-name").textContent = task.name;
  $("instructions").textContent = task.instructions || "";
  $("item-id").textContent = `Item ${item.external_id}`;
  $("dialogue").replaceChildren(renderDialogue(item.dialogue));
  $("fields").replaceChildren(renderFields(item.fields, item.meta));
  $("guidelines-text").textContent = data.guidelines.markdown || "No guidelines for this campaign.";
  $("guidelines-version").textContent = `Version ${data.guidelines.version}`;
  form = buildForm(data.form, item, item.dialogue.length);
  $("answer-form").replaceChildren(form.element);
  $("item").hidden = false;
  $("done").hidden = true;
  showProgress(data.progress);
  startCountdown(data.seconds_until_submit_allowed);
  history.replaceState(null, "", `/assignments/${data.id}/`);
  say(notice, "");
  form.focusFirst();
}

function noWork(detail) {
  lease = null;
  clearInterval(countdown);
  $("item").hidden = true;
  $("done").hidden = false;
  $("done-text").textContent = detail;
  history.replaceState(null, "", `/campaigns/${campaignId}/annotate/`);
  $("done").focus();
}

async function next() {
  const data = await api(`/api/v1/campaigns/${campaignId}/next/`, { method: "POST" });
  if (data.assignment) show(data.assignment);
  else noWork(data.detail);
}

async function submit() {
  if (!lease || sending) return;  // one submission at a time: Enter held down sends once
  sending = true;
  const assignmentId = lease.id;
  const body = { client_submission_id: submissionId(assignmentId), answers: form.answers() };
  form.showErrors();
  $("submit").disabled = true;
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        say(notice, attempt ? `Connection lost; retrying (attempt ${attempt + 1})…` : "Saving…", attempt ? "warn" : "info");
        const result = await api(`/api/v1/assignments/${assignmentId}/submit/`, { method: "POST", body });
        sessionStorage.removeItem(idKey(assignmentId));
        showProgress(result.progress);
        await next();
        say(notice, result.replayed ? "Saved (your earlier attempt had arrived)." : "Saved.", "ok");
        return;
      } catch (error) {
        if (!isNetworkError(error)) throw error;
        // Same id, same answers: the server answers a repeat with the first result.
        await new Promise((resolve) => setTimeout(resolve, Math.min(8000, 500 * 2 ** attempt)));
      }
    }
  } catch (error) {
    refused(error);
  } finally {
    sending = false;
    $("submit").disabled = false;
  }
}

function refused(error) {
  if (!(error instanceof ApiError)) throw error;
  const body = error.body;
  if (error.code === "too_early") {
    say(notice, `Too early: ${body.detail} (${body.seconds_left} s left)`, "error");
    startCountdown(body.seconds_left);
  } else if (error.code === "invalid_answers") {
    form.showErrors(body.errors);
    say(notice, body.detail, "error");
  } else if (["already_submitted", "lease_closed", "lease_expired"].includes(error.code)) {
    // Showing the next item clears the notice: say it once the next item is there.
    next().then(() => say(notice, `${body.detail} Here is the next item.`, "warn"));
  } else {
    say(notice, body.detail || `Refused (${error.status}).`, "error");
  }
}

function toggleGuidelines() {
  if (guidelines.open) guidelines.close();
  else guidelines.showModal();
}

document.addEventListener("keydown", (event) => {
  if (event.ctrlKey || event.metaKey || event.altKey) {
    if (event.key === "Enter" && event.target.tagName === "TEXTAREA") { event.preventDefault(); submit(); }
    return;
  }
  if (guidelines.open) return;  // the dialog handles Escape itself
  const typing = event.target.tagName === "TEXTAREA" || (event.target.tagName === "INPUT" && !["radio", "checkbox"].includes(event.target.type));
  if (event.key === "Enter" && event.target.tagName !== "TEXTAREA" && event.target.tagName !== "BUTTON" && event.target.tagName !== "A") {
    event.preventDefault();
    submit();
  } else if (!typing && (event.key === "?" || event.key === "g")) {
    event.preventDefault();
    toggleGuidelines();
  } else if (!typing && form && !$("item").hidden && form.handleKey(event)) {
    event.preventDefault();
  }
});

$("submit").addEventListener("click", submit);
$("open-guidelines").addEventListener("click", toggleGuidelines);
$("close-guidelines").addEventListener("click", () => guidelines.close());
$("answer-form").addEventListener("submit", (event) => { event.preventDefault(); submit(); });

(async () => {
  try {
    const initial = page.dataset.assignment;
    const resumed = initial ? await api(`/api/v1/assignments/${initial}/`) : null;
    if (resumed && resumed.status === "leased") show(resumed);
    else await next();
  } catch (error) {
    say(notice, error.body?.detail || "Could not load an item; reload the page to try again.", "error");
  }
})();
