// The report is a document of its own (its styles, no scripts) in a frame; the frame takes the
// report's full height, so the page's own scroll moves through it rather than a box inside the page.
import { fill, gettext, timeOfDay } from "./i18n.js";

const frame = document.getElementById("report-frame");

function fit() {
  const doc = frame.contentDocument;
  if (!doc || !doc.body) return;
  // The body's box plus its margins: the document's scrollHeight never shrinks below the frame.
  const style = doc.defaultView.getComputedStyle(doc.body);
  const scrollbar = doc.defaultView.innerHeight - doc.documentElement.clientHeight; // a wide table's, if any
  const height = Math.ceil(doc.body.getBoundingClientRect().height + parseFloat(style.marginTop)
    + parseFloat(style.marginBottom)) + scrollbar;
  frame.style.height = `${height}px`;
  // Content that reaches past the body's box (a margin or border that does not collapse into it)
  // still overflows by a few pixels: grow the frame by that much rather than show a scroll box.
  const overflow = doc.documentElement.scrollHeight - doc.documentElement.clientHeight;
  if (overflow > 0) frame.style.height = `${height + overflow}px`;
  frame.dataset.fitted = "1";
  frame.dataset.width = String(window.innerWidth);
}

frame.addEventListener("load", () => {
  fit();
  if (frame.contentDocument && frame.contentDocument.body) new ResizeObserver(fit).observe(frame.contentDocument.body);
});
window.addEventListener("resize", fit);
if (frame.contentDocument && frame.contentDocument.readyState === "complete") fit();

// The report is computed by a worker and stored: while one is computed, or after the data changed
// under the one shown (stale), the status card says so and follows the computation; a fresh report
// replaces the frame's document when it is ready.
const status = document.getElementById("report-status");
const statusText = document.getElementById("report-status-text");
const bar = document.getElementById("report-progress");
const FAST_MS = 1000;
const SLOW_MS = 10000;

function describe(s) {
  const done = `${Math.round(100 * s.progress)}%`;
  if (s.state === "failed") {
    return fill(gettext("The report could not be computed: %(error)s. Reload the page to try again."), { error: s.error || gettext("an error") });
  }
  const step = s.state === "queued" ? gettext("waiting for a worker") : `${s.step_text}, ${done}`;
  if (s.stale && s.has_report) {
    const when = s.stale_since ? timeOfDay(s.stale_since) : gettext("recently");
    return fill(gettext("Stale: the data changed at %(when)s, after this report was computed. The figures below are the previous report's; a new one is being computed (%(step)s)."), { when, step });
  }
  return fill(gettext("This report is being computed (%(step)s)."), { step });
}

// Downloads: a file only once the report is fresh. Until then the links are marked disabled and a click on one
// says why instead of fetching (the server would answer a page saying the same, never a file).
const downloads = document.getElementById("downloads");
const downloadsNote = document.getElementById("downloads-note");

function offerDownloads(ready, s) {
  downloads.dataset.ready = ready ? "1" : "0";
  for (const link of downloads.querySelectorAll("a")) {
    if (ready) link.removeAttribute("aria-disabled");
    else link.setAttribute("aria-disabled", "true");
  }
  downloadsNote.hidden = ready;
  if (!ready && s) {
    downloadsNote.textContent = s.state === "failed" ? gettext("No downloads: the report could not be computed.")
      : s.state === "queued" ? gettext("Offered once the report is ready (waiting for a worker).")
      : fill(gettext("Offered once the report is ready (%(share)s computed)."), { share: `${Math.round(100 * s.progress)}%` });
  }
}

downloads.addEventListener("click", (event) => {
  const link = event.target.closest("a");
  if (link && link.getAttribute("aria-disabled") === "true") {
    event.preventDefault();
    downloadsNote.hidden = false;
    downloadsNote.classList.add("warn");
  }
});

async function poll() {
  let next = SLOW_MS;
  try {
    const answer = await fetch(status.dataset.url, { headers: { Accept: "application/json" }, credentials: "same-origin" });
    if (answer.ok) {
      const s = await answer.json();
      const fresh = s.state === "ready" && !s.stale;
      status.dataset.state = s.state;
      status.dataset.stale = s.stale ? "1" : "0";
      statusText.textContent = describe(s);
      bar.value = s.progress;
      if (fresh && !status.hidden) {
        frame.hidden = false;
        frame.src = frame.dataset.src; // the new report
      }
      status.hidden = fresh;
      offerDownloads(fresh, s);
      if (!fresh && s.state !== "failed") next = FAST_MS;
    }
  } catch (error) {
    next = SLOW_MS; // the server is away: try again later
  }
  setTimeout(poll, next);
}
poll();
