"""The repository's references hold: every path a code or doc file names exists, and nothing
cites a document that does not ship with Basin. Plain Python, no server.

Files read: *.rs, *.md, *.sql, *.py, *.js, *.mjs, *.toml, *.sh, *.html, the Dockerfile and
every file in scripts/ and .ci/. Not read: what .gitignore names (target/, node_modules/,
fuzz/corpus/, ...), .git, test data (tests/corpus/, and in fixtures folders everything but
README.md files and scripts), and this file, which spells out the patterns it looks for.

1. **Paths.** A path is named from the repository root, starting with one of its top-level
   folders (docs/projects.md, crates/server/src/names.rs, scripts/test, tests/python/); in a
   crate, `src/...` and `tests/...` may also be relative to the crate, as Cargo reads them. A
   Markdown link is relative to its file, and so is any other Markdown file named alone or
   by a relative path (`permissions.md`), which may also lie in a folder above. Each must
   exist, and an anchor (docs/projects.md#moves, `(#vector-tiles)`) must be a heading of that
   Markdown file, as GitHub makes anchors (lower case, punctuation removed, spaces to hyphens,
   `-1` for the second heading of the same text), or an explicit `<a id="...">`. URLs are
   not paths, nor is anything below a folder git ignores, nor a path followed by a template
   or glob character (`$`, `{`, `<`, `*`, `%`).
2. **Citations.** Rules are stated in docs/ in Basin's own words and cited by their anchor.
   Naming the platform interface or the wire contract documents, a numbered section of "the
   spec", or material in a `shared` folder beside the repository fails, also when a line
   break splits the words. A numbered rule (the word rule, a space and a number) is allowed
   only in a Markdown file that defines it (in a heading, in bold as `**Rule N.**` or with
   `<a id="rule-N">`), or on a line that also cites its anchor (docs/features.md#rule-1).
   Migrations that databases have applied already cannot change (FROZEN below); their
   numbered rules are still checked.

Failures list every offending file:line.
"""

import os
import pathlib
import re

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
THIS_FILE = os.path.relpath(os.path.abspath(__file__), ROOT).replace(os.sep, "/")

EXTENSIONS = (".rs", ".md", ".sql", ".py", ".js", ".mjs", ".toml", ".sh", ".html")
ALWAYS_READ = ("Dockerfile",)
READ_ALL_IN = ("scripts", ".ci")
DATA_FOLDERS = ("tests/corpus",)
FIXTURE_FOLDER = "fixtures"
FIXTURE_FILES_READ = (".md", ".sh", ".py")

# Migrations that databases have applied already: sqlx keeps a checksum of each applied file and
# refuses to start when one changed, so not even their comments may be edited. Their first
# lines cite outside sections beside the docs/ page that states the rules (which is checked).
FROZEN = {
    f"crates/server/migrations/{database}/{name}"
    for database in ("postgres", "sqlite")
    for name in ("0009_recycle_bin.sql", "0010_credits.sql", "0011_features.sql")
}


def ignored_folders():
    """The folders .gitignore names: paths from the root (`fuzz/corpus`), and names ignored
    wherever they are (`node_modules`)."""
    anchored, anywhere = {".git"}, {".git", "node_modules", "__pycache__", "target"}
    path = os.path.join(ROOT, ".gitignore")
    if os.path.exists(path):
        with open(path, encoding="utf-8") as ignore:
            for line in ignore:
                line = line.strip()
                if not line or line.startswith(("#", "!")) or "*" in line:
                    continue
                name = line.strip("/")
                if line.startswith("/") or "/" in name:
                    anchored.add(name)
                else:
                    anywhere.add(name)
    return anchored, anywhere


IGNORED_AT, IGNORED_ANYWHERE = ignored_folders()


def is_ignored(relative):
    """Whether `relative` (from the root, `/` separated) lies in a folder git ignores."""
    if any(part in IGNORED_ANYWHERE for part in relative.split("/")):
        return True
    return any(relative == folder or relative.startswith(folder + "/") for folder in IGNORED_AT)


def read_files():
    """(path from the root, text) of every file this test reads."""
    found = []
    for folder, folders, files in os.walk(ROOT):
        here = os.path.relpath(folder, ROOT).replace(os.sep, "/")
        here = "" if here == "." else here
        folders[:] = sorted(
            name for name in folders
            if not is_ignored(f"{here}/{name}".lstrip("/"))
            and f"{here}/{name}".lstrip("/") not in DATA_FOLDERS
        )
        top = here.split("/")[0]
        in_fixtures = FIXTURE_FOLDER in here.split("/")
        for name in sorted(files):
            relative = f"{here}/{name}".lstrip("/")
            if relative == THIS_FILE or is_ignored(relative):
                continue
            if in_fixtures:
                wanted = name.endswith(FIXTURE_FILES_READ)
            else:
                wanted = name.endswith(EXTENSIONS) or name in ALWAYS_READ or top in READ_ALL_IN
            if not wanted:
                continue
            try:
                with open(os.path.join(ROOT, relative), encoding="utf-8") as source:
                    found.append((relative, source.read()))
            except UnicodeDecodeError:
                continue
    return found


FILES = read_files()


def line_of(text, offset):
    return text.count("\n", 0, offset) + 1


# ---- Markdown anchors ----

FENCE = re.compile(r"^\s*(```|~~~)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
EXPLICIT_ANCHOR = re.compile(r"""<a\s+(?:id|name)\s*=\s*["']([^"']+)["']""")


def slug(heading):
    """The anchor GitHub gives a heading."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = re.sub(r"<[^>]+>", "", text)
    text = text.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def markdown_lines(text):
    """(line number, line) of a Markdown text, outside fenced code blocks."""
    fenced = False
    for number, line in enumerate(text.splitlines(), 1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            yield number, line


_anchors = {}


def anchors_of(relative):
    """The anchors of Markdown file `relative`: its headings' and its explicit ones."""
    if relative not in _anchors:
        with open(os.path.join(ROOT, relative), encoding="utf-8") as source:
            text = source.read()
        found, seen = set(), {}
        for _, line in markdown_lines(text):
            heading = HEADING.match(line)
            if heading:
                base = slug(heading.group(2))
                count = seen.get(base, 0)
                seen[base] = count + 1
                found.add(base if count == 0 else f"{base}-{count}")
            found.update(EXPLICIT_ANCHOR.findall(line))
        _anchors[relative] = found
    return _anchors[relative]


# ---- paths ----

def top_level_folders():
    names = [
        name for name in os.listdir(ROOT)
        if os.path.isdir(os.path.join(ROOT, name)) and not is_ignored(name)
    ]
    return "|".join(re.escape(name) for name in sorted(names, key=len, reverse=True))


# Not inside a longer path, a word or a URL.
NOT_INSIDE = r"(?<![\w./:@~$-])"
ROOTED = re.compile(NOT_INSIDE + r"((?:%s)/[\w./+@-]*)(?:#([\w-]+))?" % top_level_folders())
CRATE_RELATIVE = re.compile(NOT_INSIDE + r"(src/[\w./+@-]*)(?:#([\w-]+))?")
MARKDOWN = re.compile(
    NOT_INSIDE + r"((?:\.\./)*(?:[\w.-]+/)*[\w-]+\.md)(?![\w-])(?:#([\w-]+))?"
)
LINK = re.compile(r"\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
TEMPLATE = re.compile(r"[$<{*%]")
URL_SCHEME = re.compile(r"^[a-zA-Z][\w+.-]*:")


def clean(path):
    """`path` without the sentence punctuation or `...` after it, and without a final `/`."""
    return path.rstrip(".,;:-").rstrip("/")


def crate_of(relative):
    """The folder (from the root) of the crate that holds `relative`, or None."""
    parts = relative.split("/")[:-1]
    while parts:
        folder = "/".join(parts)
        if os.path.exists(os.path.join(ROOT, folder, "Cargo.toml")):
            return folder
        parts.pop()
    return None


def exists(relative):
    return os.path.exists(os.path.join(ROOT, relative))


def nearest(folder, name):
    """`name` beside `folder` or in a folder above it, up to the root; None when nowhere."""
    parts = folder.split("/") if folder else []
    while True:
        candidate = os.path.normpath("/".join(parts + [name])).replace(os.sep, "/")
        if exists(candidate):
            return candidate
        if not parts:
            return None
        parts.pop()


def references(relative, text):
    """(line, what is written, the path from the root or None, anchor, what was tried) of every
    path `text` names."""
    crate = crate_of(relative)
    folder = os.path.dirname(relative)
    is_markdown = relative.endswith(".md")
    # Fenced blocks of Markdown hold commands and examples, whose paths are read as well.
    for number, line in enumerate(text.splitlines(), 1):
        for match in ROOTED.finditer(line):
            if TEMPLATE.match(line, match.end()):
                continue
            path = clean(match.group(1))
            if crate is not None and not exists(path) and exists(f"{crate}/{path}"):
                path = f"{crate}/{path}"
            yield number, match.group(0), path, match.group(2), path
        if crate is not None:
            for match in CRATE_RELATIVE.finditer(line):
                if TEMPLATE.match(line, match.end()):
                    continue
                path = f"{crate}/{clean(match.group(1))}"
                yield number, match.group(0), path, match.group(2), path
        for match in MARKDOWN.finditer(line):
            name = match.group(1)
            if ROOTED.fullmatch(name) or (crate is not None and name.startswith("src/")):
                continue  # read above
            if "/" not in name and not is_markdown and not name[0].isupper():
                continue  # a lower-case file name alone in code is a value (`"readme.md"`)
            tried = f"{name} beside {relative} or in a folder above it"
            yield number, match.group(0), nearest(folder, name), match.group(2), tried
        if is_markdown:
            for match in LINK.finditer(line):
                target = match.group(1)
                if URL_SCHEME.match(target):
                    continue
                path, _, anchor = target.partition("#")
                resolved = (
                    os.path.normpath(os.path.join(folder, path)).replace(os.sep, "/")
                    if path else relative
                )
                yield number, match.group(0), resolved, anchor or None, resolved


def problem_with(target, anchor, tried):
    """None when `target` exists and has `anchor`; else what is wrong."""
    if target is None or target.startswith("../"):
        return f"{tried} does not exist"
    if is_ignored(target):
        return None
    if not exists(target):
        return f"{tried} does not exist"
    if anchor:
        if not target.endswith(".md"):
            return f"{target} is not Markdown and has no anchor #{anchor}"
        if anchor not in anchors_of(target):
            return f"{target} has no heading or anchor #{anchor}"
    return None


def test_every_path_named_exists():
    broken, seen = [], set()
    for relative, text in FILES:
        for number, written, target, anchor, tried in references(relative, text):
            problem = problem_with(target, anchor, tried)
            # A Markdown link is read as a path too: one line per problem.
            if problem and (relative, number, problem) not in seen:
                seen.add((relative, number, problem))
                broken.append(f"{relative}:{number}: `{written}`: {problem}")
    assert not broken, (
        f"{len(broken)} references to repository paths that do not exist (name the path from "
        "the repository root, or fix it or its anchor):\n" + "\n".join(broken)
    )


# ---- citations of documents that do not ship ----

# One space, or a line break with the next line's comment leader.
GAP = r"(?:[ \t]+|[ \t]*\n[ \t]*(?://[!/]?|#+|--|\*)?[ \t]*)"
OUTSIDE = re.compile("|".join([
    r"\bwire[- ]?contract\b",
    r"\bplatform[- ]interface\b",
    r"\b[Ss]pec(?:'s)?%s(?:parts?%s)?[0-9]" % (GAP, GAP),
    r"\b[Ss]pec%sparts?\b" % GAP,
    r"\b[Ss]pec's\b",
    r"\.\./shared\b",
    r"/work/shar[e]d\b",
    r"\bshared%s(?:material|corpus)\b" % GAP,
]))
RULE = re.compile(r"\b[Rr]ule%s([0-9]+)\b" % GAP)
DEFINED_RULE = re.compile(r"(?:^#{1,6}\s.*\b[Rr]ule ([0-9]+)\b|\*\*[Rr]ule ([0-9]+)\.?\*\*)")


def rules_defined(text):
    """The numbers of the rules a Markdown text defines."""
    defined = set()
    for _, line in markdown_lines(text):
        for match in DEFINED_RULE.finditer(line):
            defined.add(match.group(1) or match.group(2))
        for anchor in EXPLICIT_ANCHOR.findall(line):
            rule = re.fullmatch(r"rule-([0-9]+)", anchor)
            if rule:
                defined.add(rule.group(1))
    return defined


def test_nothing_cites_a_document_that_does_not_ship():
    found = []
    for relative, text in FILES:
        lines = text.splitlines()

        def report(match):
            first, last = line_of(text, match.start()), line_of(text, match.end())
            written = " ".join(match.group(0).split())
            quoted = " / ".join(line.strip() for line in lines[first - 1:last])
            found.append(f"{relative}:{first}: `{written}`: {quoted}")

        if relative not in FROZEN:
            for match in OUTSIDE.finditer(text):
                report(match)
        defined = rules_defined(text) if relative.endswith(".md") else set()
        for match in RULE.finditer(text):
            number = match.group(1)
            first, last = line_of(text, match.start()), line_of(text, match.end())
            around = "\n".join(lines[first - 1:last])
            if number in defined or f"#rule-{number}" in around:
                continue
            report(match)
    assert not found, (
        f"{len(found)} citations of documents that do not ship with Basin (state the rule in "
        "docs/ in Basin's words and cite its anchor, e.g. docs/projects.md#moves):\n"
        + "\n".join(found)
    )


def test_the_server_modules_import_each_other_in_one_direction():
    import json
    import subprocess
    import sys

    graph = subprocess.run(
        [sys.executable, os.path.join(ROOT, "scripts", "import-graph"), "--json"],
        check=True, capture_output=True, text=True,
    )
    new = json.loads(graph.stdout)["circles"]
    assert not new, (
        "modules of crates/server/src import each other in a circle (ARCHITECTURE.md says "
        "which way imports run; scripts/import-graph shows the imports):\n"
        + "\n".join(" <-> ".join(circle) for circle in new)
    )


# Longest source file, in lines of code (comments, blank lines and test modules aside), as
# ARCHITECTURE.md promises: a file longer than this holds more than one idea.
LINES_OF_CODE_MAX = 900


def test_no_source_file_is_longer_than_900_lines_of_code():
    import importlib.machinery
    import importlib.util

    loader = importlib.machinery.SourceFileLoader(
        "import_graph", os.path.join(ROOT, "scripts", "import-graph"))
    spec = importlib.util.spec_from_loader("import_graph", loader)
    import_graph = importlib.util.module_from_spec(spec)
    loader.exec_module(import_graph)
    too_long = []
    for path in sorted(pathlib.Path(ROOT, "crates").glob("*/src/**/*.rs")):
        if import_graph.is_test_file(path):
            continue
        head = path.read_text(encoding="utf-8")[:200]
        if "do not edit by hand" in head:
            continue  # generated tables
        count = import_graph.lines_of_code(path)
        if count > LINES_OF_CODE_MAX:
            too_long.append(f"{path.relative_to(ROOT)}: {count}")
    assert not too_long, (
        f"source files over {LINES_OF_CODE_MAX} lines of code (split them by idea):\n"
        + "\n".join(too_long)
    )
