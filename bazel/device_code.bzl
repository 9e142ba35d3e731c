"""Device (freestanding) C++: declared once, built natively and compiled to per-arch bitcode.

`device_cc_library` declares a library of freestanding C++17 (no standard headers, exceptions or
RTTI) exactly once. The same target is

  * a native `cc_library` (host build, DEVICE_COPTS), so CPU tests run the very code that later
    becomes bitcode, and
  * a source list for `runtime_bitcode` (//bazel:bitcode.bzl) and `device_code_test`: both take
    device libraries as `deps` and read their sources through `device_code_aspect`, so no BUILD
    file repeats a source list.

The flags of freestanding code live here only: DEVICE_COPTS (native), FREESTANDING_FLAGS and
BITCODE_ARCHES (clang, per architecture), used by the bitcode rule and by the compile check.
A device library may depend on device libraries only (the aspect fails otherwise).
"""

load("//bazel:copts.bzl", "DEFAULT_COPTS")

# The tag that marks a device_cc_library (read by device_code_aspect).
DEVICE_CODE_TAG = "device_code"

# Native (host) build of device code.
DEVICE_COPTS = DEFAULT_COPTS + [
    "-fno-exceptions",
    "-fno-rtti",
]

# Every freestanding compile with clang (bitcode and the compile check).
FREESTANDING_FLAGS = [
    "-std=c++17",
    "-ffreestanding",
    "-nostdinc",
    "-fno-exceptions",
    "-fno-rtti",
]

# Per-architecture flags. clang-14 cannot compile CUDA C++ against the CUDA 13 headers, so the
# nvptx64 runtime is plain freestanding C++ with __nvvm_* builtins, selected by ARCH_cuda.
BITCODE_ARCHES = {
    "x64": ["-target", "x86_64-unknown-linux-gnu", "-DARCH_x64=1"],
    # clang-14 knows SMs up to sm_86; sm_80 with PTX 7.0 features covers the warp-synchronous
    # builtins the runtime uses. //runtime/cuda:ptx_codegen retargets the PTX to sm_90.
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

DeviceCodeInfo = provider(
    doc = "The sources of a device_cc_library and the headers of its closure.",
    fields = {
        "srcs": "depset of the library's own .cc files",
        "transitive_srcs": "depset of the .cc files of the library and its device deps",
        "hdrs": "depset of the headers of the library and its device deps",
    },
)

def _device_code_aspect_impl(target, ctx):
    if DEVICE_CODE_TAG not in ctx.rule.attr.tags:
        fail("%s is not a device_cc_library; device code may depend only on device code" %
             target.label)
    deps = [d[DeviceCodeInfo] for d in getattr(ctx.rule.attr, "deps", [])]
    own = [f for f in ctx.rule.files.srcs if f.extension == "cc"]
    own_hdrs = ctx.rule.files.hdrs + [f for f in ctx.rule.files.srcs if f.extension == "h"]
    srcs = depset(own)
    return [DeviceCodeInfo(
        srcs = srcs,
        transitive_srcs = depset(transitive = [srcs] + [d.transitive_srcs for d in deps]),
        hdrs = depset(own_hdrs, transitive = [d.hdrs for d in deps]),
    )]

device_code_aspect = aspect(
    implementation = _device_code_aspect_impl,
    attr_aspects = ["deps"],
    doc = "Collects the sources and headers of device_cc_library targets (see DeviceCodeInfo).",
)

def device_cc_library(name, srcs = [], hdrs = [], deps = [], host = True, tags = [], **kwargs):
    """A library of freestanding C++17, built natively and usable by runtime_bitcode.

    Args:
      name: the library's name.
      srcs: its .cc files (and private headers).
      hdrs: its public headers.
      deps: other device_cc_library targets only.
      host: False for device-only sources (kernel entry points): the native library is then
        tagged "manual" (not built by //...) and serves only as a source list for bitcode.
      tags: extra tags.
      **kwargs: passed to cc_library (visibility, testonly, ...).
    """
    native.cc_library(
        name = name,
        srcs = srcs,
        hdrs = hdrs,
        copts = DEVICE_COPTS,
        deps = deps,
        tags = tags + [DEVICE_CODE_TAG] + ([] if host else ["manual"]),
        **kwargs
    )

def _device_sources_impl(ctx):
    infos = [d[DeviceCodeInfo] for d in ctx.attr.deps]
    srcs = depset(transitive = [i.srcs for i in infos])
    hdrs = depset(transitive = [i.hdrs for i in infos])
    return [DefaultInfo(
        files = srcs,
        runfiles = ctx.runfiles(transitive_files = depset(transitive = [srcs, hdrs])),
    )]

_device_sources = rule(
    implementation = _device_sources_impl,
    doc = "The .cc files of `deps` (not of their deps) as files; with every header as runfiles.",
    attrs = {"deps": attr.label_list(aspects = [device_code_aspect])},
)

def device_code_test(name, deps, size = "small", **kwargs):
    """Checks that the sources of `deps` compile freestanding for every BITCODE_ARCHES entry.

    Runs //tools:freestanding_test.sh with clang, FREESTANDING_FLAGS and each architecture's
    flags (the ones runtime_bitcode compiles with) on each .cc of the listed libraries.

    Args:
      name: the test's name.
      deps: device_cc_library targets whose own sources are checked.
      size: the test size.
      **kwargs: passed to sh_test.
    """
    srcs_name = "_%s_srcs" % name
    _device_sources(name = srcs_name, deps = deps, testonly = True)
    args = ["$(location @llvm//:clang)"] + FREESTANDING_FLAGS
    for arch in sorted(BITCODE_ARCHES):
        args += ["--arch=" + arch] + BITCODE_ARCHES[arch]
    args += ["--", "$(locations :%s)" % srcs_name]
    native.sh_test(
        name = name,
        size = size,
        srcs = [Label("//tools:freestanding_test.sh")],
        args = args,
        data = [":" + srcs_name, "@llvm//:clang"],
        **kwargs
    )

def device_package(name = "device", test_name = "freestanding_test", visibility = None):
    """Call last in a device package: a library of all its device code, and its compile check.

    Creates `name`, a device library that depends on every host-buildable device_cc_library of
    the package (so `runtime_bitcode(deps = ["//sparse_runtime/device"])` takes the whole
    package), and `test_name`, a device_code_test over the same libraries.

    Args:
      name: the library of the whole package (default "device": the package's short label).
      test_name: the freestanding compile check.
      visibility: of `name` (default: the whole repository).
    """
    libs = sorted([
        ":" + r["name"]
        for r in native.existing_rules().values()
        if DEVICE_CODE_TAG in r.get("tags", []) and "manual" not in r.get("tags", [])
    ])
    device_cc_library(
        name = name,
        deps = libs,
        visibility = visibility or ["//:__subpackages__"],
    )
    device_code_test(name = test_name, deps = libs)
