#!/usr/bin/env python3
"""Tests of check_layers.py on small synthetic trees (each test states the rule it checks)."""

import os
import subprocess
import sys
import tempfile
import unittest

CHECK = os.path.join(os.path.dirname(os.path.realpath(__file__)), "check_layers.py")

TABLE = """
ir:
passes: ir
sparse_runtime:
runtime: sparse_runtime
runtime/cpu: runtime sparse_runtime
runtime/cuda: runtime sparse_runtime
tools: *
/: *
macros: tools
side compile: ir passes
side runtime: sparse_runtime runtime runtime/cpu runtime/cuda
device: sparse_runtime/device
allow passes/BUILD.bazel: //tools:data.txt
nested namespaces: internal testing
namespace passes/legacy: passes
"""


def run(files, table=TABLE):
    """Writes `files` (path -> text) and the table into a temporary tree; (status, output)."""
    with tempfile.TemporaryDirectory() as root:
        files = dict(files)
        files.setdefault("WORKSPACE", "")
        files["layers.txt"] = table
        for path, text in files.items():
            os.makedirs(os.path.dirname(os.path.join(root, path)) or root, exist_ok=True)
            with open(os.path.join(root, path), "w", encoding="utf-8") as f:
                f.write(text)
        done = subprocess.run(
            [sys.executable, CHECK, "--root=" + root, "--table=" + os.path.join(root, "layers.txt")],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, check=False)
        return done.returncode, done.stdout


class CheckLayersTest(unittest.TestCase):

    def test_include_of_a_lower_folder_is_allowed(self):
        # A folder may include headers of the folders it may use.
        status, out = run({"passes/a.cc": '#include "ir/b.h"\n#include <vector>\n'})
        self.assertEqual(status, 0, out)

    def test_include_of_a_higher_folder_fails_with_file_and_line(self):
        # Using a folder above names the file, the line and the forbidden edge.
        status, out = run({"ir/a.h": '// x\n#include "passes/p.h"\n'})
        self.assertEqual(status, 1, out)
        self.assertIn("ir/a.h:2: folder ir may not use folder passes", out)

    def test_crossing_sides_is_named(self):
        # Compile side and runtime side never use each other, and the message says so.
        status, out = run({"runtime/a.cc": '#include "ir/b.h"\n'})
        self.assertEqual(status, 1, out)
        self.assertIn("compile side and runtime side", out)

    def test_siblings_may_not_use_each_other(self):
        # runtime/cpu may not use runtime/cuda (longest listed prefix names the folder).
        status, out = run({"runtime/cpu/a.cc": '#include "runtime/cuda/d.h"\n'})
        self.assertEqual(status, 1, out)
        self.assertIn("folder runtime/cpu may not use folder runtime/cuda", out)

    def test_build_labels_are_checked_but_not_comments_or_visibility(self):
        # A label in a BUILD string counts; one in a comment or a visibility spec does not.
        build = ('# "//runtime:x" in a comment\n'
                 'cc_library(name = "a", visibility = ["//runtime:__pkg__"])\n'
                 'cc_library(name = "b", deps = ["//runtime:x"])\n')
        status, out = run({"sparse_runtime/BUILD.bazel": build})
        self.assertEqual(status, 1, out)
        self.assertIn("sparse_runtime/BUILD.bazel:3:", out)
        self.assertEqual(out.count("may not use"), 1, out)

    def test_macros_load_from_anywhere_and_listed_exceptions_pass(self):
        # tools/*.bzl may be loaded anywhere; an `allow` line admits one label in one file.
        status, out = run({
            "ir/BUILD.bazel": 'load("//bazel:copts.bzl", "X")\n',
            "passes/BUILD.bazel": 'filegroup(name = "a", srcs = ["//tools:data.txt"])\n',
        })
        self.assertEqual(status, 0, out)
        status, out = run({"ir/BUILD.bazel": 'filegroup(name = "a", srcs = ["//tools:x"])\n'})
        self.assertEqual(status, 1, out)

    def test_device_sources_include_only_device_headers(self):
        # Freestanding sources may not include host headers of their own folder; tests may.
        status, out = run({
            "sparse_runtime/device/a.cc": '#include "sparse_runtime/host.h"\n',
            "sparse_runtime/device/a_test.cc": '#include "sparse_runtime/host.h"\n',
        })
        self.assertEqual(status, 1, out)
        self.assertIn("sparse_runtime/device/a.cc:1: device code", out)
        self.assertNotIn("a_test.cc", out)

    def test_unlisted_folder_fails(self):
        # A new top-level folder must be declared in the table.
        status, out = run({"newfolder/a.cc": "int x;\n"})
        self.assertEqual(status, 1, out)
        self.assertIn("folder newfolder is not in", out)

    def test_misplaced_namespace_fails_with_file_line_and_expected_namespace(self):
        # Code in runtime/cpu must be in accelmem::runtime::cpu, not in another folder's namespace.
        status, out = run({
            "runtime/cpu/a.h": ("#pragma once\nnamespace accelmem {\nnamespace codegen {\n"
                                "class A;\n}  // namespace codegen\n}\n"),
        })
        self.assertEqual(status, 1, out)
        self.assertIn("runtime/cpu/a.h:3: namespace accelmem::codegen does not follow its folder "
                      "(expected accelmem::runtime::cpu", out)

    def test_namespace_of_a_parent_folder_with_code_fails(self):
        # Opening only a prefix of the folder's namespace is fine, declaring things in it is not.
        status, out = run({"runtime/cpu/a.cc": "namespace accelmem::runtime {\nint x;\n}\n"})
        self.assertEqual(status, 1, out)
        self.assertIn("runtime/cpu/a.cc:1: namespace accelmem::runtime does not", out)

    def test_namespaces_that_follow_their_folders_pass(self):
        # Nested and C++17 forms, anonymous and `internal`/`testing` nests, device and internal
        # folders (parent's namespace), testing folders (X_testing), third-party namespaces,
        # aliases, and `namespace` in comments, strings and macros are all fine.
        status, out = run({
            "runtime/cpu/a.cc": ("namespace llvm { class Module; }\n"
                                 "namespace accelmem {\nnamespace runtime {\nnamespace cpu {\n"
                                 "namespace {\nint x;\n}\nnamespace internal { int y; }\n"
                                 "// namespace codegen {\n"
                                 "const char* s = \"namespace codegen {\";\n"
                                 "const char* r = R\"(namespace codegen { )\";\n"
                                 "namespace sr = ::accelmem::sparse_runtime;\n"
                                 "}  // namespace cpu\n}  // namespace runtime\n}\n"),
            "runtime/cuda/b.h": ("#define M(x) \\\n  namespace codegen { int x; }\n"
                                 "namespace accelmem::runtime::cuda { class B {}; }\n"),
            "sparse_runtime/device/c.h": "namespace accelmem {\nnamespace sparse_runtime {\n"
                                         "struct C {};\n}\n}\n",
            "runtime/internal/d.h": "namespace accelmem::runtime::internal { int d; }\n",
            "passes/testing/e.h": "namespace accelmem { namespace passes_testing { int e; } }\n",
            "passes/f_test_util.h": "namespace accelmem::passes::testing { int f; }\n",
            "passes/legacy/g.h": "namespace accelmem::passes { int g; }\n",
            "tools/h.cc": "namespace accelmem { namespace whatever { int h; } }\n",
        })
        self.assertEqual(status, 0, out)

    def test_testing_folder_is_not_a_nested_testing_namespace(self):
        # passes/testing is accelmem::passes_testing (a `testing` namespace would hide ::testing).
        status, out = run(
            {"passes/testing/e.h": "namespace accelmem::passes::testing { int e; }\n"})
        self.assertEqual(status, 1, out)
        self.assertIn("expected accelmem::passes_testing", out)

    def test_cycle_in_the_table_is_rejected(self):
        # The table itself must be acyclic.
        status, out = run({}, table="ir: passes\npasses: ir\n/: *\n")
        self.assertEqual(status, 2, out)
        self.assertIn("cycle", out)

    def test_internal_package_may_use_a_lower_library_of_its_folder(self):
        # passes/internal may include passes/liveness.h: liveness does not use passes/internal.
        status, out = run({
            "passes/internal/BUILD.bazel": "",
            "passes/internal/steps.h": '#include "passes/liveness.h"\n',
            "passes/liveness.h": '#include "ir/b.h"\n',
            "passes/pass.cc": '#include "passes/internal/steps.h"\n',
        })
        self.assertEqual(status, 0, out)

    def test_internal_package_using_its_user_back_fails_with_the_chain(self):
        # planner.cc uses internal/search.h, whose header includes planner.h back: a loop between
        # a folder and its internal package, which the folder table cannot see.
        status, out = run({
            "passes/internal/BUILD.bazel": "",
            "passes/internal/search.h": '#include "passes/planner.h"\n',
            "passes/planner.h": "",
            "passes/planner.cc": '#include "passes/planner.h"\n#include "passes/internal/search.h"\n',
        })
        self.assertEqual(status, 1, out)
        self.assertIn("passes/internal/search.h:1: passes/internal includes passes/planner.h", out)
        self.assertIn("passes/planner -> passes/internal/search", out)

    def test_tests_and_private_sources_take_no_part_in_the_internal_rule(self):
        # A test of the folder may include both; an internal/ folder without a BUILD file holds
        # private sources of the folder's own target (one library with it).
        status, out = run({
            "passes/internal/BUILD.bazel": "",
            "passes/internal/search.h": '#include "passes/planner.h"\n',
            "passes/planner.h": "",
            "passes/planner_test.cc": '#include "passes/internal/search.h"\n',
            "ir/internal/impl.h": '#include "ir/builder.h"\n',
            "ir/builder.cc": '#include "ir/internal/impl.h"\n',
        })
        self.assertEqual(status, 0, out)


if __name__ == "__main__":
    unittest.main()
