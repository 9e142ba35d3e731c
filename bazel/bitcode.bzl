"""`runtime_bitcode`: compiles device libraries to one LLVM bitcode module per architecture.

Modelled on IREE's `iree_bitcode_library`: one action per source runs `@llvm//:clang` (a label,
never a PATH lookup) with the freestanding flags of //bazel:device_code.bzl and `-emit-llvm`, then
`@llvm//:llvm-link` joins the per-file modules into `out`. The sources are those of the
`device_cc_library` targets in `deps` and their device deps, which are also built natively, so the
CPU tests exercise the code that becomes bitcode.
"""

load(
    "//bazel:device_code.bzl",
    "BITCODE_ARCHES",
    "DeviceCodeInfo",
    "FREESTANDING_FLAGS",
    "device_code_aspect",
)

BITCODE_BASE_FLAGS = FREESTANDING_FLAGS + [
    "-O3",
    "-DNDEBUG",
    # Code that needs the host process (a CPU feature query: libgcc's __cpu_model) is left out of
    # the JIT-linked runtime.
    "-DACCELMEM_RT_BITCODE=1",
    "-fno-ident",
    "-fdiscard-value-names",
    "-Wall",
    "-Werror",
    "-c",
    "-emit-llvm",
]

def _runtime_bitcode_impl(ctx):
    arch = ctx.attr.arch
    if arch not in BITCODE_ARCHES:
        fail("runtime_bitcode: unknown arch '%s' (known: %s)" % (arch, ", ".join(BITCODE_ARCHES)))

    # Includes are workspace-relative (`#include "sparse_runtime/device/arch.h"`), also when
    # accelmem is an external repository of the caller.
    include_root = ctx.label.workspace_root or "."
    flags = BITCODE_BASE_FLAGS + BITCODE_ARCHES[arch] + ["-I" + include_root] + ctx.attr.copts
    infos = [d[DeviceCodeInfo] for d in ctx.attr.deps]
    srcs = depset(transitive = [
        i.transitive_srcs if ctx.attr.include_deps else i.srcs
        for i in infos
    ]).to_list()
    hdrs = depset(transitive = [i.hdrs for i in infos])
    per_file = []
    for src in srcs:
        stem = src.short_path[:-len(".cc")]
        if stem.startswith("../"):  # a source of an external repository: ../repo/path
            stem = stem[len("../"):]
        bc = ctx.actions.declare_file("_%s/%s.bc" % (ctx.label.name, stem))
        ctx.actions.run(
            executable = ctx.executable._clang,
            arguments = flags + [src.path, "-o", bc.path],
            inputs = depset([src], transitive = [hdrs]),
            outputs = [bc],
            mnemonic = "DeviceBitcode",
            progress_message = "Compiling %s to %s bitcode" % (src.short_path, arch),
        )
        per_file.append(bc)
    out = ctx.outputs.out
    ctx.actions.run(
        executable = ctx.executable._llvm_link,
        arguments = [f.path for f in per_file] + ["-o", out.path],
        inputs = per_file,
        outputs = [out],
        mnemonic = "DeviceBitcodeLink",
        progress_message = "Linking %s bitcode %s" % (arch, out.short_path),
    )
    return [DefaultInfo(files = depset([out]), runfiles = ctx.runfiles(files = [out]))]

runtime_bitcode = rule(
    implementation = _runtime_bitcode_impl,
    doc = "Compiles the device_cc_library closure of `deps` for `arch` and links it into `out`.",
    attrs = {
        "deps": attr.label_list(
            aspects = [device_code_aspect],
            mandatory = True,
            doc = "device_cc_library targets; their device deps are included",
        ),
        "include_deps": attr.bool(
            default = True,
            doc = ("also compile the sources of the device deps of `deps` (False for kernels " +
                   "that are linked with a runtime module that already has them)"),
        ),
        "arch": attr.string(mandatory = True, doc = "a key of BITCODE_ARCHES: x64 or cuda"),
        "copts": attr.string_list(doc = "extra clang flags"),
        "out": attr.output(mandatory = True, doc = "the linked module (.bc)"),
        "_clang": attr.label(
            default = "@llvm//:clang",
            executable = True,
            cfg = "exec",
        ),
        "_llvm_link": attr.label(
            default = "@llvm//:llvm-link",
            executable = True,
            cfg = "exec",
        ),
    },
)
