// Upload with a progress bar: the same form, sent with XMLHttpRequest so that its upload progress can be
// shown. A success answers where to go next; an error page replaces this one's content, with the file,
// line and field the importer named.
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
      text.textContent = `${(e.loaded / 1048576).toFixed(1)} of ${(e.total / 1048576).toFixed(1)} MB sent`;
    });
    xhr.upload.addEventListener("load", () => {
      bar.value = 100;
      bar.removeAttribute("value"); // indeterminate while the server imports
      text.textContent = "Uploaded; importing…";
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
        text.textContent = `The server answered ${xhr.status}; nothing was imported.`;
        button.disabled = false;
      }
    });
    xhr.addEventListener("error", () => {
      text.textContent = "The connection was lost; nothing was imported. Try again.";
      button.disabled = false;
    });
    xhr.open("POST", form.action);
    xhr.setRequestHeader("X-Requested-With", "XMLHttpRequest");
    xhr.send(new FormData(form));
  });
}

bind();
