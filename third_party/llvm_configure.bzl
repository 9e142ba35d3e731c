"""Repository rule for the system LLVM 14 (Debian's /usr/lib/llvm-14), in the sandboxed-api style.

It probes for the install, symlinks the include tree and the tools into the repository and adds the
BUILD file that links libLLVM-14.so. A missing install is a clear error that names the packages.
"""

_LLVM_TOOLS = ["clang", "llvm-link", "llvm-dis", "llvm-as", "opt", "llc", "FileCheck"]

def _llvm_configure_impl(ctx):
    root = ctx.os.environ.get("LLVM_ROOT", "/usr/lib/llvm-14")
    if not ctx.path(root + "/include/llvm/Support/InitLLVM.h").exists:
        fail("LLVM 14 not found under %s. Run ./bazelw (it installs llvm-14-dev, clang-14 and " % root +
             "llvm-14-tools) or set LLVM_ROOT.")
    ctx.file("WORKSPACE", 'workspace(name = "%s")\n' % ctx.name)
    ctx.symlink(root + "/include", "include")
    for tool in _LLVM_TOOLS:
        if not ctx.path(root + "/bin/" + tool).exists:
            fail("LLVM tool %s/bin/%s not found; install llvm-14-tools and clang-14." % (root, tool))
        ctx.symlink(root + "/bin/" + tool, "bin/" + tool)
    ctx.symlink(ctx.attr.build_file, "BUILD.bazel")

llvm_configure = repository_rule(
    implementation = _llvm_configure_impl,
    attrs = {"build_file": attr.label(allow_single_file = True, mandatory = True)},
    environ = ["LLVM_ROOT"],
    local = True,
)
