// The pages' strings in the person's language: Django's JavaScriptCatalog (/jsi18n/, loaded by base.html before
// the modules) defines gettext, ngettext and pgettext; without it (a page that does not load it) the English text
// shows. `fill` puts named values in a translated text: fill(gettext("Item %(item)s"), { item }).
const catalog = globalThis;
export const gettext = (text) => (catalog.gettext ? catalog.gettext(text) : text);
export const ngettext = (one, many, n) => (catalog.ngettext ? catalog.ngettext(one, many, n) : n === 1 ? one : many);
export const pgettext = (context, text) => (catalog.pgettext ? catalog.pgettext(context, text) : text);
export const fill = (text, values) => text.replace(/%\((\w+)\)s/g, (_, name) => String(values[name]));
// A date and time (an ISO string from the API) as the page's language writes them (the page's lang, never the
// browser's: a Chinese page writes Chinese dates).
const pageLanguage = () => document.documentElement.lang || undefined;
export const dateTime = (iso) => new Date(iso).toLocaleString(pageLanguage());
export const timeOfDay = (iso) => new Date(iso).toLocaleTimeString(pageLanguage());
