"""Build macros of the accelmem Python package."""

# The package version (also accelmem.__version__; //python:version_test checks they agree).
ACCELMEM_PY_VERSION = "0.1.0"

def accelmem_py_test(name, srcs, deps = [], data = [], size = "small", tags = [], args = []):
    """A unittest/pytest module run with the system interpreter.

    The test imports `accelmem` from //python:accelmem. Bazel's implicit `__init__.py` files are
    off (legacy_create_init), so the runfiles tree does not shadow the package.
    """
    native.py_test(
        name = name,
        srcs = srcs,
        main = srcs[0],
        deps = ["//python:accelmem"] + deps,
        data = data,
        size = size,
        tags = tags,
        args = args,
        python_version = "PY3",
        srcs_version = "PY3",
        legacy_create_init = False,
    )
