"""`gpu_bundle`: one archive with the GPU binaries, every shared library they load and run.sh.

The binaries are built in a configuration with --features=accelmem_static_llvm (a Starlark
transition; transitions cannot set --define, and the C++ toolchain ignores a feature it does not
know), in which @llvm//:llvm links llvm-14-dev's static component libraries instead of
libLLVM-14.so: the archive then carries only the LLVM code the binaries use, and none of
libLLVM-14.so's own dependencies (z3, ICU, libxml2). pack.sh copies each binary, the shared
libraries that `ldd` resolves for it (all but the C library, the dynamic loader and libcuda, which
the GPU machine's driver provides) and the listed files into one .tar.xz.
"""

STATIC_LLVM_FEATURE = "accelmem_static_llvm"

def _static_llvm_transition_impl(settings, attr):
    features = settings["//command_line_option:features"]
    if STATIC_LLVM_FEATURE in features:
        return {"//command_line_option:features": features}
    return {"//command_line_option:features": features + [STATIC_LLVM_FEATURE]}

_static_llvm_transition = transition(
    implementation = _static_llvm_transition_impl,
    inputs = ["//command_line_option:features"],
    outputs = ["//command_line_option:features"],
)

def _gpu_bundle_impl(ctx):
    out = ctx.outputs.out
    args = ctx.actions.args()
    args.add(out.path)
    args.add(ctx.attr.folder)
    args.add_all([f.path + "=bin/" + f.basename for f in ctx.files.binaries])
    args.add_all([f.path + "=testdata/" + f.basename for f in ctx.files.testdata])
    args.add_all([f.path + "=" + f.basename for f in ctx.files.files])
    ctx.actions.run(
        executable = ctx.executable._pack,
        arguments = [args],
        inputs = ctx.files.binaries + ctx.files.testdata + ctx.files.files,
        outputs = [out],
        mnemonic = "GpuBundle",
        progress_message = "Packing the GPU bundle %s" % out.short_path,
        use_default_shell_env = True,
    )
    return [DefaultInfo(files = depset([out]), runfiles = ctx.runfiles(files = [out]))]

gpu_bundle = rule(
    implementation = _gpu_bundle_impl,
    doc = "Packs binaries (built with static LLVM), their shared libraries and files into out.",
    attrs = {
        "binaries": attr.label_list(
            cfg = _static_llvm_transition,
            allow_files = True,
            doc = "executables for bin/ (with every shared library they load, in lib/)",
        ),
        "testdata": attr.label_list(
            cfg = _static_llvm_transition,
            allow_files = True,
            doc = "files for testdata/ (their libraries are not followed)",
        ),
        "files": attr.label_list(allow_files = True, doc = "files for the top folder"),
        "folder": attr.string(mandatory = True, doc = "the archive's top folder"),
        "out": attr.output(mandatory = True),
        "_pack": attr.label(
            default = ":pack.sh",
            executable = True,
            cfg = "exec",
            allow_single_file = True,
        ),
        "_allowlist_function_transition": attr.label(
            default = "@bazel_tools//tools/allowlists/function_transition_allowlist",
        ),
    },
)
