#!/usr/bin/env python3
"""Tests of check_guides.py on small synthetic trees (each test states the rule it checks)."""

import os
import subprocess
import sys
import tempfile
import unittest

CHECK = os.path.join(os.path.dirname(os.path.realpath(__file__)), "check_guides.py")

# A tree with one dispatch site of "kWidget" in each of two folders, the widget's own file, a
# test and a file outside the scanned kinds that mention it too.
TREE = {
    "WORKSPACE": "",
    "core/registry.cc": "switch (k) { case Kind::kWidget: break; }\n",
    "core/widget.h": "struct Widget {};  // Kind::kWidget\n",
    "core/BUILD.bazel": 'cc_library(name = "widget")\n',
    "bind/module.cc": "m.def(\"widget\", Kind::kWidget);\n",
    "core/registry_test.cc": "EXPECT_EQ(Kind::kWidget, k);\n",
    "core/testing/fake.cc": "Kind::kWidget\n",
    "docs/widgets.md": "Kind::kWidget in prose\n",
    "bazel-out/core/registry.cc": "Kind::kWidget\n",
    "third_party/lib/BUILD": "# Kind::kWidget\n",
}

GUIDE = """# Adding a widget

<!-- guide-check: regex=Kind::kWidget\\b paths=core,bind -->

## Files to touch

1. `core/<name>.h` (new): the widget.
2. `core/registry.cc`: a case for it.
   More words about the case, on a continuation line.
3. `bind/module.cc`: the binding.
4. `core/widget.h`: the example to copy.
5. `core/registry_test.cc`: a test (tests are listed by hand).
6. `docs/widgets.md`: the page.

## Afterwards

- not a path, and not checked: this section is not the list.
"""


def run(files, guides=None, args=None):
    """Writes `files` into a temporary tree and checks `guides` (default: all); (status, output)."""
    with tempfile.TemporaryDirectory() as root:
        for path, text in files.items():
            full = os.path.join(root, path)
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, "w", encoding="utf-8") as f:
                f.write(text)
        command = [sys.executable, CHECK, "--root=" + root]
        command += [os.path.join(root, g) for g in (guides or [])]
        command += args or []
        done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              check=False)
        return done.returncode, done.stdout


def tree(guide=GUIDE, **extra):
    files = dict(TREE)
    files["docs/guides/adding_a_widget.md"] = guide
    for path, text in extra.items():
        files[path.replace("__", "/")] = text
    return files


class CheckGuidesTest(unittest.TestCase):

    def test_complete_guide_passes(self):
        # Every matching source file is listed and every listed path exists (or is a new file in
        # an existing folder); tests, docs, bazel-* and third_party are not scanned.
        status, out = run(tree())
        self.assertEqual(status, 0, out)
        self.assertIn("guides ok: 1 guides list 6 files to touch and 0 models to read", out)

    def test_unlisted_dispatch_site_fails(self):
        # A new file that handles every kind (it matches the marker) must be in the list.
        status, out = run(tree(**{"core__printer.cc": "case Kind::kWidget: return \"w\";\n"}))
        self.assertEqual(status, 1, out)
        self.assertIn("docs/guides/adding_a_widget.md:3: core/printer.cc matches the marker "
                      "(line 1: 'Kind::kWidget') but is not in '## Files to touch'", out)

    def test_models_to_read_cover_matches_but_are_not_files_to_touch(self):
        # widget.h is the example to copy, not a file to edit: under "## Models to read" it
        # still covers the marker's match, and it is counted apart; listed in both, it fails.
        guide = GUIDE.replace("4. `core/widget.h`: the example to copy.\n", "").replace(
            "## Afterwards", "## Models to read\n\n- `core/widget.h`: the example to copy.\n\n"
            "## Afterwards")
        status, out = run(tree(guide=guide))
        self.assertEqual(status, 0, out)
        self.assertIn("guides ok: 1 guides list 5 files to touch and 1 models to read", out)
        both = GUIDE.replace("## Afterwards", "## Models to read\n\n- `core/widget.h`: again.\n\n"
                             "## Afterwards")
        status, out = run(tree(guide=both))
        self.assertEqual(status, 1, out)
        self.assertIn("core/widget.h is both a file to touch (line 11) and a model to read", out)
        gone = guide.replace("- `core/widget.h`: the example to copy.",
                             "- `core/gone.h`: the example to copy.")
        status, out = run(tree(guide=gone))
        self.assertEqual(status, 1, out)
        self.assertIn("listed path core/gone.h does not exist", out)
        self.assertIn("core/widget.h matches the marker", out)

    def test_nonexistent_listed_path_fails(self):
        # A listed file that does not exist (renamed, moved, mistyped) is reported with its line.
        guide = GUIDE.replace("`bind/module.cc`: the binding.\n",
                              "`bind/module.cc`: the binding.\n7. `bind/gone.cc`: moved away.\n")
        status, out = run(tree(guide=guide))
        self.assertEqual(status, 1, out)
        self.assertIn("docs/guides/adding_a_widget.md:11: listed path bind/gone.cc does not exist",
                      out)

    def test_missing_file_and_nonexistent_path_are_both_reported(self):
        # Both kinds of drift at once: one unlisted match, one listed path that is gone.
        guide = GUIDE.replace("3. `bind/module.cc`: the binding.\n",
                              "3. `bind/old_module.cc`: the binding.\n")
        status, out = run(tree(guide=guide))
        self.assertEqual(status, 1, out)
        self.assertIn("bind/module.cc matches the marker", out)
        self.assertIn("listed path bind/old_module.cc does not exist", out)
        self.assertIn("2 problem(s)", out)

    def test_new_file_in_missing_folder_fails(self):
        # A placeholder path needs its folder to exist.
        guide = GUIDE.replace("`core/<name>.h`", "`kore/<name>.h`")
        status, out = run(tree(guide=guide))
        self.assertEqual(status, 1, out)
        self.assertIn("the folder kore/ of new file kore/<name>.h does not exist", out)

    def test_paths_limit_the_scan(self):
        # A match outside the marker's paths is not required in the list.
        status, out = run(tree(**{"tools__widget_tool.cc": "Kind::kWidget\n"}))
        self.assertEqual(status, 0, out)

    def test_scanned_kinds_include_build_python_and_shell_files(self):
        # BUILD files, .bzl, .py, .pyi and .sh are dispatch sites too; Markdown and data are not.
        for path in ("core/sub/BUILD", "core/defs.bzl", "bind/w.py", "bind/w.pyi", "core/gen.sh"):
            status, out = run(tree(**{path.replace("/", "__"): "Kind::kWidget\n"}))
            self.assertEqual(status, 1, path + ": " + out)
            self.assertIn(path + " matches the marker", out)
        status, out = run(tree(**{"core__notes.md": "Kind::kWidget\n",
                                  "core__case.tile": "Kind::kWidget\n"}))
        self.assertEqual(status, 0, out)

    def test_test_files_are_not_scanned(self):
        # Tests and test support are not dispatch sites: *test* names, testing/ and tests/ folders.
        status, out = run(tree(**{"core__widget_test_util.h": "Kind::kWidget\n",
                                  "bind__tests__w.py": "Kind::kWidget\n"}))
        self.assertEqual(status, 0, out)

    def test_markers_may_span_lines_and_each_is_checked(self):
        # A marker's fields may be on several lines; a second marker with its own paths is
        # checked on its own (here it finds a file the list leaves out).
        guide = GUIDE.replace("<!-- guide-check: regex=Kind::kWidget\\b paths=core,bind -->",
                              "<!-- guide-check:\n     regex=Kind::kWidget\\b\n"
                              "     paths=core,bind -->\n"
                              "<!-- guide-check: regex=WidgetTool paths=tools -->")
        status, out = run(tree(guide=guide, **{"tools__w.cc": "WidgetTool\n"}))
        self.assertEqual(status, 1, out)
        self.assertIn("adding_a_widget.md:6: tools/w.cc matches the marker", out)
        self.assertEqual(out.count("matches the marker"), 1, out)

    def test_guide_without_marker_or_list_fails(self):
        # A guide must declare its marker and its list.
        status, out = run(tree(guide="# Adding a widget\n\nNo marker, no list.\n"))
        self.assertEqual(status, 1, out)
        self.assertIn("no <!-- guide-check: regex=... --> marker", out)
        self.assertIn("no '## Files to touch' section", out)

    def test_marker_that_matches_nothing_fails(self):
        # A marker that finds no dispatch site is stale (renamed kind) or mistyped.
        guide = GUIDE.replace("regex=Kind::kWidget\\b", "regex=Kind::kGadget\\b")
        status, out = run(tree(guide=guide))
        self.assertEqual(status, 1, out)
        self.assertIn("matches no file", out)

    def test_malformed_items_and_markers_fail(self):
        # Every list item starts with a backticked path; paths are listed once; marker fields are
        # KEY=VALUE with known keys and a regex that compiles.
        guide = GUIDE.replace("6. `docs/widgets.md`: the page.\n",
                              "6. `docs/widgets.md`: the page.\n7. the page again\n"
                              "8. `core/registry.cc` again\n")
        guide = guide.replace("paths=core,bind", "paths=core,bind colour=blue")
        guide += "<!-- guide-check: regex=([ -->\n"
        status, out = run(tree(guide=guide))
        self.assertEqual(status, 1, out)
        self.assertIn("list item does not start with a backticked path: the page again", out)
        self.assertIn("core/registry.cc is listed twice (first on line 8)", out)
        self.assertIn("unknown marker field 'colour'", out)
        self.assertIn("does not compile", out)

    def test_explicit_guides_and_root_without_workspace(self):
        # Guides can be named on the command line; a root without WORKSPACE is refused.
        status, out = run(tree(), guides=["docs/guides/adding_a_widget.md"])
        self.assertEqual(status, 0, out)
        files = tree()
        del files["WORKSPACE"]
        status, out = run(files)
        self.assertEqual(status, 2, out)
        self.assertIn("not the repository root", out)


if __name__ == "__main__":
    unittest.main()
