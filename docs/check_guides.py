#!/usr/bin/env python3
"""Checks that each guide of docs/guides/ names every file its change touches.

A guide declares, in an HTML comment, a regular expression that every dispatch site of the thing
it adds contains (every file that lists all passes, handles all SNode kinds, ...):

    <!-- guide-check: regex=REGEX paths=FOLDER,FOLDER -->

(fields separated by white space, line breaks included, so REGEX holds none: write \\x20 or
\\s; `paths` is optional; a guide may have several markers, each checked on its own) and lists
the files to touch under a `## Files to touch` heading, one list item per file, each item
starting with a backticked repository path (`- `passes/memory_pipeline.cc`: ...`). A path
with a placeholder (`<` or `*`, e.g. `passes/<name>.cc`) names a file to create: only the folder
before its first placeholder must exist. An optional `## Models to read` list, in the same form,
names the files the change follows but does not edit (the CPU backend's sources for a new
backend); a file the marker matches may be in either list, and only the first counts as a file
to touch.

The check reports, as `GUIDE: ...` or `GUIDE:LINE: ...`:
  * a source file under `paths` (default: the whole tree) that matches REGEX but is not listed;
  * a listed path that does not exist;
  * a guide without a marker or without the list, a malformed marker or list item, a path listed
    twice, a regular expression that does not compile or matches no file at all.

Scanned files: C++ sources and headers, .proto, BUILD and .bzl files, WORKSPACE, Python (.py,
.pyi), shell scripts and .txt files (tools/layering/layers.txt). Not scanned: Markdown, data
(.tile, .json, ...), tests and test support (a file whose name contains "test", or that lies in
a `testing`, `tests` or `testdata` folder), third_party/, hidden folders and the bazel-* links.
Tests and docs are listed by hand where a guide asks for them, and then only checked to exist.

    python3 docs/check_guides.py [--root=DIR] [GUIDE.md ...]

Without guides, every docs/guides/*.md under the root is checked. Exit status 0 when every guide
matches the tree, 1 otherwise, 2 on bad usage.
"""

import argparse
import os
import re
import sys

SCANNED_EXTENSIONS = (".h", ".cc", ".cpp", ".c", ".inc", ".proto", ".bzl", ".py", ".pyi", ".sh",
                      ".txt")
SCANNED_NAMES = ("BUILD", "BUILD.bazel", "WORKSPACE")
SKIPPED_TOP_FOLDERS = ("third_party",)
TEST_FOLDERS = ("testing", "tests", "testdata")
FILES_HEADING = "## Files to touch"
# Optional: files a guide points to as models to follow, which the change reads but does not edit
# (the CPU backend for a new backend, ...). They may match the marker; they are not files to touch
# and are not counted as such.
MODELS_HEADING = "## Models to read"
MARKER_RE = re.compile(r"<!--\s*guide-check:(.*?)-->", re.S)
ITEM_RE = re.compile(r"^(\s*)(?:[-*+]|\d+[.)])\s+(.*)$")
PATH_RE = re.compile(r"^`([^`\s]+)`")
PLACEHOLDER_CHARS = "<*"


class Guide:
    """What a guide declares: its markers and its list of files."""

    def __init__(self, path):
        self.path = path
        self.markers = []  # (line, regex source, compiled regex or None, [paths])
        self.listed = {}  # repository path -> line (the files to touch)
        self.models = {}  # repository path -> line (the models to read)
        self.errors = []


def line_of(text, offset):
    return text.count("\n", 0, offset) + 1


def parse_guide(path, display):
    guide = Guide(display)
    with open(path, encoding="utf-8") as f:
        text = f.read()
    for m in MARKER_RE.finditer(text):
        number = line_of(text, m.start())
        fields = {}
        for token in m.group(1).split():
            key, sep, value = token.partition("=")
            if not sep or not value:
                guide.errors.append("%s:%d: marker field '%s' is not KEY=VALUE" %
                                    (display, number, token))
                continue
            if key not in ("regex", "paths"):
                guide.errors.append("%s:%d: unknown marker field '%s' (known: regex, paths)" %
                                    (display, number, key))
                continue
            if key in fields:
                guide.errors.append("%s:%d: marker field '%s' given twice" %
                                    (display, number, key))
            fields[key] = value
        if "regex" not in fields:
            guide.errors.append("%s:%d: marker without regex=" % (display, number))
            continue
        try:
            compiled = re.compile(fields["regex"])
        except re.error as e:
            guide.errors.append("%s:%d: regex '%s' does not compile: %s" %
                                (display, number, fields["regex"], e))
            compiled = None
        paths = [p.strip("/") for p in fields.get("paths", "").split(",") if p.strip("/")]
        guide.markers.append((number, fields["regex"], compiled, paths))
    if not guide.markers:
        guide.errors.append("%s: no <!-- guide-check: regex=... --> marker" % display)

    lines = text.split("\n")
    if parse_list(guide, lines, FILES_HEADING, guide.listed) is None:
        guide.errors.append("%s: no '%s' section" % (display, FILES_HEADING))
        return guide
    if not guide.listed:
        guide.errors.append("%s: the '%s' section lists no file" % (display, FILES_HEADING))
    parse_list(guide, lines, MODELS_HEADING, guide.models)
    for path, number in guide.models.items():
        if path in guide.listed:
            guide.errors.append("%s:%d: %s is both a file to touch (line %d) and a model to read" %
                                (display, number, path, guide.listed[path]))
    return guide


def parse_list(guide, lines, heading, into):
    """Reads the list items under `heading` into `into` (path -> line); None without it."""
    display = guide.path
    start = None
    for i, line in enumerate(lines):
        if line.rstrip() == heading:
            start = i + 1
            break
    if start is None:
        return None
    in_fence = False
    for i in range(start, len(lines)):
        line = lines[i]
        if line.lstrip().startswith("```"):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        if re.match(r"^#{1,2}\s", line):
            break
        m = ITEM_RE.match(line)
        if not m:
            continue
        number = i + 1
        p = PATH_RE.match(m.group(2))
        if not p:
            guide.errors.append("%s:%d: list item does not start with a backticked path: %s" %
                                (display, number, m.group(2)[:60]))
            continue
        listed = p.group(1)
        if listed in into:
            guide.errors.append("%s:%d: %s is listed twice (first on line %d)" %
                                (display, number, listed, into[listed]))
            continue
        into[listed] = number
    return into


def is_test_file(rel):
    parts = rel.split("/")
    if any(part in TEST_FOLDERS for part in parts[:-1]):
        return True
    return "test" in parts[-1].lower()


def source_files(root):
    """The repository paths of every scanned, non-test file under `root`, sorted."""
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        rel_dir = os.path.relpath(dirpath, root)
        rel_dir = "" if rel_dir == "." else rel_dir.replace(os.sep, "/")
        dirnames[:] = sorted(
            d for d in dirnames
            if not d.startswith(".") and not d.startswith("bazel-") and
            not (rel_dir == "" and d in SKIPPED_TOP_FOLDERS))
        for name in sorted(filenames):
            if not (name.endswith(SCANNED_EXTENSIONS) or name in SCANNED_NAMES):
                continue
            rel = rel_dir + "/" + name if rel_dir else name
            if not is_test_file(rel):
                found.append(rel)
    return found


def in_scope(rel, paths):
    return not paths or any(rel == p or rel.startswith(p + "/") for p in paths)


def check_listed_path(root, listed):
    """Why a listed path is wrong, or None."""
    if any(c in listed for c in PLACEHOLDER_CHARS):
        parts = listed.split("/")
        fixed = []
        for part in parts:
            if any(c in part for c in PLACEHOLDER_CHARS):
                break
            fixed.append(part)
        folder = "/".join(fixed)
        if folder and not os.path.isdir(os.path.join(root, folder)):
            return "the folder %s/ of new file %s does not exist" % (folder, listed)
        return None
    if listed.endswith("/"):
        if not os.path.isdir(os.path.join(root, listed)):
            return "listed folder %s does not exist" % listed
        return None
    if not os.path.exists(os.path.join(root, listed)):
        return "listed path %s does not exist" % listed
    return None


def check(root, guide_paths):
    """The problems of the guides, and (guides, files to touch, models to read, matched files)
    counts."""
    errors = []
    files = source_files(root)
    texts = {}
    matched_total = 0
    listed_total = 0
    models_total = 0
    for path, display in guide_paths:
        guide = parse_guide(path, display)
        errors.extend(guide.errors)
        listed_total += len(guide.listed)
        models_total += len(guide.models)
        every = dict(guide.listed)
        every.update(guide.models)
        for listed, number in sorted(every.items(), key=lambda kv: kv[1]):
            why = check_listed_path(root, listed)
            if why:
                errors.append("%s:%d: %s" % (display, number, why))
        for number, source, compiled, paths in guide.markers:
            if compiled is None:
                continue
            for p in paths:
                if not os.path.exists(os.path.join(root, p)):
                    errors.append("%s:%d: marker path %s does not exist" % (display, number, p))
            matched = 0
            for rel in files:
                if not in_scope(rel, paths):
                    continue
                if rel not in texts:
                    with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
                        texts[rel] = f.read()
                m = compiled.search(texts[rel])
                if not m:
                    continue
                matched += 1
                if rel not in guide.listed and rel not in guide.models:
                    errors.append(
                        "%s:%d: %s matches the marker (line %d: '%s') but is not in '%s' "
                        "(or '%s')" % (display, number, rel, line_of(texts[rel], m.start()),
                                       m.group(0), FILES_HEADING, MODELS_HEADING))
            if matched == 0:
                errors.append("%s:%d: regex '%s' matches no file (a marker must find the "
                              "existing dispatch sites)" % (display, number, source))
            matched_total += matched
    return errors, (len(guide_paths), listed_total, models_total, matched_total)


def find_root(start):
    """The nearest folder at or above `start` with a WORKSPACE file, or None."""
    folder = start
    while True:
        if os.path.isfile(os.path.join(folder, "WORKSPACE")):
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", help="the repository root (default: found from the guides)")
    parser.add_argument("guides", nargs="*", help="guides to check (default: docs/guides/*.md)")
    args = parser.parse_args(argv)
    root = args.root
    if root is None:
        start = args.guides[0] if args.guides else __file__
        root = find_root(os.path.dirname(os.path.realpath(start)))
    if root is None or not os.path.isfile(os.path.join(root, "WORKSPACE")):
        print("error: %s is not the repository root (no WORKSPACE)" % root, file=sys.stderr)
        return 2
    guide_paths = []
    if args.guides:
        for g in args.guides:
            real = os.path.realpath(g)
            display = os.path.relpath(real, os.path.realpath(root))
            if display.startswith(".."):
                display = g
            guide_paths.append((g, display.replace(os.sep, "/")))
    else:
        folder = os.path.join(root, "docs", "guides")
        if os.path.isdir(folder):
            for name in sorted(os.listdir(folder)):
                if name.endswith(".md"):
                    guide_paths.append((os.path.join(folder, name), "docs/guides/" + name))
    if not guide_paths:
        print("error: no guide to check", file=sys.stderr)
        return 2
    errors, (guides, listed, models, matched) = check(root, guide_paths)
    for error in errors:
        print(error)
    if errors:
        print("%d problem(s): a guide's '%s' and '%s' lists must name every file its marker "
              "matches, and only paths that exist (docs/check_guides.py explains the format)" %
              (len(errors), FILES_HEADING, MODELS_HEADING))
        return 1
    print("guides ok: %d guides list %d files to touch and %d models to read; their markers "
          "match %d files, all listed" % (guides, listed, models, matched))
    return 0


if __name__ == "__main__":
    sys.exit(main())
