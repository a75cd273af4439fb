"""The pages an instructor opens hold nothing active of a student's.

One download (Canvas and Moodle names) of ``pinned_vs_pageable`` goes through
the real pipeline, ``python -m autograder all --zip`` (what ``make autograde``
runs): a hostile submission (``<img onerror>``, ``<script>``, ``<svg onload>``,
``javascript:`` links, ``display(HTML(...))``, ``display(Javascript(...))``, a
forged image size, a widget view, an SVG figure with a script, a remote image,
an SVG attachment with a script, raw HTML in Markdown, a forged "already
clean" mark), an honest one with a figure, both reference solutions and wrong
answers.  Then Debian's chromium opens

* the feedback HTML of the hostile and the honest one, and
* their pages in nbgrader's own formgrader, a Jupyter server started in the
  course directory as the guide says,

and every payload would set ``window.__pwned`` or the page title, navigate
away, or ask ``evil.example`` for something (every request is intercepted):
none may, while the honest figures (a PNG and a plain SVG), headings, a table,
bold text, code and math still show.  A control page rendered without
sanitising runs the payload in the same browser.

The feedback of every submission shows no line of the hidden tests that the
student did not write, and the failing part's hint.  The unit tests check
:mod:`autograder.sanitize` itself.
"""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from urllib.parse import urlsplit
import zipfile

import nbformat
import pytest

from autograder import REPO_ROOT, assignments_in
from autograder.sanitize import (clean_html, hidden_lines, sanitize_markdown, sanitize_notebook,
                                 sanitize_svg, strip_hidden_from_outputs)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO_ROOT, "scripts"))
from test_autograder import submission  # noqa: E402

A = "pinned_vs_pageable"      # the assignment of every pipeline test here
EVIL = "evil.example"
TOKEN = "grading-pages-test"
PORT_RANGE = range(18150, 18200)

def _png(w=2, h=2):
    """A small valid PNG (red)."""
    import struct
    import zlib

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(
            ">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    raw = b"".join(b"\x00" + b"\xff\x00\x00" * w for _ in range(h))
    return base64.b64encode(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
                            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")).decode()


PNG = _png()
PLAIN_SVG = ('<svg xmlns="http://www.w3.org/2000/svg" width="40" height="20" id="honest-svg">'
             '<rect width="40" height="20" fill="#3a7"/><text x="2" y="14">fig</text></svg>')
SVG_ATTACHMENT = base64.b64encode(
    b'<svg xmlns="http://www.w3.org/2000/svg" onload="window.__pwned=\'att\'"><script>'
    b'window.__pwned="att2"</script><rect width="5" height="5"/></svg>').decode()

HOSTILE_MARKDOWN = f"""## Notes <img src=x onerror="window.__pwned='md-img'">

<script>window.__pwned = 'md-script'; document.title = 'PWNED'</script>
<svg onload="window.__pwned='md-svg'"><circle r="4"/></svg>
[a link](javascript:window.__pwned='md-link') and <a href="javascript:window.__pwned='a'" id="jslink">click</a>
<iframe src="http://{EVIL}/frame"></iframe>
<img src="http://{EVIL}/tracker.png">
<form action="http://{EVIL}/post"><input name=q></form>
<meta http-equiv="refresh" content="0; url=http://{EVIL}/">
<style>body {{ background: url(http://{EVIL}/bg.png) }}</style>
<div style="background-image: url(http://{EVIL}/div.png)" onmouseover="window.__pwned='over'">hover</div>
<details open ontoggle="window.__pwned='toggle'"><summary>x</summary>y</details>
$\\href{{javascript:window.__pwned='tex'}}{{tex link}}$

![attached](attachment:evil.svg)
"""

HOSTILE_CODE = f'''
from IPython.display import HTML, Javascript, SVG, display
display(HTML("<b id='html-bold'>bold output</b><img src=x onerror=\\"window.__pwned='html'\\">"
             "<script>window.__pwned='html-script'</script><img src='http://{EVIL}/o.png'>"))
display(Javascript("window.__pwned = 'js'; document.title = 'PWNED'"))
display({{"image/svg+xml": "<svg xmlns='http://www.w3.org/2000/svg' onload=\\"window.__pwned='svg'\\">"
         "<script>window.__pwned='svg-script'</script><rect width='3' height='3'/></svg>",
         "text/plain": "svg"}}, raw=True)
display({{"image/png": "{PNG}"}}, metadata={{"image/png": {{"width": "1 onerror=window.__pwned=1"}}}},
        raw=True)
display({{"application/vnd.jupyter.widget-view+json": {{"model_id": "x", "version_major": 2,
         "version_minor": 0}}, "text/plain": "widget"}}, raw=True)
display({{"text/markdown": "[md out](javascript:window.__pwned='mdout') <img src=x onerror=\\"window.__pwned='mdout2'\\">"}},
        raw=True)
'''

HONEST_MARKDOWN = """# Honest heading

Some **bold words**, a list:

- one
- two

| size | time |
|------|------|
| 1 KiB | 2 us |

Inline math $\\alpha + n/B$ and `code`.
"""

HONEST_CODE = f'''
import io
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
from IPython.display import SVG, Image, display
fig = plt.figure(figsize=(2, 1.5))
plt.plot([1, 2, 3], [1, 4, 9])
buf = io.BytesIO()
fig.savefig(buf, format="png")
display(Image(data=buf.getvalue()))
display(SVG({PLAIN_SVG!r}))
'''


def _hostile():
    from autograder.sanitize import MARK
    nb = submission(A)
    nb.metadata[MARK[0]] = MARK[1]          # "already clean": a forged mark
    md = nbformat.v4.new_markdown_cell(HOSTILE_MARKDOWN)
    md.attachments = {"evil.svg": {"image/svg+xml": SVG_ATTACHMENT}}
    nb.cells[1:1] = [md, nbformat.v4.new_code_cell(HOSTILE_CODE)]
    return nb


def _honest():
    nb = submission(A)
    nb.cells[1:1] = [nbformat.v4.new_markdown_cell(HONEST_MARKDOWN),
                     nbformat.v4.new_code_cell(HONEST_CODE)]
    return nb


def _free_port():
    for port in PORT_RANGE:
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
                return port
            except OSError:
                continue
    raise RuntimeError(f"no free port in {PORT_RANGE}")


# --- the real pipeline ----------------------------------------------------------------
def _wrong(nb):
    """Part D answered wrongly (the slower copy named faster, the wrong reason)."""
    for c in nb.cells:
        if c.metadata.get("nbgrader", {}).get("grade_id") == "part_d":
            c.source = c.source.replace('why = "b"', 'why = "a"').replace(
                'faster = "resident" if t_r < t_s else "staged"',
                'faster = "staged" if t_r < t_s else "resident"')


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """One download (Canvas and Moodle names) through ``python -m autograder all``: the
    hostile and the honest submission, both reference solutions and wrong answers."""
    from reference_solutions import CLOSED, LOOP, notebook as reference
    released = nbformat.read(os.path.join(REPO_ROOT, "exercises", A, f"{A}.ipynb"), 4)
    subs = {"31337": (f"mallory_31337_900001_{A}.ipynb", _hostile()),
            "31338": (f"honestann_31338_900002_{A}.ipynb", _honest()),
            "5100": (f"Lou Loop_5100_assignsubmission_file_/{A}.ipynb", reference(released, A, LOOP)),
            "5101": (f"Cleo Closed_5101_assignsubmission_file_/{A}.ipynb",
                     reference(released, A, CLOSED)),
            "5102": (f"Wes Wrong_5102_assignsubmission_file_/{A}.ipynb", submission(A, edit=_wrong))}
    root = tmp_path_factory.mktemp("pages")
    zpath = root / "download.zip"
    with zipfile.ZipFile(zpath, "w") as z:
        for name, nb in subs.values():
            z.writestr(name, nbformat.writes(nb))
    course = root / "course"
    env = dict(os.environ, PYTHONPATH=REPO_ROOT, PYTHONDONTWRITEBYTECODE="1")
    t0 = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "autograder", "--course", str(course),
                           "--cell-timeout", "20", "all", "--zip", str(zpath), A],
                          cwd=root, env=env, capture_output=True, text=True, timeout=900)
    seconds = time.monotonic() - t0
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-4000:]
    return dict(root=root, course=course, out=proc.stdout, seconds=seconds, env=env,
                subs={s: nb for s, (_, nb) in subs.items()})


def _autograded(graded, student):
    return nbformat.read(graded["course"] / "autograded" / student / A / f"{A}.ipynb", 4)


def _feedback(graded, student):
    return graded["course"] / "feedback" / student / A / f"{A}.html"


def test_the_grades_are_untouched_by_sanitising(graded):
    """Both submissions solve everything: sanitising changes pages, never grades."""
    rows = {line.split()[0]: line.split() for line in graded["out"].splitlines()
            if line.startswith(("31337", "31338", "5100", "5101", "5102"))}
    full = rows["31338"][3]
    assert [rows[s][2] for s in ("31337", "31338", "5100", "5101")] == [full] * 4, graded["out"][-2000:]
    assert float(rows["5102"][2]) == float(full) - 3


def test_the_stored_notebook_is_clean(graded):
    nb = _autograded(graded, "31337")
    # what pages render: Markdown, attachments, outputs (code is shown as escaped text)
    text = json.dumps([[c.source, c.get("attachments")] if c.cell_type == "markdown"
                       else c.get("outputs", []) for c in nb.cells])
    assert "window.__pwned" in json.dumps(nb.cells[2].source), "the payload is in the submission"
    for needle in ("onerror", "onload", "<script", EVIL, "application/javascript",
                   "widget-view", "ontoggle", "onmouseover", "<iframe", "<form", "<meta", "<style",
                   "url(", "\\\\href"):
        assert needle not in text, needle
    assert not re.search(r"(href|src)\s*=\s*\\?[\"']?\s*javascript:", text), "a javascript: URL"
    md = nb.cells[1]
    assert "<h2>Notes" in md.source and md.metadata["interconnect"]["sanitised"]
    from autograder.sanitize import MARK
    assert nb.metadata.get(MARK[0]) == MARK[1], "marked clean by the autograde pass"
    honest = _autograded(graded, "31338")
    assert honest.cells[1].source == HONEST_MARKDOWN, "honest Markdown is stored as written"
    assert "interconnect" not in honest.cells[1].metadata


# --- the browser ------------------------------------------------------------------------
def _need_browser():
    from lab_session import CHROMIUM
    msg = None
    if not os.path.exists(CHROMIUM):
        msg = f"{CHROMIUM} not found: bash scripts/ensure_chromium.sh installs Debian's chromium"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError as exc:
        msg = f"playwright is not installed: {exc}"
    if msg:
        if os.environ.get("CI") == "true":
            pytest.fail(msg)
        pytest.skip(msg)


@pytest.fixture(scope="module")
def formgrader(graded):
    """nbgrader's formgrader in a Jupyter server started in the course directory."""
    port = _free_port()
    log = open(graded["root"] / "formgrader.log", "w")
    cmd = [sys.executable, "-m", "jupyter_server", "--no-browser", f"--port={port}",
           "--ServerApp.ip=127.0.0.1", f"--IdentityProvider.token={TOKEN}",
           "--ServerApp.jpserver_extensions={'nbgrader.server_extensions.formgrader': True}",
           f"--ServerApp.root_dir={graded['course']}", "--allow-root"]
    server = subprocess.Popen(cmd, cwd=graded["course"], env=graded["env"], stdout=log,
                              stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(120):
            try:
                urllib.request.urlopen(f"{url}/formgrader/api/status?token={TOKEN}", timeout=2)
                break
            except Exception:  # noqa: BLE001 - not up yet
                if server.poll() is not None:
                    break
                time.sleep(0.5)
        else:
            pytest.fail("the formgrader did not start: " + open(log.name).read()[-2000:])
        if server.poll() is not None:
            pytest.fail("the formgrader exited: " + open(log.name).read()[-2000:])
        yield url
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()


def _submission_ids(course):
    from nbgrader.api import Gradebook
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        return {s: gb.find_submission_notebook(A, A, s).id for s in ("31337", "31338")}


@pytest.fixture(scope="module")
def browser():
    _need_browser()
    from playwright.sync_api import sync_playwright
    from lab_session import CHROMIUM, CHROMIUM_ARGS
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield b
        b.close()


def _open(browser, url):
    """Open ``url``; what ran and what was asked for.  Requests to anything but the
    page's own server (and the template's MathJax) are recorded and refused."""
    page = browser.new_page()
    asked, ran, went = [], [], []
    # a payload's assignment to window.__pwned is reported at once (a later navigation
    # cannot hide it); every navigation of the page itself is recorded
    page.expose_function("__icReport", lambda v: ran.append(v))
    page.add_init_script("Object.defineProperty(window, '__pwned', {configurable: false,"
                         " get() { return undefined; }, set(v) { window.__icReport(String(v)); }});")
    # (the formgrader itself moves between its cells with ?index=N: same page)
    page.on("framenavigated", lambda f: went.append(f.url) if f == page.main_frame else None)

    def route(r):
        u = r.request.url
        own = u.startswith(("file://", "data:", "http://127.0.0.1"))
        if not own:
            asked.append(u)
        return r.continue_() if own else r.abort()

    page.route("**/*", route)
    page.goto(url, wait_until="load")
    page.wait_for_timeout(1500)
    page.evaluate("() => document.querySelectorAll('body *').forEach(e => ['mouseover', 'mouseenter',"
                  " 'focus'].forEach(t => e.dispatchEvent(new Event(t, {bubbles: false}))))")
    for link in page.query_selector_all("a"):         # a link that would run script
        href = (link.get_attribute("href") or "").strip().lower()
        if href.startswith(("javascript:", "data:", "vbscript:")):
            link.click(timeout=1000)
    page.wait_for_timeout(500)
    state = page.evaluate("() => ({title: document.title, text: document.body.innerText,"
                          " imgs: Array.from(document.images).filter(i => i.naturalWidth > 0)"
                          ".map(i => i.src.slice(0, 30)), html: document.documentElement.outerHTML})")
    page.close()
    state.update(asked=asked, pwned=ran[0] if ran else None, ran=ran,
                 left=[u for u in went if urlsplit(u)[:3] != urlsplit(url)[:3]])
    return state


def _assert_inert(state):
    assert state["pwned"] is None, f"a payload ran: window.__pwned = {state['pwned']!r}"
    assert "PWNED" not in state["title"]
    assert not state["left"], f"the page navigated away: {state['left']}"
    assert not [u for u in state["asked"] if EVIL in u], state["asked"]
    assert not [u for u in state["asked"] if not re.search(r"mathjax|require|jquery", u, re.I)], \
        f"only the page template's own scripts may be asked for: {state['asked']}"


def _assert_honest_shows(state):
    assert "Honest heading" in state["text"] and "bold words" in state["text"]
    assert "1 KiB" in state["text"], "the table is shown"
    assert "\\alpha" in state["html"] or "α" in state["text"], "math is kept for MathJax"
    assert sum(s.startswith("data:image/png") for s in state["imgs"]) >= 1, state["imgs"]
    assert sum(s.startswith("data:image/svg") for s in state["imgs"]) >= 1, state["imgs"]


def test_feedback_pages_run_nothing_of_the_student(graded, browser):
    hostile = _open(browser, _feedback(graded, "31337").as_uri())
    _assert_inert(hostile)
    assert "bold output" in hostile["text"] and "Notes" in hostile["text"]
    honest = _open(browser, _feedback(graded, "31338").as_uri())
    _assert_inert(honest)
    _assert_honest_shows(honest)


def test_formgrader_submission_pages_run_nothing_of_the_student(graded, formgrader, browser):
    ids = _submission_ids(graded["course"])
    for student, sid in ids.items():
        state = _open(browser, f"{formgrader}/formgrader/submissions/{sid}/?token={TOKEN}")
        assert A in state["html"] and "part_a" in state["html"], state["text"][:500]
        _assert_inert(state)
        if student == "31338":
            _assert_honest_shows(state)


def test_the_payloads_do_run_on_a_page_that_is_not_sanitised(graded, browser, tmp_path):
    """The control: the same submission, executed outputs and all, rendered by nbconvert
    without sanitising, runs a payload in this browser -- so the tests above can fail."""
    from nbconvert import HTMLExporter
    nb = _hostile()
    nb.cells[2].outputs = [nbformat.v4.new_output(
        "display_data", data={"text/html": "<img src=x onerror=\"window.__pwned='raw'\">"})]
    html, _ = HTMLExporter(template_name="classic").from_notebook_node(nb)
    page = tmp_path / "raw.html"
    page.write_text(html, encoding="utf-8")
    state = _open(browser, page.as_uri())
    assert state["pwned"] is not None, state["ran"]
    assert [u for u in state["asked"] if EVIL in u], "the remote loads were asked for"


# --- the cleaner itself -------------------------------------------------------------------
@pytest.mark.parametrize("html, gone, kept", [
    ('<img src=x onerror="alert(1)">', ["onerror", "src="], ["<img"]),
    ("<script>alert(1)</script>text", ["script", "alert"], ["text"]),
    ('<a href="javascript:alert(1)">x</a>', ["javascript"], ["<a>x</a>"]),
    ('<a href="JaVaScRiPt:alert(1)">x</a>', ["alert"], ["x"]),
    ('<a href="https://example.org/doc">doc</a>', [], ['href="https://example.org/doc"']),
    ('<iframe src="http://evil.example/"></iframe>', ["iframe", "evil"], []),
    ('<meta http-equiv="refresh" content="0;url=http://evil.example">', ["meta", "evil"], []),
    ('<form action="http://evil.example"><input></form>', ["form", "input"], []),
    ('<div style="background:url(http://evil.example/x)">d</div>', ["url(", "style"], ["<div>d</div>"]),
    ('<span style="color: red">r</span>', [], ['style="color: red;"']),
    ('<svg onload="alert(1)"><circle/></svg>', ["svg", "onload"], []),
    ('<math><mi xlink:href="javascript:alert(1)">x</mi></math>', ["javascript", "math"], []),
    ('<img src="http://evil.example/t.png">', ["evil"], ["<img>"]),
    (f'<img src="data:image/png;base64,{PNG}">', [], ["data:image/png;base64"]),
    ("<table><tr><th>a</th></tr><tr><td>1</td></tr></table>", [], ["<th>a</th>", "<td>1</td>"]),
    ("<h2>Head</h2><p><b>b</b> <code>x &lt; y</code></p>", [], ["<h2>Head</h2>", "x &lt; y"]),
    ('<p id="notebook-container" onclick="x()">p</p>', ["id=", "onclick"], ["<p>p</p>"]),
])
def test_clean_html(html, gone, kept):
    out = clean_html(html)
    for g in gone:
        assert g.lower() not in out.lower(), (html, out)
    for k in kept:
        assert k in out, (html, out)


def test_markdown_without_raw_html_is_kept_as_written():
    src = "# T\n\n*a* **b** `c<d` $x<y$ [l](https://e.org) [in](#part-a)\n\n> q\n\n1. x\n"
    assert sanitize_markdown(src) == (src, [])
    att = {"f.png": {"image/png": PNG}}
    assert sanitize_markdown("![f](attachment:f.png)", att) == ("![f](attachment:f.png)", [])


def test_markdown_with_raw_html_is_rendered_clean_on_one_line():
    from nbconvert.filters.markdown_mistune import markdown2html_mistune
    src = "## H <img src=x onerror=alert(1)>\n\n```\na\n\nb\n```\n<b>kept</b>\n"
    out, removed = sanitize_markdown(src)
    assert "onerror" in removed and "\n" not in out and "<b>kept</b>" in out
    assert markdown2html_mistune(out).strip() == out, "the page shows it as it is"
    assert "a&#10;&#10;b" in out, "code keeps its lines"
    out, removed = sanitize_markdown("[x](javascript:alert(1)) ![y](http://evil.example/y.png)")
    assert "javascript" not in out and EVIL not in out and len(removed) == 2
    out, removed = sanitize_markdown("![gone](attachment:missing.png)")
    assert "missing.png" not in out and removed, "a missing attachment no longer stops the page"
    out, _ = sanitize_markdown("$\\href{javascript:alert(1)}{x}$ $\\unicode{x}$")
    assert "\\href" not in out and "\\unicode" not in out


def test_svg_figures():
    assert sanitize_svg(PLAIN_SVG) == (PLAIN_SVG, [])
    svg, removed = sanitize_svg('<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/'
                                '1999/xlink"><script>x()</script><foreignObject><p/></foreignObject>'
                                '<use xlink:href="http://evil.example/s.svg#a"/><use xlink:href="#g"/>'
                                '<rect onclick="x()" fill="url(http://evil.example/p)" width="1"/></svg>')
    assert "script" not in svg and "foreignObject" not in svg and EVIL not in svg and "onclick" not in svg
    assert 'href="#g"' in svg and "<rect" in svg and removed
    assert sanitize_svg('<!DOCTYPE svg [<!ENTITY a "aaaa">]><svg>&a;</svg>')[0] is None
    assert sanitize_svg("<svg")[0] is None
    import matplotlib
    matplotlib.use("Agg")
    import io
    import matplotlib.pyplot as plt
    fig = plt.figure()
    plt.plot([0, 1], [0, 1])
    plt.title("$\\alpha$")
    buf = io.StringIO()
    fig.savefig(buf, format="svg")
    plt.close(fig)
    assert sanitize_svg(buf.getvalue())[1] == [], "a matplotlib figure is kept as it is"


def test_notebook_outputs_and_attachments():
    nb = nbformat.v4.new_notebook(metadata={"widgets": {"state": {}}})
    md = nbformat.v4.new_markdown_cell("![a](attachment:a.png) ![b](attachment:b.svg)")
    md.attachments = {"a.png": {"image/png": PNG}, "b.svg": {"image/svg+xml": SVG_ATTACHMENT},
                      'x"><img onerror=1>': {"image/png": PNG}, "c.html": {"text/html": "PGI+"}}
    code = nbformat.v4.new_code_cell("x")
    code.outputs = [
        nbformat.v4.new_output("display_data", data={"application/javascript": "alert(1)"}),
        nbformat.v4.new_output("display_data", data={"image/png": PNG},
                               metadata={"image/png": {"width": "1 onerror=alert(1)", "height": 20},
                                         "isolated": True}),
        nbformat.v4.new_output("execute_result", data={"text/html": "<b>ok</b>", "text/plain": "ok"},
                               execution_count=1),
        nbformat.v4.new_output("error", ename="E", evalue="<script>", traceback=["<script>"]),
    ]
    nb.cells = [md, code]
    removed = sanitize_notebook(nb)
    assert "widgets" not in nb.metadata
    assert set(md.attachments) == {"a.png", "b.svg"}
    assert b"script" not in base64.b64decode(md.attachments["b.svg"]["image/svg+xml"])
    assert md.source == "![a](attachment:a.png) ![b](attachment:b.svg)"
    out = code.outputs
    assert out[0].data == {"text/plain": "[output removed by the grader: application/javascript]"}
    assert dict(out[1].metadata) == {"image/png": {"height": 20}}
    assert out[2].data["text/html"] == "<b>ok</b>", "clean HTML is left alone"
    assert out[3].evalue == "<script>", "errors are shown as text by every page, never as markup"
    assert any("application/javascript" in r for r in removed)
    assert code.metadata["interconnect"]["sanitised"]


def test_hidden_lines_are_cut_from_outputs():
    test = ('"""Part A."""\nassert f(1) == 1\n### BEGIN HIDDEN TESTS\nrows = sorted(res, key=len)\n'
            'assert f(2) == 4, "f(2) should be 4"\n### END HIDDEN TESTS')
    assert hidden_lines(test) == {"rows = sorted(res, key=len)", 'assert f(2) == 4, "f(2) should be 4"'}
    c = nbformat.v4.new_code_cell(test)
    c.outputs = [nbformat.v4.new_output("error", ename="AssertionError", evalue="f(2) should be 4",
                                        traceback=["Traceback", "\x1b[0;32m----> 5\x1b[0m rows = "
                                                   "sorted(res, key=len)\nassert f(2) == 4, \"f(2) "
                                                   "should be 4\"", "AssertionError: f(2) should be 4"]),
                 nbformat.v4.new_output("stream", name="stdout", text="rows = sorted(res, key=len)\nok\n")]
    nb = nbformat.v4.new_notebook(cells=[c])
    assert strip_hidden_from_outputs(nb) == 3
    shown = json.dumps(c.outputs)
    assert "sorted(res" not in shown and "assert f(2)" not in shown
    assert "f(2) should be 4" in shown, "the test's message (the hint) is kept"
    assert "ok" in c.outputs[1].text


# --- hidden tests never reach feedback ----------------------------------------------------
def _hidden_shown(page_html, nb_submitted):
    """Lines of the hidden tests the feedback page shows that the student did not write
    (a student's own line that happens to equal a test line is their own work)."""
    from bs4 import BeautifulSoup
    sol = nbformat.read(os.path.join(REPO_ROOT, "solutions", nb_submitted["assignment"],
                                     f"{nb_submitted['assignment']}.ipynb"), 4)
    hidden = set().union(*(hidden_lines(c.source) for c in sol.cells if c.cell_type == "code"))
    own = "\n".join(c.source for c in nb_submitted["nb"].cells
                    if c.metadata.get("nbgrader", {}).get("solution"))
    norm = lambda s: re.sub(r"\s+", " ", s)  # noqa: E731
    text = norm(BeautifulSoup(page_html, "html.parser").get_text())
    assert hidden, "the assignment has hidden tests"
    return sorted(h for h in hidden if norm(h) in text and norm(h) not in norm(own))


@pytest.mark.parametrize("student", ["31337", "31338", "5100", "5101", "5102"])
def test_feedback_shows_no_hidden_test_line(graded, student):
    page = _feedback(graded, student).read_text(encoding="utf-8")
    assert _hidden_shown(page, {"assignment": A, "nb": graded["subs"][student]}) == []
    assert "hidden tests: not shown" in page


def test_failing_feedback_says_which_part_and_the_hint(graded):
    page = _feedback(graded, "5102").read_text(encoding="utf-8")
    assert "Your own numbers say" in page, "the failing hidden test's message is the hint"
    assert "Score: 7.0 / 10.0" in page and "Score: 0.0 / 3.0" in page, "part D failed, the rest not"


def test_parser_tricks_and_failures_fail_closed(monkeypatch):
    """Markup that a simple parser reads differently from a browser is re-serialised by
    the cleaner anyway; a cell the cleaner cannot handle is not shown at all."""
    import autograder.sanitize as sanitize
    from autograder.sanitize import findings
    cdata = '<![CDATA[><img src=x onerror="window.__pwned=1">]]>'
    assert findings(cdata) == [], "Python's html.parser does not see the <img> a browser sees"
    for trick in (cdata, '<!--><img src=y onerror=alert(2)>'):
        for cell in (nbformat.v4.new_raw_cell(trick), nbformat.v4.new_markdown_cell(trick)):
            nb = nbformat.v4.new_notebook(cells=[cell])
            sanitize_notebook(nb)
            assert "onerror" not in nb.cells[0].source, nb.cells[0].source
        c = nbformat.v4.new_code_cell("x")
        c.outputs = [nbformat.v4.new_output("display_data", data={"text/html": trick})]
        sanitize_notebook(nbformat.v4.new_notebook(cells=[c]))
        assert "onerror" not in c.outputs[0].data["text/html"]

    def broken(*a, **k):
        raise RecursionError("too deep")
    monkeypatch.setattr(sanitize, "sanitize_markdown", broken)
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("<b>x</b>")])
    assert "could not be sanitised" in sanitize_notebook(nb)[0]
    assert "<b>" not in nb.cells[0].source


def test_markup_has_a_budget():
    """A notebook cannot spend the grader's CPU on its markup: over the budget, not shown."""
    from autograder.sanitize import MAX_MARKUP_BYTES, MAX_MARKUP_BYTES_PER_NOTEBOOK
    big = "<b>x</b>" * (MAX_MARKUP_BYTES // 8 + 1)
    fits = "<b>x</b>" * (MAX_MARKUP_BYTES // 8 - 10)
    c = nbformat.v4.new_code_cell("x")
    n = MAX_MARKUP_BYTES_PER_NOTEBOOK // len(fits) + 2
    c.outputs = [nbformat.v4.new_output("display_data", data={"text/html": big, "text/plain": "big"})] + [
        nbformat.v4.new_output("display_data", data={"text/html": fits}) for _ in range(n)]
    t0 = time.monotonic()
    removed = sanitize_notebook(nbformat.v4.new_notebook(cells=[c]))
    assert time.monotonic() - t0 < 60
    assert c.outputs[0].data == {"text/plain": "big"}
    assert [("text/html" in o.data) for o in c.outputs[1:]] == [True] * (n - 2) + [False] * 2
    assert sum("more markup than the grader cleans" in r for r in removed) == 3


def test_feedback_cleans_a_notebook_the_autograde_pass_did_not_mark():
    from autograder.sanitize import MARK, SanitizeFeedback, SanitizeStudentContent
    def nb_with(meta):
        return nbformat.v4.new_notebook(metadata=meta, cells=[
            nbformat.v4.new_markdown_cell("<img src=x onerror=alert(1)>")])
    old = nb_with({})                        # autograded before sanitising existed
    SanitizeFeedback().preprocess(old, {})
    assert "onerror" not in old.cells[0].source and old.metadata[MARK[0]] == MARK[1]
    stale = nb_with({MARK[0]: "bleach 0.1, allow-list 0"})   # an older cleaner
    SanitizeFeedback().preprocess(stale, {})
    assert "onerror" not in stale.cells[0].source
    forged = nb_with({MARK[0]: MARK[1]})
    SanitizeStudentContent().preprocess(forged, {})
    assert "onerror" not in forged.cells[0].source, "the autograde pass never trusts a mark"


@pytest.mark.parametrize("markup", ["<svg>" * 13000, "<b>" * 20000, "<script a>" * 6000,
                                    "<scr<script>x</script>ipt>alert(1)</script>"])
def test_pathological_markup_is_cheap_and_inert(markup):
    """Deep nesting and unclosed elements (quadratic for a regex or html5lib) stay cheap."""
    t0 = time.monotonic()
    out = clean_html(markup)
    md, _ = sanitize_markdown(markup)
    assert time.monotonic() - t0 < 10
    assert "<script" not in out and "<script" not in md and "<svg" not in out


def test_a_deeply_nested_svg_is_not_shown():
    svg = '<svg xmlns="http://www.w3.org/2000/svg">' + "<g>" * 6000 + "</g>" * 6000 + "</svg>"
    c = nbformat.v4.new_code_cell("x")
    c.outputs = [nbformat.v4.new_output("display_data", data={"image/svg+xml": svg}),
                 nbformat.v4.new_output("stream", name="stdout", text="printed")]
    removed = sanitize_notebook(nbformat.v4.new_notebook(cells=[c]))
    assert "could not be sanitised" in removed[0]
    assert [o.output_type for o in c.outputs] == ["stream"], "printed text is still shown"
