"""Runs one test module of the accelmem Python package (the main of every accelmem_py_test).

    launcher.py WORKSPACE_RELATIVE_PATH [test args...]

Normally it just runs the module as __main__. Under --config=asan the extension is built with
AddressSanitizer while the interpreter is not, so the ASan runtime (and libstdc++, whose
`__cxa_throw` ASan intercepts) must be loaded before anything else: when
ACCELMEM_ASAN_PRELOAD is set the launcher re-executes the interpreter once with LD_PRELOAD set to
it (only the Python process gets it, not the test runner's shell tools) and leak detection off
(CPython does not free everything at exit).
"""

import os
import runpy
import sys


def main():
    script = sys.argv.pop(1)
    preload = os.environ.get("ACCELMEM_ASAN_PRELOAD")
    if preload and os.environ.get("LD_PRELOAD") != preload:
        env = dict(os.environ)
        env["LD_PRELOAD"] = preload
        env["ASAN_OPTIONS"] = "detect_leaks=0"
        os.execve(sys.executable, [sys.executable, os.path.abspath(__file__), script] +
                  sys.argv[1:], env)
    path = script
    runfiles = os.environ.get("TEST_SRCDIR") or os.environ.get("RUNFILES_DIR")
    if runfiles and os.path.exists(os.path.join(runfiles, "accelmem", script)):
        path = os.path.join(runfiles, "accelmem", script)
    sys.argv[0] = path
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    runpy.run_path(path, run_name="__main__")


if __name__ == "__main__":
    main()
