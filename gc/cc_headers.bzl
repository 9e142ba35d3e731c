"""cc_headers: the header files of cc_library targets, as files and runfiles.

Lets a test in gc/ read sparse_runtime's headers (for the freestanding compile check) without
that package exporting its source files.
"""

def _cc_headers_impl(ctx):
    headers = depset(transitive = [
        dep[CcInfo].compilation_context.headers
        for dep in ctx.attr.deps
    ])
    return [DefaultInfo(files = headers, runfiles = ctx.runfiles(transitive_files = headers))]

cc_headers = rule(
    implementation = _cc_headers_impl,
    attrs = {"deps": attr.label_list(providers = [CcInfo])},
)
