#!/usr/bin/env python3
"""Checks accelmem's folder layering (tools/layering/layers.txt) on the source tree.

Scans every `#include "..."` of the C++ sources and headers and every label (`"//pkg:target"`,
`"@accelmem//pkg:target"`) and load() of the BUILD and .bzl files, and reports each use of a
folder that the table does not allow, as `file:line: folder A may not use folder B (...)`.
Also checks that the `namespace` declarations of the C++ files of the compile side and the runtime
side follow their folders (the rule is in layers.txt), as `file:line: namespace X in folder F
(expected Y)`.

    python3 tools/layering/check_layers.py [--root=DIR] [--table=FILE]

Exit status 0 when every use is allowed, 1 otherwise, 2 on a bad table.
"""

import argparse
import fnmatch
import os
import re
import sys

CPP_EXTENSIONS = (".h", ".cc", ".cpp", ".c", ".inc")
BUILD_NAMES = ("BUILD", "BUILD.bazel", "WORKSPACE")
SKIP_DIRS = (".git",)
INCLUDE_RE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
# A label in a string: "//pkg:name", "//pkg", "@accelmem//pkg:name" (other repositories are
# external code and not checked).
LABEL_RE = re.compile(r'"(?:@accelmem)?//([A-Za-z0-9_./+-]*)(?::([^"]*))?"')


class Table:
    """The parsed layers.txt."""

    def __init__(self):
        self.allowed = {}  # folder -> set of folders it may use ("*" = any)
        self.order = []  # folders in file order
        self.every = set()  # folders every folder may use
        self.sides = {}  # folder -> side name
        self.device = []  # folders of freestanding code
        self.macros = set()  # folders whose .bzl files any BUILD file may load
        self.exceptions = {}  # file -> set of labels it may name regardless of the table
        self.namespaces = {}  # folder -> its namespace below accelmem ("a::b"), overriding the rule
        self.nested = ["internal"]  # namespaces that may nest anywhere (fnmatch patterns)


def parse_table(path):
    table = Table()
    with open(path, encoding="utf-8") as f:
        for number, raw in enumerate(f, 1):
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            if ":" not in line:
                raise ValueError("%s:%d: expected 'FOLDER: FOLDERS'" % (path, number))
            key, value = (part.strip() for part in line.split(":", 1))
            folders = value.split()
            if key == "every":
                table.every.update(folders)
            elif key.startswith("side "):
                for folder in folders:
                    table.sides[folder] = key[len("side "):].strip()
            elif key == "device":
                table.device.extend(folders)
            elif key == "macros":
                table.macros.update(folders)
            elif key == "nested namespaces":
                table.nested = folders
            elif key.startswith("namespace "):
                if len(folders) != 1:
                    raise ValueError("%s:%d: expected 'namespace FOLDER: NAMESPACE'" %
                                     (path, number))
                table.namespaces[key[len("namespace "):].strip()] = folders[0]
            elif key.startswith("allow "):
                table.exceptions.setdefault(key[len("allow "):].strip(), set()).update(folders)
            else:
                if key in table.allowed:
                    raise ValueError("%s:%d: folder %s listed twice" % (path, number, key))
                table.allowed[key] = set(folders)
                table.order.append(key)
    for folder, uses in table.allowed.items():
        for used in uses:
            if used != "*" and used not in table.allowed:
                raise ValueError("%s: %s may use %s, which is not listed" % (path, folder, used))
    cycle = find_cycle(table)
    if cycle:
        raise ValueError("%s: the table has a cycle: %s" % (path, " -> ".join(cycle)))
    return table


def find_cycle(table):
    """A cycle among the explicitly allowed uses (not '*'), or None."""
    state = {}

    def visit(folder, path):
        state[folder] = "open"
        for used in sorted(table.allowed.get(folder, ())):
            if used == "*" or used == folder:
                continue
            if state.get(used) == "open":
                return path + [folder, used]
            if used not in state:
                found = visit(used, path + [folder])
                if found:
                    return found
        state[folder] = "done"
        return None

    for folder in table.order:
        if folder not in state:
            found = visit(folder, [])
            if found:
                return found
    return None


def folder_of(path, table):
    """The longest listed folder that contains `path` ("/" for the root), or None."""
    parts = path.split("/")
    for n in range(len(parts), 0, -1):
        candidate = "/".join(parts[:n])
        if candidate in table.allowed:
            return candidate
    return None


def may_use(user, used, table):
    if user == used or used in table.every:
        return True
    allowed = table.allowed[user]
    return "*" in allowed or used in allowed


def reason(user, used, table):
    allowed = sorted(table.allowed[user])
    why = "%s may use only: %s" % (user, ", ".join(allowed) if allowed else "nothing of ours")
    if table.sides.get(user) and table.sides.get(used) and table.sides[user] != table.sides[used]:
        why += "; compile side and runtime side never use each other"
    elif user in table.allowed.get(used, ()) or used in table.allowed.get(user, ()):
        pass
    elif table.sides.get(user) == table.sides.get(used) and user.split("/")[0] == used.split(
            "/")[0]:
        why += "; sibling folders do not use each other"
    return why


def is_device_source(path, table):
    if path.endswith("_test.cc"):
        return False
    return any(path.startswith(d + "/") and "/" not in path[len(d) + 1:] for d in table.device)


def in_device_folder(path, table):
    return any(path.startswith(d + "/") for d in table.device)


def uses_of(rel, text):
    """(line, used path, kind, text) for every repository path a file names."""
    uses = []
    if rel.endswith(CPP_EXTENSIONS):
        for number, line in enumerate(text.splitlines(), 1):
            m = INCLUDE_RE.match(line)
            if m:
                uses.append((number, m.group(1), "include", m.group(1)))
    else:
        for number, line in enumerate(text.splitlines(), 1):
            code = strip_comment(line)
            for m in LABEL_RE.finditer(code):
                package, name = m.group(1), m.group(2) or ""
                if name.startswith("__"):  # visibility: //pkg:__pkg__, //pkg:__subpackages__
                    continue
                if package == "visibility":
                    continue
                uses.append((number, package + "/" if package else "/", "label", m.group(0)))
    return uses


def strip_comment(line):
    """The line without a trailing '#' comment (a '#' inside a string is kept)."""
    quote = None
    for i, c in enumerate(line):
        if quote:
            if c == quote:
                quote = None
        elif c in "\"'":
            quote = c
        elif c == "#":
            return line[:i]
    return line

# The namespace rule (layers.txt documents it): code in folder X/Y is in accelmem::X::Y; a `device`
# or `internal` folder keeps its parent's namespace, a `testing` folder X/testing is in
# accelmem::X_testing; `namespace FOLDER: NS` lines override a folder and its subfolders.
def expected_namespace(directory, table):
    """The namespace (below accelmem, components) the C++ code of `directory` must be in."""
    parts = directory.split("/") if directory else []
    for n in range(len(parts), 0, -1):
        folder = "/".join(parts[:n])
        if folder in table.namespaces:
            base = table.namespaces[folder].split("::")
            return base + namespace_components(parts[n:], base)
    return namespace_components(parts, [])


def namespace_components(parts, base):
    result = list(base)
    for part in parts:
        if part in ("device", "internal"):
            continue
        if part == "testing" and result:
            result[-1] += "_testing"
            continue
        result.append(part)
    return result[len(base):]


NAMESPACE_RE = re.compile(r"\bnamespace\b\s*((?:[A-Za-z_]\w*\s*::\s*)*[A-Za-z_]\w*)?\s*(\{|=)")


def strip_cpp(text):
    """`text` with comments, string and character literals and preprocessor lines blanked (line
    breaks kept, so offsets still give line numbers)."""
    out = []
    i, n = 0, len(text)
    line_start = True
    while i < n:
        c = text[i]
        if line_start and c in " \t":
            out.append(c)
            i += 1
            continue
        if line_start and c == "#":  # a preprocessor line, with its continuations
            while i < n and text[i] != "\n":
                if text[i] == "\\" and i + 1 < n and text[i + 1] == "\n":
                    out.append(" \n")
                    i += 2
                    continue
                out.append(" ")
                i += 1
            continue
        line_start = c == "\n"
        if text.startswith("//", i):
            while i < n and text[i] != "\n":
                out.append(" ")
                i += 1
            continue
        if text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out.append(re.sub(r"[^\n]", " ", text[i:end]))
            i = end
            continue
        m = re.match(r'(?:u8|u|U|L)?R"([^(\s]*)\(', text[i:i + 40]) if c in 'uULR' else None
        if m and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            end = text.find(")" + m.group(1) + '"', i + m.end())
            end = n if end < 0 else end + len(m.group(1)) + 2
            out.append(re.sub(r"[^\n]", " ", text[i:end]))
            i = end
            continue
        if c == '"' or (c == "'" and not (i > 0 and text[i - 1].isalnum())):
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(" " * (min(j + 1, n) - i))
            i = j + 1
            continue
        out.append(c)
        i += 1
    return "".join(out)


def namespace_errors(rel, text, table):
    """The namespace blocks of a C++ file that do not follow its folder."""
    expected = expected_namespace(os.path.dirname(rel), table)
    code = strip_cpp(text)
    errors = []
    # The stack of open braces: for a namespace block [components, line, has code of its own],
    # None for any other brace.
    stack = []
    reported = set()
    i = 0
    n = len(code)
    while i < n:
        c = code[i]
        if c == "n":
            m = NAMESPACE_RE.match(code, i)
            if m and (i == 0 or not (code[i - 1].isalnum() or code[i - 1] == "_")):
                if m.group(2) == "=":  # an alias
                    i = m.end()
                    continue
                names = [x.strip() for x in (m.group(1) or "").split("::")]
                frames = [frame for frame in stack if frame is not None]
                outer = frames[-1][0] if frames else []
                stack.append([outer + names, code.count("\n", 0, i) + 1, False])
                i = m.end()
                continue
        if c == "{":
            if stack and stack[-1] is not None:
                stack[-1][2] = True
            stack.append(None)
        elif c == "}":
            if stack:
                frame = stack.pop()
                if frame is not None:
                    error = check_namespace(frame, expected, table)
                    if error and error not in reported:  # once per file and namespace
                        reported.add(error)
                        errors.append((frame[1], "%s:%d: %s" % (rel, frame[1], error)))
        elif not c.isspace() and c != ";" and stack and stack[-1] is not None:
            stack[-1][2] = True
        i += 1
    return [error for _, error in sorted(errors)]


def check_namespace(frame, expected, table):
    """Why the namespace block `frame` breaks the rule, or None."""
    path, _, has_code = frame
    if not path or path[0] != "accelmem":
        return None  # anonymous at the top, or not ours (llvm, std specializations)
    ours = [x for x in path[1:] if x]  # anonymous namespaces nest anywhere
    depth = 0
    while depth < len(ours) and depth < len(expected) and ours[depth] == expected[depth]:
        depth += 1
    rest = ours[depth:]
    nested_ok = all(any(fnmatch.fnmatchcase(x, p) for p in table.nested) for x in rest)
    if depth == len(expected) and nested_ok:
        return None
    if depth == len(ours) and not has_code:
        return None  # opens a prefix of the expected namespace only to nest into it
    if depth < len(expected) and nested_ok and rest and not has_code:
        return None
    spelled = "::".join(["accelmem"] + ours)
    want = "::".join(["accelmem"] + expected)
    return ("namespace %s does not follow its folder (expected %s, optionally with a nested %s "
            "namespace; see the namespace rule in tools/layering/layers.txt)" %
            (spelled, want, " / ".join(table.nested)))


def component(path):
    """A file's component: name.h and name.cc of one folder are one library."""
    return os.path.splitext(path)[0]


def is_test_source(path):
    """Tests and test helpers (name_test.cc, name_testing.h/.cc) sit beside the libraries they
    check; nothing of the library includes them, so they take no part in its layering."""
    stem = os.path.splitext(os.path.basename(path))[0]
    return stem.endswith("_test") or stem.endswith("_testing") or "_test_" in stem


def internal_errors(includes, packages):
    """Arrows back up between a folder X and its X/internal package, from `includes` (file ->
    [(line, included path)] of every C++ file); `packages` holds the folders with a BUILD file. (An
    internal/ folder without a BUILD file holds private sources of X's own targets, one library
    with them, as codegen/internal is.) An internal library may use a library of X only if that
    one does not use X/internal itself, directly or through other libraries of the two folders:
    X/internal sits below X, so a library of X that uses it is above it, and an internal library
    that uses it back closes a loop the folder table cannot see (both are one folder there)."""
    errors = []
    internal_dirs = sorted({os.path.dirname(f) for f in includes
                            if os.path.basename(os.path.dirname(f)) == "internal"
                            and os.path.dirname(f) in packages})
    for inner in internal_dirs:
        outer = os.path.dirname(inner)
        def member(path):
            return os.path.dirname(path) in (outer, inner) and not is_test_source(path)
        edges = {}
        for f, uses in includes.items():
            if not member(f):
                continue
            for _, used in uses:
                if member(used) and component(used) != component(f):
                    edges.setdefault(component(f), set()).add(component(used))
        def reaches_inner(start):
            seen, stack = set(), [(start, [start])]
            while stack:
                node, path = stack.pop()
                for nxt in sorted(edges.get(node, ())):
                    if os.path.dirname(nxt) == inner:
                        return path + [nxt]
                    if nxt not in seen:
                        seen.add(nxt)
                        stack.append((nxt, path + [nxt]))
            return None
        for f in sorted(includes):
            if os.path.dirname(f) != inner or is_test_source(f):
                continue
            for number, used in includes[f]:
                if os.path.dirname(used) != outer or not used.endswith(".h"):
                    continue
                chain = reaches_inner(component(used))
                if chain:
                    errors.append(
                        "%s:%d: %s includes %s, which uses %s back (%s): an arrow back up; move "
                        "what both need below %s" % (f, number, inner, used, inner,
                                                     " -> ".join(chain), inner))
    return errors


def check(root, table):
    """The forbidden uses under `root`, and how many files were read."""
    errors = []
    scanned = 0
    includes = {}  # C++ file -> [(line, included repository path)]
    packages = set()  # folders with a BUILD file
    for dirpath, dirnames, filenames in os.walk(root):
        rel_dir = os.path.relpath(dirpath, root)
        rel_dir = "" if rel_dir == "." else rel_dir
        dirnames[:] = sorted(
            d for d in dirnames
            if d not in SKIP_DIRS and not d.startswith("bazel-") and not d.startswith(".")
            # A nested workspace (examples/consumer) is checked as part of its folder.
        )
        if any(name in ("BUILD", "BUILD.bazel") for name in filenames):
            packages.add(rel_dir)
        for name in sorted(filenames):
            if not (name.endswith(CPP_EXTENSIONS) or name in BUILD_NAMES or name.endswith(".bzl")):
                continue
            rel = os.path.join(rel_dir, name) if rel_dir else name
            user = folder_of(rel, table) if rel_dir else "/"
            if user is None:
                errors.append("%s:1: folder %s is not in tools/layering/layers.txt" %
                              (rel, rel_dir.split("/")[0]))
                continue
            with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
                text = f.read()
            scanned += 1
            if rel.endswith(CPP_EXTENSIONS) and table.sides.get(user):
                errors.extend(namespace_errors(rel, text, table))
            device_source = is_device_source(rel, table)
            if rel.endswith(CPP_EXTENSIONS):
                includes[rel] = [(number, used_path) for number, used_path, kind, _ in
                                 uses_of(rel, text) if kind == "include"]
            for number, used_path, kind, spelled in uses_of(rel, text):
                used = folder_of(used_path.rstrip("/"), table) if used_path != "/" else "/"
                if used is None:
                    continue  # not one of our folders (abseil, LLVM, googletest, ...)
                label = spelled.strip('"')
                if kind == "label" and used in table.macros and label.endswith(".bzl"):
                    continue  # build macros may be loaded from anywhere
                if label in table.exceptions.get(rel, ()):
                    continue
                if not may_use(user, used, table):
                    errors.append("%s:%d: folder %s may not use folder %s (%s %s; %s)" %
                                  (rel, number, user, used, kind, used_path.rstrip("/"),
                                   reason(user, used, table)))
                elif device_source and kind == "include" and not in_device_folder(
                        used_path, table):
                    errors.append(
                        "%s:%d: device code may include only device headers (%s): %s" %
                        (rel, number, ", ".join(table.device), used_path))
    errors.extend(internal_errors(includes, packages))
    return errors, scanned


def main():
    here = os.path.dirname(os.path.realpath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", default=os.path.dirname(os.path.dirname(here)))
    parser.add_argument("--table", default=os.path.join(here, "layers.txt"))
    args = parser.parse_args()
    try:
        table = parse_table(args.table)
    except ValueError as e:
        print("error: %s" % e, file=sys.stderr)
        return 2
    if not os.path.isfile(os.path.join(args.root, "WORKSPACE")):
        print("error: %s is not the repository root (no WORKSPACE)" % args.root, file=sys.stderr)
        return 2
    errors, scanned = check(args.root, table)
    for error in errors:
        print(error)
    if errors:
        print("%d problem(s); the allowed uses and the namespace rule are in %s" %
              (len(errors), args.table))
        return 1
    print("layering ok: the includes, labels and namespaces of %d files under %s follow %s" %
          (scanned, args.root, args.table))
    return 0


if __name__ == "__main__":
    sys.exit(main())
