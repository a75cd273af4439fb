"""Sanitising what a student wrote before anyone else's browser shows it.

The feedback HTML, the formgrader's submission page and the autograded
notebook an instructor opens are all built from the notebook in
``autograded/``.  :func:`sanitize_notebook` cleans that notebook itself
(wired in as :class:`SanitizeStudentContent`, the last autograde
preprocessor, and again before feedback), so every page made from it is
clean, whatever renders it.  The HTML cleaner is bleach (the sanitiser
nbconvert itself uses; html5lib's parser, the HTML5 parsing algorithm
browsers follow) with the allow-list below; :func:`clean_html` is also the
``clean_html`` filter of nbconvert's ``HTMLExporter`` with ``sanitize_html``
on, a second layer for pages rendered from notebooks autograded before.

Kept: headings, paragraphs, lists, tables, code, emphasis, block quotes,
links to ``http``/``https``/``mailto``/``#``, math (``$...$``, for MathJax),
images held *in* the page (``data:image/png|jpeg|gif``, attachments),
PNG/JPEG figures, SVG figures without active content, text, errors.

Removed: ``<script>``, event handlers (``onerror=``, ``onload=``...), ``javascript:``
and other URLs of unlisted schemes, anything that loads from elsewhere
(``<img src=http...>``, ``<iframe>``, ``<object>``, ``<embed>``, ``<link>``,
``<meta http-equiv=refresh>``, ``<base>``, ``<form>``, ``<style>``, ``style="...url()"``),
JavaScript and widget outputs, SVG scripts, ``foreignObject`` and outside
references, TeX macros that make links or HTML (``\\href``, ``\\class``...), output
metadata other than an image's numeric width and height.

Each cleaned cell says so in its metadata (``interconnect.sanitised``: what
was removed) and :func:`sanitize_notebook` returns the list.

:func:`strip_hidden_from_outputs` (feedback, :class:`StripHiddenFromOutputs`)
cuts every line of the hidden tests out of the outputs (tracebacks, messages,
printed text), whatever the judge wrote into them.

>>> clean_html('<b onclick="x()">bold</b><script>alert(1)</script>')
'<b>bold</b>'
>>> clean_html('<a href="javascript:alert(1)">x</a> <img src="http://evil.example/a.png">')
'<a>x</a> <img>'
"""

from __future__ import annotations

import base64
import binascii
import re
import xml.etree.ElementTree as ET

import bleach
from bleach.css_sanitizer import CSSSanitizer
from nbconvert.preprocessors import Preprocessor
from traitlets import Bool

__all__ = ["clean_html", "sanitize_notebook", "sanitize_markdown", "sanitize_svg",
           "strip_hidden_from_outputs", "hidden_lines", "SanitizeStudentContent", "SanitizeFeedback",
           "StripHiddenFromOutputs", "ALLOWED_TAGS", "KEPT_OUTPUTS"]

ALLOWED_TAGS = frozenset({
    "a", "abbr", "b", "blockquote", "br", "caption", "cite", "code", "col", "colgroup", "dd",
    "del", "details", "div", "dl", "dt", "em", "figcaption", "figure", "h1", "h2", "h3", "h4",
    "h5", "h6", "hr", "i", "img", "ins", "kbd", "li", "mark", "ol", "p", "pre", "q", "s",
    "samp", "small", "span", "strong", "sub", "summary", "sup", "table", "tbody", "td",
    "tfoot", "th", "thead", "tr", "u", "ul", "var"})
_COMMON_ATTRS = ["class", "title", "lang", "dir", "align"]
_ATTRS = {"a": ["href", "title"], "img": ["src", "alt", "width", "height"],
          "td": ["colspan", "rowspan"], "th": ["colspan", "rowspan", "scope"],
          "ol": ["start", "type"], "col": ["span"], "colgroup": ["span"], "abbr": ["title"]}
_CSS = CSSSanitizer(allowed_css_properties=[
    "color", "background-color", "font-weight", "font-style", "font-size", "text-align",
    "text-decoration", "vertical-align", "white-space", "width", "height", "max-width",
    "padding", "margin", "border", "border-collapse"])
_RASTER_DATA = re.compile(r"^data:image/(?:png|jpeg|gif);base64,[A-Za-z0-9+/=\s]*$", re.I)
#: An image shown from inside the page (an SVG shown as an image runs no script and loads nothing).
_IMG_DATA = re.compile(r"^data:image/(?:png|jpeg|gif|svg\+xml);base64,[A-Za-z0-9+/=\s]*$", re.I)
_LINK_OK = re.compile(r"^(?:https?://|mailto:|#)", re.I)
#: Markup the grader cleans: at most this much per output or cell, and per notebook
#: (bleach is pure Python, some 100 KB/s: a page of figures and tables is far below;
#: more is not shown, with a note, so a notebook cannot spend the grader's CPU).
MAX_MARKUP_BYTES = 64 * 1024
MAX_MARKUP_BYTES_PER_NOTEBOOK = 256 * 1024
#: Output types shown as they are (no markup in them).
KEPT_OUTPUTS = frozenset({"text/plain", "image/png", "image/jpeg", "image/gif", "application/json"})
_IMAGE_MIMES = ("image/png", "image/jpeg", "image/gif")


def _attr_ok(tag: str, name: str, value: str) -> bool:
    if name in _COMMON_ATTRS:
        return True
    if name == "style":
        return "url(" not in value.lower() and "expression" not in value.lower() \
            and "\\" not in value
    if name not in _ATTRS.get(tag, ()):
        return False
    if tag == "img" and name == "src":
        return bool(_IMG_DATA.match(value))
    if tag == "a" and name == "href":
        return bool(_LINK_OK.match(value.strip()))
    if name in ("width", "height", "colspan", "rowspan", "start", "span"):
        return bool(re.fullmatch(r"\d{1,5}%?", value.strip()))
    return True


_CLEANER_STYLED = bleach.Cleaner(tags=ALLOWED_TAGS, attributes=_attr_ok,
                                 protocols=["http", "https", "mailto", "data", "attachment"],
                                 strip=True, strip_comments=True, css_sanitizer=_CSS)
#: Elements removed with everything inside them (their text is code or markup, not prose).
_DROP_WHOLE = ("script", "style", "template", "noscript", "iframe", "object", "embed", "textarea",
               "select", "svg", "math", "xmp", "noembed", "noframes", "title")
_OPEN_DROP = re.compile(r"<(" + "|".join(_DROP_WHOLE) + r")\b", re.I)
#: At most this many tags in one output or cell (html5lib's cost grows fast with nesting).
MAX_TAGS = 3000


def _drop_whole(html: str) -> str:
    """``html`` without the :data:`_DROP_WHOLE` elements and their content, in one pass
    (an element left open takes the rest with it).  Only a first cut: bleach decides."""
    low, out, i = html.lower(), [], 0
    while (m := _OPEN_DROP.search(html, i)) is not None:
        out.append(html[i:m.start()])
        end = low.find(f"</{m.group(1).lower()}", m.end())
        if end < 0:
            return "".join(out)
        close = low.find(">", end)
        i = len(html) if close < 0 else close + 1
    out.append(html[i:])
    return "".join(out)
#: TeX macros that make links, classes, styles or load extensions in MathJax.
_TEX_ACTIVE = re.compile(r"\\(href|url|class|cssId|style|require|unicode|mmlToken|data|"
                         r"html[A-Za-z]*|bbox|toggle)(?![A-Za-z])")


def clean_html(html) -> str:
    """``html`` with only the allow-listed tags and attributes; active content removed.

    Also nbconvert's ``clean_html`` template filter (see ``nbgrader_config.py``)."""
    html = html.decode("utf-8", "replace") if isinstance(html, bytes) else str(html)
    html = _drop_whole(html)
    if html.count("<") > MAX_TAGS:
        return f"[markup removed by the grader: more than {MAX_TAGS} tags]"
    return _TEX_ACTIVE.sub(r"\\text{[\1 removed]}", _CLEANER_STYLED.clean(html))


def findings(html: str) -> list[str]:
    """What :func:`clean_html` removes from ``html``: tag names and attributes.  For the
    report only: what a page shows is always the cleaner's output, never a verdict of this."""
    from bs4 import BeautifulSoup
    found = []
    if _TEX_ACTIVE.search(html):
        found.append("TeX link/HTML macro")
    for el in BeautifulSoup(html, "html.parser").find_all(True):
        if el.name not in ALLOWED_TAGS:
            found.append(f"<{el.name}>")
            continue
        for name, value in el.attrs.items():
            value = " ".join(value) if isinstance(value, list) else str(value)
            if not _attr_ok(el.name, name, value):
                found.append(f"{name}={value[:40]!r}" if name in ("href", "src") else name)
    if not found and "<!--" in html:
        found.append("comment")
    return sorted(set(found))


# --- markdown ---------------------------------------------------------------------------
def _markdown_render(source: str, attachments: dict | None = None):
    """(html, raw_html_pieces, urls): the page's rendering of a Markdown cell, by
    nbconvert's own Markdown renderer, and what in it did not come from Markdown."""
    from nbconvert.filters.markdown_mistune import IPythonRenderer, MarkdownWithMath

    raw, urls = [], []

    class Recording(IPythonRenderer):
        def block_html(self, html):
            raw.append(html)
            return super().block_html(html)

        def inline_html(self, html):
            raw.append(html)
            return super().inline_html(html)

        def link(self, text, url, title=None):
            urls.append(("link", url))
            return super().link(text, url, title)

        def image(self, text, url, title=None):
            urls.append(("image", url))
            return super().image(text, url, title)

        def _embed_image_or_attachment(self, url):
            name = url[len("attachment:"):] if url.startswith("attachment:") else None
            if name is not None and name not in (attachments or {}):
                urls.append(("missing attachment", url))
                return ""           # (nbconvert would stop the whole page here)
            return super()._embed_image_or_attachment(url)

    renderer = Recording(escape=False, attachments=attachments or {}, exclude_anchor_links=True,
                         anchor_link_text="", embed_images=False)
    html = MarkdownWithMath(renderer=renderer).render(source)
    return html, raw, urls


def sanitize_markdown(source: str, attachments: dict | None = None) -> tuple[str, list[str]]:
    """A Markdown cell's source made safe, and what was removed (the source may be
    rewritten with nothing removed: raw HTML of allowed tags only).

    Markdown without raw HTML, with links to listed schemes and images from its
    attachments or data URIs only, is returned unchanged.  Anything else is
    rendered (by the same renderer as the pages), cleaned, and returned as one
    HTML block on one line (so it is not read as Markdown again)."""
    html, raw, urls = _markdown_render(source, attachments)
    bad = [f"{kind} {url[:40]!r}" for kind, url in urls
           if kind == "missing attachment" or not (
               _LINK_OK.match(url.strip()) if kind == "link" else
               (_IMG_DATA.match(url) or url.startswith("attachment:")))]
    if _TEX_ACTIVE.search(source):
        bad.append("TeX link/HTML macro")
    if not raw and not bad:
        return source, []
    # raw HTML, even of allowed tags only, is re-serialised by the cleaner: the page
    # then shows what the cleaner parsed, never the student's own bytes
    removed = sorted(set(findings(html) + [b for b in bad if not b.startswith(("link", "image"))]))
    cleaned = clean_html(html)
    # one line: newlines inside <pre> become character references, others spaces
    parts = re.split(r"(<pre\b.*?</pre>)", cleaned, flags=re.S | re.I)
    one = "".join(p.replace("\n", "&#10;") if p.lower().startswith("<pre") else
                  p.replace("\n", " ") for p in parts)
    return f'<div class="ic-sanitised">{one.strip()}</div>', removed


# --- SVG ----------------------------------------------------------------------------------
_SVG_NS = "http://www.w3.org/2000/svg"
_XLINK = "{http://www.w3.org/1999/xlink}href"
_METADATA_NS = frozenset({"http://www.w3.org/1999/02/22-rdf-syntax-ns#",
                          "http://purl.org/dc/elements/1.1/", "http://creativecommons.org/ns#"})
_SVG_TAGS = frozenset({
    "svg", "g", "path", "rect", "circle", "ellipse", "line", "polyline", "polygon", "text",
    "tspan", "defs", "clipPath", "use", "linearGradient", "radialGradient", "stop", "title",
    "desc", "style", "symbol", "mask", "pattern", "marker", "metadata", "image"})


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def sanitize_svg(text: str) -> tuple[str | None, list[str]]:
    """An SVG figure without scripts, event handlers, ``foreignObject`` or outside
    references; ``(None, why)`` if it is not a well-formed SVG document."""
    if re.search(r"<!ENTITY|<!DOCTYPE[^>]*\[", text, re.I):
        return None, ["entity declarations"]
    try:
        root = ET.fromstring(text.encode("utf-8") if isinstance(text, str) else text)
    except ET.ParseError:
        return None, ["not well-formed SVG"]
    if _local(root.tag) != "svg":
        return None, ["not an SVG document"]
    removed = []

    def walk(el):
        for child in list(el):
            ns = child.tag[1:].split("}")[0] if isinstance(child.tag, str) and "}" in child.tag else ""
            if isinstance(child.tag, str) and ns in _METADATA_NS:
                walk(child)           # RDF/Dublin Core description (matplotlib writes one)
                continue
            if not isinstance(child.tag, str) or _local(child.tag) not in _SVG_TAGS:
                removed.append(f"<{_local(child.tag) if isinstance(child.tag, str) else '?'}>")
                el.remove(child)
                continue
            walk(child)
        for name in list(el.attrib):
            value = el.attrib[name]
            low = _local(name).lower()
            if low.startswith("on"):
                removed.append(low)
                del el.attrib[name]
            elif low == "href" or name == _XLINK:
                ok = value.startswith("#") or (_local(el.tag) == "image" and _RASTER_DATA.match(value))
                if not ok:
                    removed.append(f"href={value[:40]!r}")
                    del el.attrib[name]
            elif re.search(r"url\(\s*['\"]?(?!#)|javascript:|expression|@import", value, re.I):
                removed.append(low)
                del el.attrib[name]
        if _local(el.tag) == "style" and el.text and re.search(
                r"url\(\s*['\"]?(?!#)|@import|expression|javascript:|\\", el.text, re.I):
            removed.append("<style> with outside references")
            el.text = ""

    walk(root)
    if not removed:
        return text, []
    ET.register_namespace("", _SVG_NS)
    ET.register_namespace("xlink", "http://www.w3.org/1999/xlink")
    return ET.tostring(root, encoding="unicode"), sorted(set(removed))


# --- outputs and cells -------------------------------------------------------------------
def _text(value) -> str:
    return "".join(value) if isinstance(value, list) else value if isinstance(value, str) else ""


def _base64_ok(value) -> bool:
    try:
        base64.b64decode(_text(value), validate=False)
        return isinstance(value, (str, list))
    except (binascii.Error, ValueError):
        return False


class _Budget:
    """What is left of a notebook's markup budget."""

    def __init__(self, total=MAX_MARKUP_BYTES_PER_NOTEBOOK):
        self.left = total

    def take(self, text: str) -> bool:
        n = len(text.encode("utf-8", "replace")) if len(text) < MAX_MARKUP_BYTES else MAX_MARKUP_BYTES + 1
        if n > MAX_MARKUP_BYTES or n > self.left:
            return False
        self.left -= n
        return True


def _report(text: str, cleaned: str) -> list[str]:
    if cleaned == text:
        return []
    return findings(text) if len(text) <= 16 * 1024 else ["markup cleaned"]


def _clean_output(out, budget=None) -> list[str]:
    kind = out.get("output_type")
    if kind not in ("display_data", "execute_result"):
        return []
    data = out.get("data") or {}
    budget = budget or _Budget()
    removed = []
    for mime in list(data):
        value = data[mime]
        if mime in ("text/html", "text/markdown", "image/svg+xml") and not budget.take(_text(value)):
            del data[mime]
            removed.append(f"{mime} (more markup than the grader cleans: "
                           f"{MAX_MARKUP_BYTES // 1024} KiB an output, "
                           f"{MAX_MARKUP_BYTES_PER_NOTEBOOK // 1024} KiB a notebook)")
            continue
        if mime in KEPT_OUTPUTS:
            if mime in _IMAGE_MIMES and not _base64_ok(value):
                del data[mime]
                removed.append(f"{mime} (not base64)")
            continue
        if mime == "text/latex":
            text = _text(value)
            if _TEX_ACTIVE.search(text):
                data[mime] = _TEX_ACTIVE.sub(r"\\text{[\1 removed]}", text)
                removed.append("TeX link/HTML macro")
            continue
        if mime == "text/html":        # always re-serialised by the cleaner (what it parsed)
            text = _text(value)
            data[mime] = clean_html(text)
            removed += [f"text/html: {f}" for f in _report(text, data[mime])]
            continue
        if mime == "text/markdown":
            html, found = sanitize_markdown(_text(value))
            if html != _text(value):
                del data[mime]
                data.setdefault("text/html", clean_html(html))
                removed += [f"text/markdown: {f}" for f in found]
            continue
        if mime == "image/svg+xml":
            svg, found = sanitize_svg(_text(value))
            if svg is None:
                del data[mime]
            elif found:
                data[mime] = svg
            removed += [f"image/svg+xml: {f}" for f in found]
            continue
        del data[mime]               # JavaScript, widget views, anything unlisted
        removed.append(mime)
    if removed and not data:
        data["text/plain"] = ("[output removed by the grader: " + ", ".join(removed)[:300] + "]")
    meta = out.get("metadata")
    if isinstance(meta, dict) and meta:
        keep = {}
        for mime in _IMAGE_MIMES:
            m = meta.get(mime)
            if isinstance(m, dict):
                dims = {k: v for k, v in m.items() if k in ("width", "height")
                        and isinstance(v, int) and not isinstance(v, bool) and 0 < v < 100000}
                if dims:
                    keep[mime] = dims
        if keep != meta:
            removed.append("output metadata")
        out["metadata"] = type(meta)(keep)
    return removed


def _clean_attachments(cell) -> list[str]:
    atts = cell.get("attachments")
    if not atts:
        return []
    removed, keep = [], {}
    for name, bundle in (atts.items() if isinstance(atts, dict) else []):
        if not isinstance(name, str) or not re.fullmatch(r"[\w.\- ]{1,100}", name) \
                or not isinstance(bundle, dict):
            removed.append("attachment with an odd name")
            continue
        good = {}
        for mime, value in bundle.items():
            if mime in _IMAGE_MIMES and _base64_ok(value):
                good[mime] = value
            elif mime == "image/svg+xml":
                try:
                    svg, found = sanitize_svg(base64.b64decode(_text(value)).decode("utf-8"))
                except (binascii.Error, UnicodeDecodeError, ValueError):
                    svg, found = None, ["undecodable"]
                if svg is not None:
                    good[mime] = base64.b64encode(svg.encode("utf-8")).decode("ascii")
                removed += [f"attachment {name}: {f}" for f in found]
            else:
                removed.append(f"attachment {name}: {mime}")
        if good:
            keep[name] = type(bundle)(good)
    if removed:
        cell["attachments"] = type(atts)(keep)
    return removed


def sanitize_cell(cell, budget=None) -> list[str]:
    """Clean one cell in place; what was removed."""
    budget = budget or _Budget()
    removed = []
    if cell.get("cell_type") in ("markdown", "raw") and not budget.take(_text(cell.get("source", ""))):
        raise ValueError("more markup than the grader cleans")
    if cell.get("cell_type") == "markdown":
        removed += _clean_attachments(cell)
        atts = {n: dict(b) for n, b in (cell.get("attachments") or {}).items()}
        before = _text(cell.get("source", ""))
        src, found = sanitize_markdown(before, atts)
        if src != before:
            cell["source"] = src
            removed += found or ["raw HTML re-serialised"]
    elif cell.get("cell_type") == "raw":
        text = _text(cell.get("source", ""))
        cell["source"] = clean_html(text)
        removed += _report(text, cell["source"])
        removed += _clean_attachments(cell)
    elif cell.get("cell_type") == "code":
        for out in cell.get("outputs", []):
            removed += _clean_output(out, budget)
    if removed:
        meta = cell.setdefault("metadata", {})
        meta.setdefault("interconnect", {})["sanitised"] = sorted(set(removed))
    return removed


def sanitize_notebook(nb) -> list[str]:
    """Clean every cell of ``nb`` in place (and drop embedded widget state);
    ``["cell 3: <script>", ...]``, what was removed."""
    removed = []
    meta = nb.get("metadata", {})
    if "widgets" in meta:
        del meta["widgets"]
        removed.append("notebook: widget state")
    budget = _Budget()
    for i, cell in enumerate(nb.get("cells", [])):
        try:
            removed += [f"cell {i}: {r}" for r in sanitize_cell(cell, budget)]
        except Exception as exc:  # noqa: BLE001 - fail closed: show nothing of that cell's markup
            removed.append(f"cell {i}: could not be sanitised ({type(exc).__name__}): not shown")
            note = "[this cell could not be sanitised by the grader and is not shown]"
            if cell.get("cell_type") == "code":
                cell["outputs"] = [o for o in cell.get("outputs", [])
                                   if o.get("output_type") in ("stream", "error")]
            else:
                cell["source"] = note
                cell.pop("attachments", None)
            cell.setdefault("metadata", {}).setdefault("interconnect", {})["sanitised"] = [note]
    return removed


# --- hidden tests never reach feedback ---------------------------------------------------
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def hidden_lines(source: str) -> set[str]:
    """The stripped lines of a test cell's ``### BEGIN/END HIDDEN TESTS`` blocks
    (those long enough to say something: 8 characters or more)."""
    out, hiding = set(), False
    for line in source.splitlines():
        if line.strip().startswith("### BEGIN HIDDEN TESTS"):
            hiding = True
        elif line.strip().startswith("### END HIDDEN TESTS"):
            hiding = False
        elif hiding and len(line.strip()) >= 8:
            out.add(line.strip())
    return out


def _scrub(text: str, hidden: set[str]) -> tuple[str, int]:
    kept, cut = [], 0
    for line in text.split("\n"):
        plain = _ANSI.sub("", line)
        if any(h in plain for h in hidden):
            cut += 1
            if not kept or kept[-1] != "[a line of the hidden tests: not shown]":
                kept.append("[a line of the hidden tests: not shown]")
        else:
            kept.append(line)
    return "\n".join(kept), cut


def strip_hidden_from_outputs(nb) -> int:
    """Remove every line of the hidden tests from the notebook's outputs (error
    tracebacks and messages, printed text, displayed text) in place; how many
    lines were cut.  Feedback then says which part failed and the test's
    message, never the hidden source.  Run before the test cells' sources are
    cut to their visible part."""
    hidden = set()
    for cell in nb.get("cells", []):
        if cell.get("cell_type") == "code":
            hidden |= hidden_lines(_text(cell.get("source", "")))
    if not hidden:
        return 0
    cut = 0
    for cell in nb.get("cells", []):
        for out in cell.get("outputs", []) if cell.get("cell_type") == "code" else []:
            kind = out.get("output_type")
            if kind == "stream":
                out["text"], n = _scrub(_text(out.get("text", "")), hidden)
                cut += n
            elif kind == "error":
                tb = []
                for frame in out.get("traceback", []):
                    frame, n = _scrub(str(frame), hidden)
                    cut += n
                    tb.append(frame)
                out["traceback"] = tb
                out["evalue"], n = _scrub(str(out.get("evalue", "")), hidden)
                cut += n
            elif kind in ("display_data", "execute_result"):
                for mime, value in list((out.get("data") or {}).items()):
                    if mime.startswith("text/"):
                        out["data"][mime], n = _scrub(_text(value), hidden)
                        cut += n
    return cut


#: Written into a notebook's metadata by the autograde pass.  Feedback skips a notebook
#: that carries it: nbgrader's ClearMetadataPreprocessor, earlier in the autograde
#: preprocessors, removes any the student wrote; a new cleaner (version) cleans again.
MARK = ("interconnect_sanitised", f"bleach {bleach.__version__}, allow-list 1")


class SanitizeStudentContent(Preprocessor):
    """The last autograde preprocessor (and one before feedback): the notebook
    stored in ``autograded/`` and every page made from it hold no active content."""

    enabled = Bool(True)
    skip_marked = False

    def preprocess(self, nb, resources):
        meta = nb.setdefault("metadata", {})
        if self.skip_marked and meta.get(MARK[0]) == MARK[1]:
            return nb, resources
        removed = sanitize_notebook(nb)
        meta[MARK[0]] = MARK[1]
        if removed:
            self.log.warning("sanitised %s: %s", (resources.get("nbgrader") or {}).get(
                "student", "?"), "; ".join(removed)[:1000])
        return nb, resources


class SanitizeFeedback(SanitizeStudentContent):
    """Before feedback: a notebook the autograde pass cleaned (:data:`MARK`) is not
    cleaned twice; one autograded before is."""

    skip_marked = True


class StripHiddenFromOutputs(Preprocessor):
    """Feedback: outputs never show a line of the hidden tests (runs before
    ``HideHiddenTests`` cuts the test cells' sources)."""

    enabled = Bool(True)

    def preprocess(self, nb, resources):
        n = strip_hidden_from_outputs(nb)
        if n:
            self.log.warning("feedback: %d line(s) of hidden tests cut from outputs", n)
        return nb, resources
