"""The sanitizer of feature status messages against hostile input (docs/features.md, "Title and
body sanitizing"; issue 15).

Why these tests exist: the Rust tests check the sanitizer with the cases its authors thought
of, and read the result with the same parser family that wrote it. Here every input of
sanitizer_cases.py (hundreds of filter-evasion attempts and the allowed markup) goes through the
real API as a global message, is read back from the list, and the stored text is parsed with
html5lib, an independent implementation of the HTML5 parsing algorithm browsers use:

- a stored body may hold only the allowed elements (b, strong, i, em, u, br, p, ul, ol, li, a),
  no attribute except `href` and `rel` on `a`, `rel` exactly "noopener noreferrer" on every
  link, and an `href` whose scheme, read the way a browser reads a URL, is https or mailto; no
  comments, no control characters but tab, LF and CR. It is parsed twice: as the content of
  a `div` (innerHTML) and as the body of a page (static HTML);
- the text of script, style and the other dropped elements is gone with them;
- a stored title parses to text only, and that text is the title itself (no markup, no
  character reference), with no control characters, tabs or line breaks, trimmed;
- allowed markup and text are stored exactly as sanitizer_cases.BENIGN says;
- PATCH sanitizes as POST does, and POST answers what the list later returns;
- an input holding NUL is refused with 400 `validation` naming the field; it is then posted
  without its NULs like every other input;
- the stored bodies and titles are rendered in headless Chromium (tests/browser/
  sanitizer-xss.mjs, after its self-test proves it catches unsanitized payloads): no script may
  run. Outside CI a missing node, playwright-core (`npm ci` in tests/browser) or chromium skips
  those two tests with a message; in CI they fail.

One server for the module; every input is posted once as a body and once inside a title, and
once more alone as a title (which may be 400 when nothing is left of it). Run with
scripts/python-tests (`-k sanitizer`).
"""

import json
import os
import re
import shutil
import subprocess
import urllib.parse
from xml.etree import ElementTree

import pytest

from basin_server import ROOT, ApiError
from formats_support import require_module, skip_or_fail
from sanitizer_cases import BENIGN, BENIGN_TITLES, DROPPED_MARKERS, HOSTILE

html5lib = require_module("html5lib")

MESSAGES = "/api/admin/feature/message"
ALLOWED_ELEMENTS = {"b", "strong", "i", "em", "u", "br", "p", "ul", "ol", "li", "a"}
ALLOWED_SCHEMES = {"https", "mailto"}
REL = "noopener noreferrer"
TITLE_PREFIX = "Case: "
TITLE_CHARS_MAX = 255
# Control characters a stored body must not hold (C0 but tab, LF and CR; DEL; C1).
BODY_CONTROLS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
TITLE_CONTROLS = re.compile(r"[\x00-\x1f\x7f-\x9f]")
# The scheme of a URL as the URL standard's parser finds it: ASCII alpha, then alphanumerics,
# `+`, `-` or `.`, then `:`. Anything else is a relative URL.
SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*):")
BROWSER_DIR = os.path.join(ROOT, "tests", "browser")
BROWSER_SCRIPT = os.path.join(BROWSER_DIR, "sanitizer-xss.mjs")


def browser_scheme(url):
    """The scheme a browser reads in `url` (lower case), or None for a relative URL: leading
    and trailing C0 controls and spaces are stripped, tabs and line breaks removed."""
    url = url.strip("".join(map(chr, range(0x21))))
    url = re.sub(r"[\t\n\r]", "", url)
    match = SCHEME.match(url)
    return match.group(1).lower() if match else None


def _tag_name(element):
    """`b`, or `svg:svg`-like names for foreign elements (html5lib's etree gives
    `{namespace}name`)."""
    tag = element.tag
    if isinstance(tag, str) and tag.startswith("{"):
        namespace, name = tag[1:].split("}", 1)
        return f"{namespace.rsplit('/', 1)[-1]}:{name}"
    return tag


def _element_problems(element):
    problems = []
    if element.tag is ElementTree.Comment:
        return [f"comment {element.text!r}"]
    if not isinstance(element.tag, str):
        return [f"node {element.tag!r}"]
    name = _tag_name(element)
    if name not in ALLOWED_ELEMENTS:
        problems.append(f"element <{name}>")
    for attribute, value in element.attrib.items():
        if name == "a" and attribute == "href":
            scheme = browser_scheme(value)
            if scheme not in ALLOWED_SCHEMES:
                problems.append(f"href {value!r} (scheme {scheme})")
        elif name == "a" and attribute == "rel":
            if value != REL:
                problems.append(f"rel {value!r}")
        else:
            problems.append(f"attribute {attribute}={value!r} on <{name}>")
    if name == "a" and element.attrib.get("rel") != REL:
        problems.append("link without rel")
    return problems


def _tree_problems(root):
    problems = []
    for element in root.iter():
        if element is root:
            continue
        problems += _element_problems(element)
    return problems


def body_problems(body):
    """Everything in stored `body` outside the allow-list, read by html5lib as innerHTML of a
    div and as the body of a page; [] when it is clean."""
    problems = []
    if BODY_CONTROLS.search(body):
        problems.append("C0 control character")
    fragment = html5lib.parseFragment(
        body, container="div", treebuilder="etree", namespaceHTMLElements=False
    )
    problems += [f"innerHTML: {p}" for p in _tree_problems(fragment)]
    document = html5lib.parse(
        f"<!DOCTYPE html><html><head></head><body>{body}</body></html>",
        treebuilder="etree", namespaceHTMLElements=False,
    )
    head, page_body = document.find("head"), document.find("body")
    if head is None or page_body is None or len(head) or len(document) != 2:
        problems.append("page: content outside the body")
    # Attributes of a stray <html> or <body> start tag land on the page's own elements.
    for element in (document, head, page_body):
        if element is not None and element.attrib:
            problems.append(f"page: attributes {dict(element.attrib)} on <{element.tag}>")
    if page_body is not None:
        problems += [f"page: {p}" for p in _tree_problems(page_body)]
    return problems


def title_problems(title):
    """Why stored `title` is not plain text; [] when it is."""
    problems = []
    if TITLE_CONTROLS.search(title):
        problems.append("control character, tab or line break")
    if title != title.strip():
        problems.append("leading or trailing whitespace")
    if not title:
        problems.append("empty")
    fragment = html5lib.parseFragment(
        title, container="div", treebuilder="etree", namespaceHTMLElements=False
    )
    if len(fragment):
        problems.append(f"markup: {[_tag_name(e) for e in fragment.iter()][1:]}")
    elif (fragment.text or "") != title:
        problems.append(f"reads as {fragment.text!r} in HTML (markup or a character reference)")
    if len(title) > TITLE_CHARS_MAX:
        problems.append("longer than 255 characters")
    return problems


# --- the server side -----------------------------------------------------------------------


def _message(title, body):
    return {
        "type": "Informational",
        "title": title,
        "body": body,
        "startDate": "2020-01-01T00:00:00Z",
        "expiringDate": "2999-01-01T00:00:00Z",
    }


def _resource(answer):
    """The message in an answer, whether or not it is wrapped in `data`."""
    if isinstance(answer, dict) and "id" not in answer and isinstance(answer.get("data"), dict):
        return answer["data"]
    return answer


def _post(basin, title, body):
    return _resource(basin.call("POST", MESSAGES, _message(title, body), api_version="1",
                                token=basin.back_office_token))


def _refusal(basin, title, body):
    """The problem Basin answers to a message it must refuse (None if it accepted it)."""
    try:
        _post(basin, title, body)
    except ApiError as error:
        return {"status": error.status, **(error.body or {})}
    return None


def _post_title_alone(basin, title):
    """Posts `title` with an empty body; the stored message, or None when Basin answers 400
    about the title (nothing was left of it)."""
    try:
        return _post(basin, title, "")
    except ApiError as error:
        if error.status == 400 and "title" in json.dumps(error.body).lower():
            return None
        raise


def _list_all(basin):
    """Every global message, by id, read page by page."""
    by_id, cursor = {}, None
    for _ in range(1000):
        query = "?expiry=All&sortOrder=Asc&limit=500" + (f"&cursor={cursor}" if cursor else "")
        page = basin.call("GET", MESSAGES + query, api_version="1", token=basin.back_office_token)
        for message in page["data"]:
            by_id[message["id"]] = message
        cursor = page.get("cursor")
        if not cursor:
            return by_id
        cursor = urllib.parse.quote(cursor, safe="")
    raise AssertionError("the list did not end")


@pytest.fixture(scope="module")
def stored(basin):
    """Posts every case; returns what the list gives back: `bodies[name]`, `titles[name]`
    (prefixed, None when the input is too long for a title), `alone[name]` (the input as the
    whole title; None when refused), `benign[i]`, `benign_titles[i]`, and `answers`: pairs of
    what POST answered and what the list holds."""
    posted = {"bodies": {}, "titles": {}, "alone": {}, "benign": {}, "benign_titles": {}}
    refusals = {}
    for name, text in HOSTILE:
        if "\x00" in text:
            refusals[name] = (_refusal(basin, "NUL case", text), _refusal(basin, text, ""))
            text = text.replace("\x00", "")
        title = TITLE_PREFIX + text
        if len(title) > TITLE_CHARS_MAX:
            title = f"Case {name}"
            posted["titles"][name] = None
        posted["bodies"][name] = _post(basin, title, text)
        posted["titles"].setdefault(name, posted["bodies"][name])
        if len(text) <= TITLE_CHARS_MAX:
            posted["alone"][name] = _post_title_alone(basin, text)
    for i, (text, _) in enumerate(BENIGN):
        posted["benign"][i] = _post(basin, f"Benign {i}", text)
    for i, (text, _) in enumerate(BENIGN_TITLES):
        posted["benign_titles"][i] = _post(basin, text, "")
    listed = _list_all(basin)
    result = {"answers": [], "refusals": refusals}
    for group, messages in posted.items():
        result[group] = {}
        for key, message in messages.items():
            if message is None:
                result[group][key] = None
                continue
            result["answers"].append((message, listed.get(message["id"])))
            kept = listed.get(message["id"]) or {}
            result[group][key] = kept
    return result


def _stored_title(message):
    return message["title"][len(TITLE_PREFIX):] if message else None


# --- the tests -------------------------------------------------------------------------------


def test_the_suite_is_large_enough():
    classes = {name.split("-")[0] for name, _ in HOSTILE}
    assert len(HOSTILE) >= 200, len(HOSTILE)
    assert classes >= {"scheme", "sink", "attr", "element", "broken", "ns", "encoded", "content"}


def test_the_checker_sees_unsanitized_input():
    """The checks above are worth something: the raw hostile inputs fail them (all but the ones
    whose danger a parser drops by itself, such as a tag left open at the end)."""
    flagged = [name for name, text in HOSTILE if body_problems(text)]
    assert len(flagged) >= len(HOSTILE) * 0.9, sorted(set(n for n, _ in HOSTILE) - set(flagged))
    assert body_problems('<a href="https://example.com/" rel="noopener noreferrer">x</a>') == []
    assert browser_scheme("\x01 java\tscript:alert(1)") == "javascript"
    assert browser_scheme("java script:alert(1)") is None
    assert title_problems("AT&amp;T")
    assert title_problems("a<b>c</b>")
    assert title_problems("AT&T") == []


def test_post_answers_what_is_stored(stored):
    different = [(a["id"], a.get("body"), (b or {}).get("body")) for a, b in stored["answers"]
                 if b is None or (a.get("body"), a.get("title")) != (b.get("body"), b.get("title"))]
    assert not different, different[:10]


def _sent(name):
    """The hostile input `name` as it was stored: without NUL (refused on its own)."""
    return dict(HOSTILE)[name].replace("\x00", "")


@pytest.mark.parametrize("name", [name for name, text in HOSTILE if "\x00" in text])
def test_nul_is_refused(stored, name):
    for field, problem in zip(("body", "title"), stored["refusals"][name]):
        assert problem is not None, f"{field} with NUL accepted"
        assert problem["status"] == 400, problem
        assert problem["type"].endswith("validation"), problem
        assert field in json.dumps(problem.get("errors")), problem


@pytest.mark.parametrize("name", [name for name, _ in HOSTILE])
def test_hostile_body_stores_nothing_executable(stored, name):
    body = stored["bodies"][name]["body"]
    problems = body_problems(body)
    marker = DROPPED_MARKERS.get(name)
    if marker and marker in body:
        problems.append(f"the content of the dropped element survived ({marker})")
    assert not problems, f"input {_sent(name)!r} stored as {body!r}: {problems}"


@pytest.mark.parametrize("name", [name for name, _ in HOSTILE])
def test_hostile_title_is_plain_text(stored, name):
    text = _sent(name)
    prefixed = stored["titles"][name]
    if prefixed is not None:
        title = prefixed["title"]
        assert title.startswith(TITLE_PREFIX.strip()), title
        problems = title_problems(title)
        assert not problems, f"title {TITLE_PREFIX + text!r} stored as {title!r}: {problems}"
    alone = stored["alone"].get(name)
    if alone is not None:
        problems = title_problems(alone["title"])
        assert not problems, f"title {text!r} stored as {alone['title']!r}: {problems}"


@pytest.mark.parametrize("index", range(len(BENIGN)), ids=[repr(t)[:40] for t, _ in BENIGN])
def test_allowed_markup_is_stored_exactly(stored, index):
    text, expected = BENIGN[index]
    assert stored["benign"][index]["body"] == expected, text
    assert body_problems(expected) == []


@pytest.mark.parametrize(
    "index", range(len(BENIGN_TITLES)), ids=[repr(t)[:40] for t, _ in BENIGN_TITLES]
)
def test_plain_titles_are_stored_as_documented(stored, index):
    text, expected = BENIGN_TITLES[index]
    assert stored["benign_titles"][index]["title"] == expected, text
    assert title_problems(expected) == []


def test_patch_sanitizes_as_post_does(basin, stored):
    """Every hostile input PATCHed onto one message, as body and inside the title: PATCH
    answers what POST stored for the same input."""
    message = _post(basin, "Patched", "")
    path = f"{MESSAGES}/{message['id']}"
    differences = []
    for name, text in HOSTILE:
        text = text.replace("\x00", "")
        patch = {"body": text}
        title = stored["titles"][name]
        if title is not None:
            patch["title"] = TITLE_PREFIX + text
        answer = _resource(basin.call("PATCH", path, patch, api_version="1",
                                      token=basin.back_office_token))
        expected = stored["bodies"][name]["body"]
        if answer["body"] != expected or (title is not None and answer["title"] != title["title"]):
            differences.append((name, answer["body"], expected))
        problems = body_problems(answer["body"])
        if problems:
            differences.append((name, answer["body"], problems))
    assert not differences, differences[:10]


# --- the browser -----------------------------------------------------------------------------


def _require_browser():
    """The node command, or a skip (outside CI) / failure (CI) saying what is missing."""
    node = shutil.which("node")
    if node is None:
        skip_or_fail("node is missing (Node.js 20 or later); the browser check needs it")
    if not os.path.isdir(os.path.join(BROWSER_DIR, "node_modules", "playwright-core")):
        skip_or_fail("playwright-core is missing: run `npm ci` in tests/browser")
    chromium = os.environ.get("TEST_BASIN_CHROMIUM") or shutil.which("chromium")
    if chromium is None:
        skip_or_fail("chromium is missing (apt-get install chromium, or set TEST_BASIN_CHROMIUM)")
    return node, chromium


def _run_browser(arguments):
    node, chromium = _require_browser()
    result = subprocess.run(
        [node, BROWSER_SCRIPT, *arguments], cwd=BROWSER_DIR, capture_output=True, text=True,
        env={**os.environ, "TEST_BASIN_CHROMIUM": chromium}, timeout=600,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-20000:]
    return output


def test_browser_check_catches_unsanitized_payloads():
    """The browser check's self-test: every unsanitized payload it is fed is caught (and
    harmless markup is not)."""
    output = _run_browser(["--self-test"])
    assert "self-test passed" in output, output


def test_stored_bodies_run_no_script_in_chromium(stored, tmp_path):
    cases = []
    for name, _ in HOSTILE:
        message = stored["bodies"][name]
        titles = [m["title"] for m in (stored["titles"][name], stored["alone"].get(name)) if m]
        cases.append({"name": name, "body": message["body"], "titles": titles})
    for i, (text, _) in enumerate(BENIGN):
        cases.append({"name": f"benign-{i}", "body": stored["benign"][i]["body"], "titles": []})
    path = tmp_path / "stored.json"
    path.write_text(json.dumps(cases))
    output = _run_browser([str(path)])
    assert f"{len(cases)} cases" in output, output
