"""A repository rule for the system Python 3 (Debian's python3 and python3-dev).

Runs /usr/bin/python3 once to learn its include directory and extension suffix, symlinks the
headers to include/ and the interpreter to bin/python3, and writes `defs.bzl` with the facts
that BUILD files need (PYTHON_EXTENSION_SUFFIX, PYTHON_VERSION, PYTHON_ABI_TAG). Nothing is
downloaded; a missing interpreter or missing headers are a clear error naming the packages.
"""

_PROBE = """
import sys, sysconfig
print(sysconfig.get_paths()["include"])
print(sysconfig.get_config_var("EXT_SUFFIX"))
print("%d.%d" % sys.version_info[:2])
print("cp%d%d" % sys.version_info[:2])
print(sysconfig.get_platform().replace("-", "_").replace(".", "_"))
"""

def _python_configure_impl(ctx):
    python = ctx.attr.interpreter
    if not ctx.path(python).exists:
        fail("@%s: %s not found. Run ./bazelw, which installs python3-dev." % (ctx.name, python))
    result = ctx.execute([python, "-c", _PROBE])
    if result.return_code != 0:
        fail("@%s: %s failed: %s" % (ctx.name, python, result.stderr))
    include, ext_suffix, version, abi, platform = result.stdout.strip().split("\n")
    if not ctx.path(include + "/Python.h").exists:
        fail(("@%s: %s/Python.h not found. Run ./bazelw, which installs the Debian packages " +
              "accelmem needs (python3-dev).") % (ctx.name, include))
    # The ASan runtime, preloaded into the (uninstrumented) interpreter when the extension is
    # built with --config=asan.
    # ASan intercepts libstdc++'s __cxa_throw, so libstdc++ is preloaded right after it.
    preload = []
    gcc = ctx.which("gcc")
    if gcc:
        for lib in ["libasan.so", "libstdc++.so"]:
            found = ctx.execute([gcc, "-print-file-name=" + lib])
            if found.return_code == 0 and found.stdout.strip().startswith("/"):
                preload.append(str(ctx.path(found.stdout.strip()).realpath))
    asan = ":".join(preload) if len(preload) == 2 else ""
    ctx.file("WORKSPACE", 'workspace(name = "%s")\n' % ctx.name)
    ctx.symlink(ctx.attr.build_file, "BUILD.bazel")
    ctx.symlink(include, "include")
    ctx.symlink(python, "bin/python3")
    ctx.file("defs.bzl", "\n".join([
        '"""Facts about the system Python (written by python_configure)."""',
        "",
        'PYTHON_INTERPRETER = "%s"' % python,
        'PYTHON_EXTENSION_SUFFIX = "%s"' % ext_suffix,
        'PYTHON_VERSION = "%s"' % version,
        'PYTHON_ABI_TAG = "%s"' % abi,
        'PYTHON_PLATFORM_TAG = "%s"' % platform,
        'ASAN_RUNTIME = "%s"' % asan,
        "",
    ]))

python_configure = repository_rule(
    implementation = _python_configure_impl,
    attrs = {
        "interpreter": attr.string(default = "/usr/bin/python3"),
        "build_file": attr.label(allow_single_file = True, mandatory = True),
    },
    local = True,
)
