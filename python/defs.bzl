"""Build macros of the accelmem Python package."""

load("@local_python//:defs.bzl", "ASAN_RUNTIME")

# The package version (also accelmem.__version__; //python:version_test checks they agree).
ACCELMEM_PY_VERSION = "0.1.0"

def accelmem_py_test(name, srcs, deps = [], data = [], size = "small", tags = [], args = []):
    """A unittest/pytest module run with the system interpreter.

    The test imports `accelmem` from //python:accelmem; //python:testing/launcher.py runs it
    (and, under --config=asan, preloads the ASan runtime first). Bazel's implicit `__init__.py`
    files are off (legacy_create_init), so the runfiles tree does not shadow the package.
    """
    launcher = "//python:testing/launcher.py"
    native.py_test(
        name = name,
        srcs = srcs + [launcher],
        main = launcher,
        deps = ["//python:accelmem"] + deps,
        data = data,
        size = size,
        tags = tags,
        args = ["%s/%s" % (native.package_name(), srcs[0])] + args,
        # Under --config=asan the launcher preloads the ASan runtime into the interpreter.
        env = select({
            "//python:asan": {"ACCELMEM_ASAN_PRELOAD": ASAN_RUNTIME},
            "//conditions:default": {},
        }),
        python_version = "PY3",
        srcs_version = "PY3",
        legacy_create_init = False,
    )
