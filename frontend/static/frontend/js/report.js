// The report is a document of its own (its styles, no scripts) in a frame; the frame takes the
// report's full height, so the page's own scroll moves through it rather than a box inside the page.
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
  frame.dataset.fitted = "1";
  frame.dataset.width = String(window.innerWidth);
}

frame.addEventListener("load", () => {
  fit();
  if (frame.contentDocument && frame.contentDocument.body) new ResizeObserver(fit).observe(frame.contentDocument.body);
});
window.addEventListener("resize", fit);
if (frame.contentDocument && frame.contentDocument.readyState === "complete") fit();
