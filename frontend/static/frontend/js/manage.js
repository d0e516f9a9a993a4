// New campaign: choosing another benchmark or preset fills the settings at once (the button does the same
// without scripts).
const form = document.getElementById("preset-form");
if (form) {
  for (const select of form.querySelectorAll("select")) {
    select.addEventListener("change", () => { if (form.elements.benchmark.value) form.requestSubmit(); });
  }
}
