"""Compiler flags shared by every accelmem target (abseil's copts.bzl pattern).

Every `cc_library`/`cc_binary` passes `copts = DEFAULT_COPTS`, every `cc_test` `copts = TEST_COPTS`.
Warnings are turned into errors by `.bazelrc` for accelmem's own files only (`--per_file_copt`), so
a downstream repo that builds us with another compiler is never broken by a new warning.
"""

DEFAULT_COPTS = [
    "-Wall",
    "-Wextra",
    "-Wno-unused-parameter",
    "-Wno-missing-field-initializers",
]

TEST_COPTS = DEFAULT_COPTS + [
    "-Wno-sign-compare",
]

DEFAULT_LINKOPTS = []
