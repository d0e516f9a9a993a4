// The campaign's flags from annotators (item, batch and round, who, comment), for trainers, experts and
// managers; the card stays hidden for roles that may not read them. The newest page first; older flags on asking.
import { api, ApiError, el } from "./api.js";
import { dateTime, fill, gettext } from "./i18n.js";

const PAGE = 50;

function row(f) {
  return el("tr", {}, el("td", {}, f.external_id), el("td", {}, `${f.batch} / ${f.round}`), el("td", {}, f.author || "—"),
    el("td", { class: "prewrap" }, f.comment), el("td", {}, dateTime(f.created_at)));
}

export async function showFlags(campaignId, card, body) {
  let page;
  try {
    page = await api(`/api/v1/campaigns/${campaignId}/flags/?limit=${PAGE}`);
  } catch (error) {
    if (error instanceof ApiError && error.status === 403) { card.hidden = true; return; }
    throw error;
  }
  card.hidden = false;
  if (!page.results.length) {
    body.replaceChildren(el("tr", {}, el("td", { colspan: 5, class: "muted" }, gettext("No flags."))));
    return;
  }
  body.replaceChildren(...page.results.map(row));
  let next = page.next;
  const shown = () => body.children.length;
  const more = el("button", { type: "button", class: "link", onclick: async () => {
    const older = await api(next);
    body.append(...older.results.map(row));
    next = older.next;
    status();
  } });
  const footer = el("p", { class: "muted flags-more" });
  function status() {
    more.textContent = gettext("Show older flags");
    footer.replaceChildren(fill(gettext("%(shown)s of %(count)s flags shown"), { shown: shown(), count: page.count }), next ? more : "");
  }
  card.querySelector(".flags-more")?.remove();
  if (page.count > page.results.length) {  // more than one page: say how many, offer the older ones
    card.append(footer);
    status();
  }
}
