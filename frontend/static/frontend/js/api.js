// The one way pages talk to the server: JSON over fetch, session cookie, CSRF header on writes.
const csrf = document.body.dataset.csrf;

export class ApiError extends Error {
  constructor(status, body) {
    super(body.detail || `HTTP ${status}`);
    this.status = status;
    this.code = body.code || "error";
    this.body = body;
  }
}

// A key pressed while an input method (IME) composition is open belongs to the composition (Chinese or Korean
// being typed): Enter then finishes the composition and no key is a shortcut. keyCode 229 covers the browsers
// that send the composition's closing Enter after compositionend (isComposing already false).
export const composing = (event) => event.isComposing || event.keyCode === 229;

// A TypeError from fetch means no answer at all (offline, server away): callers may retry.
export const isNetworkError = (error) => !(error instanceof ApiError) || error.status >= 500;

export async function api(path, { method = "GET", body } = {}) {
  const headers = { Accept: "application/json" };
  if (method !== "GET") headers["X-CSRFToken"] = csrf;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const response = await fetch(path, {
    method, headers, credentials: "same-origin", body: body === undefined ? undefined : JSON.stringify(body),
  });
  let data = {};
  try { data = await response.json(); } catch { /* empty or non-JSON body */ }
  if (!response.ok) throw new ApiError(response.status, data);
  return data;
}

// Labels typed faster than the server answers: each is bound to its item when it is given and they are sent
// one after another in that order. `send(request)` queues a function making one request and returns its
// result; `send.idle()` says whether nothing is queued or on its way.
export function inOrder() {
  let last = Promise.resolve();
  let queued = 0;
  const send = (request) => {
    queued += 1;
    const result = last.then(request).finally(() => { queued -= 1; });
    last = result.catch(() => {});
    return result;
  };
  send.idle = () => queued === 0;
  return send;
}

// Every row of a paged API list (limit/offset), following its `next` links: for lists a page shows whole, such as
// a batch's history.
export async function apiAll(path) {
  const rows = [];
  for (let url = path; url; ) {
    const page = await api(url);
    rows.push(...page.results);
    url = page.next;
  }
  return rows;
}

// Builds DOM nodes; string children become text nodes, so data is never parsed as HTML. Nested arrays of
// children are flattened at any depth.
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "dataset") Object.assign(node.dataset, value);
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (key in node && typeof value !== "string") node[key] = value;
    else node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

export function say(region, text, kind = "info") {
  region.textContent = text;
  region.className = `notice ${kind}`;
  region.hidden = !text;
}

export const pct = (x) => (x === null || x === undefined ? "—" : `${(100 * x).toFixed(1)}%`);
export const fmt = (x, digits = 3) => (x === null || x === undefined ? "—" : Number(x).toFixed(digits));
export const config = (id) => JSON.parse(document.getElementById(id).textContent);
