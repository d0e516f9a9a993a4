// Upload with a progress bar: the same form, sent with XMLHttpRequest so that its upload progress can be
// shown. A success answers where to go next; an error page replaces this one's content, with the file,
// line and field the importer named.
import { fill, gettext } from "./i18n.js";

// Every string this file shows.
const TEXT = {
  sent: (sent, total) => fill(gettext("%(sent)s of %(total)s MB sent"), { sent, total }),
  importing: gettext("Uploaded; importing…"),
  answered: (status) => fill(gettext("The server answered %(status)s; nothing was imported."), { status }),
  lost: gettext("The connection was lost; nothing was imported. Try again."),
};

function bind() {
  const form = document.getElementById("upload-form");
  if (!form) return;
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const box = document.getElementById("upload-progress");
    const bar = document.getElementById("upload-bar");
    const text = document.getElementById("upload-text");
    const button = document.getElementById("upload-submit");
    const xhr = new XMLHttpRequest();
    box.hidden = false;
    button.disabled = true;
    xhr.upload.addEventListener("progress", (e) => {
      if (!e.lengthComputable) return;
      bar.value = Math.round((100 * e.loaded) / e.total);
      text.textContent = TEXT.sent((e.loaded / 1048576).toFixed(1), (e.total / 1048576).toFixed(1));
    });
    xhr.upload.addEventListener("load", () => {
      bar.value = 100;
      bar.removeAttribute("value"); // indeterminate while the server imports
      text.textContent = TEXT.importing;
    });
    xhr.addEventListener("load", () => {
      if (xhr.status === 200 && (xhr.getResponseHeader("Content-Type") || "").startsWith("application/json")) {
        window.location.assign(JSON.parse(xhr.responseText).location);
        return;
      }
      const page = new DOMParser().parseFromString(xhr.responseText, "text/html");
      const main = page.querySelector("main");
      if (main) {
        document.querySelector("main").replaceWith(main);
        bind();
      } else {
        text.textContent = TEXT.answered(xhr.status);
        button.disabled = false;
      }
    });
    xhr.addEventListener("error", () => {
      text.textContent = TEXT.lost;
      button.disabled = false;
    });
    xhr.open("POST", form.action);
    xhr.setRequestHeader("X-Requested-With", "XMLHttpRequest");
    xhr.send(new FormData(form));
  });
}

bind();
