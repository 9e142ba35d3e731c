"""`gpu_bundle`: one archive with the GPU binaries, every shared library they load and run.sh.

The binaries link LLVM statically (STATIC_LLVM_LINKOPTS) in the default configuration, so the
bundle reuses the objects that `bazel test //...` builds anyway. pack.sh copies each binary, the
shared libraries that `ldd` resolves for it (all but the C library, the dynamic loader and
libcuda, which the GPU machine's driver provides) and the listed files into one .tar.xz.
"""

# Linkopts of a binary that links llvm-14-dev's static component libraries instead of
# libLLVM-14.so, in the default configuration: a cc_binary's own linkopts come before its
# dependencies' on the link line, so these archives resolve every LLVM symbol of the binary's
# objects first, and --as-needed then drops the -lLLVM-14 that @llvm//:llvm adds after them. The
# binary carries only the LLVM code it uses and needs neither libLLVM-14.so (110 MB) nor its z3,
# ICU and libxml2. The list is `llvm-config-14 --link-static --libs core bitreader bitwriter
# irreader linker nvptxcodegen nvptxdesc nvptxinfo passes ipo target analysis transformutils
# support` in its link order, plus the system libraries the used objects need.
STATIC_LLVM_LINKOPTS = [
    "-Wl,--as-needed",
    "-L/usr/lib/llvm-14/lib",
    "-lLLVMPasses",
    "-lLLVMObjCARCOpts",
    "-lLLVMCoroutines",
    "-lLLVMNVPTXCodeGen",
    "-lLLVMSelectionDAG",
    "-lLLVMNVPTXDesc",
    "-lLLVMNVPTXInfo",
    "-lLLVMipo",
    "-lLLVMInstrumentation",
    "-lLLVMVectorize",
    "-lLLVMFrontendOpenMP",
    "-lLLVMAsmPrinter",
    "-lLLVMDebugInfoMSF",
    "-lLLVMCodeGen",
    "-lLLVMTarget",
    "-lLLVMScalarOpts",
    "-lLLVMInstCombine",
    "-lLLVMAggressiveInstCombine",
    "-lLLVMLinker",
    "-lLLVMTransformUtils",
    "-lLLVMIRReader",
    "-lLLVMAsmParser",
    "-lLLVMBitWriter",
    "-lLLVMAnalysis",
    "-lLLVMProfileData",
    "-lLLVMDebugInfoDWARF",
    "-lLLVMObject",
    "-lLLVMTextAPI",
    "-lLLVMMCParser",
    "-lLLVMMC",
    "-lLLVMDebugInfoCodeView",
    "-lLLVMBitReader",
    "-lLLVMCore",
    "-lLLVMRemarks",
    "-lLLVMBitstreamReader",
    "-lLLVMBinaryFormat",
    "-lLLVMSupport",
    "-lLLVMDemangle",
    "-lz",
    "-ltinfo",
]

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
            allow_files = True,
            doc = "executables for bin/ (with every shared library they load, in lib/)",
        ),
        "testdata": attr.label_list(
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
    },
)
