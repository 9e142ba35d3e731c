"""accelmem_cc_fuzzer: a libFuzzer target, its `bazel run` wrapper and its regression test.

    accelmem_cc_fuzzer(
        name = "parser_fuzzer",
        srcs = ["parser_fuzzer.cc"],      # defines LLVMFuzzerTestOneInput
        deps = [...],
        corpus = [":corpus"],             # seed inputs (files)
    )

makes
  - `name`: `bazel run --config=fuzz //pkg:name -- [libFuzzer flags]` fuzzes with a corpus kept in
    $ACCELMEM_FUZZ_DIR/name/corpus (default /tmp/accelmem_fuzz), seeded from `corpus`, and writes
    crash/leak/timeout reproducers to $ACCELMEM_FUZZ_DIR/name/artifacts/. Given input files
    instead, it runs just those (to reproduce a finding). See docs/fuzzing.md.
  - `name_bin`: the fuzz binary. With --config=fuzz (clang, define accelmem_fuzz=1) it links
    libFuzzer; with the default compiler it links //tools:fuzz_standalone_main instead, which runs
    the entry point once per file given, so `bazel build //...` builds it with gcc too.
  - `name_regression_test`: a cc_test (any compiler) that runs the entry point on every corpus
    file, then on `mutations` deterministic mutants of them.
  - `name_lib`: the entry point as an alwayslink library; `name_corpus`: the initial corpus files.
"""

load("//bazel:copts.bzl", "DEFAULT_COPTS")

def accelmem_cc_fuzzer(
        name,
        srcs,
        deps = [],
        corpus = [],
        fuzz_args = [],
        dictionary = None,
        mutations = 2000,
        copts = DEFAULT_COPTS,
        test_size = "small",
        visibility = None):
    """Declares a fuzz target; see the file comment for the targets it makes.

    Args:
      name: the `bazel run` target; the others are name_bin, name_lib, name_regression_test.
      srcs: sources defining `extern "C" int LLVMFuzzerTestOneInput(const uint8_t*, size_t)`.
      deps: libraries of the code under test.
      corpus: labels of seed input files (filegroups, generated files).
      fuzz_args: default libFuzzer flags of `bazel run` (-max_len=..., -timeout=...); flags given
        after `--` on the command line come later and win.
      dictionary: label of a libFuzzer dictionary file (`-dict=`) for `bazel run`.
      mutations: how many mutants of the corpus the regression test runs.
      copts: compiler flags of the entry point.
      test_size: size of the regression test.
      visibility: visibility of the `bazel run` target.
    """
    lib = name + "_lib"
    native.filegroup(
        name = name + "_corpus",
        testonly = True,
        srcs = corpus,
    )
    native.cc_library(
        name = lib,
        testonly = True,
        srcs = srcs,
        copts = copts,
        deps = deps,
        alwayslink = True,
    )
    native.cc_binary(
        name = name + "_bin",
        testonly = True,
        linkopts = select({
            "//tools:fuzz_build": ["-fsanitize=fuzzer"],
            "//conditions:default": [],
        }),
        deps = [":" + lib] + select({
            "//tools:fuzz_build": [],
            "//conditions:default": ["//tools:fuzz_standalone_main"],
        }),
    )
    dict_args = ["-dict=$(rootpath %s)" % dictionary] if dictionary else []
    native.sh_binary(
        name = name,
        testonly = True,
        srcs = ["//tools:run_fuzzer.sh"],
        args = ["$(rootpath :%s_bin)" % name, name, "$(rootpaths :%s_corpus)" % name, "--"] +
               dict_args + fuzz_args + ["--"],
        data = [
            ":" + name + "_bin",
            ":" + name + "_corpus",
        ] + ([dictionary] if dictionary else []),
        visibility = visibility,
    )
    native.cc_test(
        name = name + "_regression_test",
        size = test_size,
        args = ["--mutations=%d" % mutations, "$(rootpaths :%s_corpus)" % name],
        data = [":" + name + "_corpus"],
        deps = [
            ":" + lib,
            "//tools:fuzz_regression_test_main",
        ],
    )
