"""`runtime_bitcode`: compiles freestanding C++ sources to one LLVM bitcode module per architecture.

Modelled on IREE's `iree_bitcode_library`: one genrule per source runs `@llvm//:clang` (a label,
never a PATH lookup) with `-ffreestanding -nostdinc -emit-llvm`, then `@llvm//:llvm-link` joins the
per-file modules into `<name>.bc`. The same sources are also built natively by `cc_library`
targets, so the CPU tests exercise the code that becomes bitcode.
"""

# Per-architecture flags. clang-14 cannot compile CUDA C++ against the CUDA 13 headers, so the
# nvptx64 runtime is plain freestanding C++ with __nvvm_* builtins, selected by ARCH_cuda.
BITCODE_ARCHES = {
    "x64": ["-target", "x86_64-unknown-linux-gnu", "-DARCH_x64=1"],
    # clang-14 knows SMs up to sm_86; sm_80 with PTX 7.0 features covers the warp-synchronous
    # builtins the runtime uses. //backends/cuda:ptx_codegen retargets the PTX to sm_90.
    "cuda": [
        "-target",
        "nvptx64-nvidia-cuda",
        "-march=sm_80",
        "-Xclang",
        "-target-feature",
        "-Xclang",
        "+ptx70",
        # Plain C++ does not mark functions that reach activemask, match.any.sync or bar.sync as
        # convergent (CUDA C++ does), so LLVM could sink or duplicate those calls across
        # divergent branches; every runtime function is compiled as convergent, as for CUDA.
        "-Xclang",
        "-fconvergent-functions",
        "-DARCH_cuda=1",
    ],
}

BITCODE_BASE_FLAGS = [
    "-std=c++17",
    "-ffreestanding",
    "-nostdinc",
    "-fno-exceptions",
    "-fno-rtti",
    "-O3",
    "-DNDEBUG",
    "-fno-ident",
    "-fdiscard-value-names",
    "-Wall",
    "-Werror",
    "-c",
    "-emit-llvm",
]

def _arch_flags(arch):
    if arch not in BITCODE_ARCHES:
        fail("runtime_bitcode: unknown arch '%s' (known: %s)" % (arch, ", ".join(BITCODE_ARCHES)))
    return BITCODE_ARCHES[arch]

def runtime_bitcode(name, srcs, arch, hdrs = [], copts = [], out = None, **kwargs):
    """Compiles `srcs` for `arch` ("x64" or "cuda") and links them into `out` (default name.bc).

    Includes are workspace-relative (`#include "sparse_runtime/arch.h"`), also when accelmem is
    an external repository of the caller.
    """
    out = out or name + ".bc"
    repo = native.repository_name().lstrip("@")
    include_root = "external/%s" % repo if repo else "."
    flags = BITCODE_BASE_FLAGS + _arch_flags(arch) + ["-I" + include_root] + copts
    per_file = []
    for src in srcs:
        stem = src.rsplit(".", 1)[0].lstrip("/@").replace("/", "_").replace(":", "_")
        bc = "_%s/%s.bc" % (name, stem)
        native.genrule(
            name = "_%s_%s" % (name, stem),
            srcs = [src] + hdrs,
            outs = [bc],
            tools = ["@llvm//:clang"],
            cmd = "$(location @llvm//:clang) %s $(location %s) -o $@" % (" ".join(flags), src),
            message = "Compiling %s to %s bitcode" % (src, arch),
            output_to_bindir = 1,
            **kwargs
        )
        per_file.append(bc)
    native.genrule(
        name = name,
        srcs = per_file,
        outs = [out],
        tools = ["@llvm//:llvm-link"],
        cmd = "$(location @llvm//:llvm-link) $(SRCS) -o $@",
        message = "Linking %s bitcode %s" % (arch, out),
        output_to_bindir = 1,
        **kwargs
    )
