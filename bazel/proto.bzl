"""`accelmem_cc_proto_library`: a .proto file to a C++ library with the system protoc.

Bazel 4.2.3's native proto rules need @com_google_protobuf's source build; offline we run the
system `protoc` (the @com_google_protobuf//:protoc label) in a genrule instead.
"""

def accelmem_cc_proto_library(name, srcs, deps = [], visibility = None, **kwargs):
    """Generates `<file>.pb.h/.pb.cc` for each of `srcs` and wraps them in `cc_library(name)`.

    Imports are resolved from the workspace root, so `import "ir/ir.proto";` works; `deps` are
    other `accelmem_cc_proto_library` targets whose .proto files this one imports.
    """
    protoc = "@com_google_protobuf//:protoc"
    hdrs = [src[:-len(".proto")] + ".pb.h" for src in srcs]
    cc_srcs = [src[:-len(".proto")] + ".pb.cc" for src in srcs]
    proto_deps = [d + "_protos" for d in deps]
    native.filegroup(
        name = name + "_protos",
        srcs = srcs + proto_deps,
        visibility = visibility,
    )
    # Inside another workspace our files live under external/<repo>/; protoc must see the paths
    # relative to this repository's root so that generated includes read "ir/ir.pb.h".
    repo = native.repository_name().lstrip("@")
    root = "external/%s" % repo if repo else "."
    out_root = "$(GENDIR)/external/%s" % repo if repo else "$(GENDIR)"
    native.genrule(
        name = name + "_genproto",
        srcs = srcs + proto_deps,
        outs = hdrs + cc_srcs,
        tools = [protoc],
        cmd = ("$(location %s) -I%s --cpp_out=%s " % (protoc, root, out_root) +
               " ".join(["%s/%s/%s" % (root, native.package_name(), s) for s in srcs])),
        message = "Generating C++ for %s" % ", ".join(srcs),
    )
    native.cc_library(
        name = name,
        srcs = cc_srcs,
        hdrs = hdrs,
        deps = deps + ["@com_google_protobuf//:protobuf"],
        visibility = visibility,
        **kwargs
    )
