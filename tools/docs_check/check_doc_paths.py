#!/usr/bin/env python3
"""Every repository path a document names exists.

Reads docs/**/*.md and every README.md (third_party/ excepted), takes each `code span` that looks
like a path inside this repository (it starts with one of the top-level folders below and holds
no spaces, wildcards, placeholders or Bazel label syntax) and fails, naming file and line, for
each one that is neither a file or folder nor a Bazel target (`pkg/name`), unless NOT_OURS says
what else it names. Why: guides and the architecture page name files and folders, and
moved code left them pointing at places that no longer exist.

    python3 tools/docs_check/check_doc_paths.py [--root=REPO]
"""
import argparse
import os
import re
import sys

TOP = ("ir", "passes", "policy", "backends", "sparse_runtime", "gc", "runtime", "codegen",
       "kernel_abi", "tools", "benchmarks", "python", "docs", "examples", "bazel", "third_party",
       "shared_utils")
SPAN = re.compile(r"`([^`\n]+)`")
# Spans that look like our paths but name something else, each with the reason.
NOT_OURS = {
    ("benchmarks/README.md", "benchmarks/pypto"): "dsa-solver's held-out set, not vendored",
    ("docs/memory_passes.md", "docs/en/dev/passes"): "a folder of the PyPTO repository",
    ("docs/CONVENTIONS.md", "benchmarks/x_bench.cc"): "a pattern (x stands for the component)",
}


def is_target(root, token):
    """`pkg/name` naming the Bazel target name of package pkg."""
    package, name = os.path.split(token)
    build = os.path.join(root, package, "BUILD.bazel")
    if not os.path.exists(build):
        return False
    with open(build, encoding="utf-8") as f:
        return re.search(r'name = "%s"' % re.escape(name), f.read()) is not None
PATHISH = re.compile(r"^[A-Za-z0-9_./-]+$")


def candidates(text):
    for match in SPAN.finditer(text):
        token = match.group(1).strip()
        if not PATHISH.match(token) or "/" not in token or "..." in token:
            continue
        head = token.split("/", 1)[0]
        if head not in TOP:
            continue
        yield match.start(), token.rstrip("/").rstrip(".")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", default=".")
    args = parser.parse_args()
    root = os.path.abspath(args.root)
    documents = []
    for dirpath, dirnames, filenames in os.walk(root):
        rel = os.path.relpath(dirpath, root)
        dirnames[:] = [d for d in dirnames
                       if not d.startswith((".", "bazel-")) and
                       not (rel == "." and d == "third_party")]
        for name in filenames:
            if name == "README.md" or (rel.split(os.sep)[0] == "docs" and name.endswith(".md")):
                documents.append(os.path.join(dirpath, name))
    problems = 0
    for path in sorted(documents):
        with open(path, encoding="utf-8") as f:
            text = f.read()
        for offset, token in candidates(text):
            if os.path.exists(os.path.join(root, token)) or is_target(root, token):
                continue
            if (os.path.relpath(path, root), token) in NOT_OURS:
                continue
            line = text.count("\n", 0, offset) + 1
            print("%s:%d: names `%s`, which does not exist" % (os.path.relpath(path, root), line,
                                                                token))
            problems += 1
    if problems:
        print("%d missing path(s)" % problems)
        return 1
    print("every path named in %d documents exists" % len(documents))
    return 0


if __name__ == "__main__":
    sys.exit(main())
