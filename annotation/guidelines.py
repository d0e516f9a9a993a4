"""Guidelines are written in Markdown and shown as HTML: raw HTML in the source is escaped, never passed
through, and links to javascript:, vbscript:, file: or data: addresses are not made (markdown-it's own
link check)."""
from markdown_it import MarkdownIt

_RENDERER = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False}).enable("table")


def render_guidelines(source):
    """HTML for a guideline text; safe to insert into a page."""
    return _RENDERER.render(source or "")
