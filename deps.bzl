"""accelmem's dependencies, for its own WORKSPACE and for downstream WORKSPACEs.

    local_repository(name = "accelmem", path = "...")   # or any other way to get the source
    load("@accelmem//:deps.bzl", "accelmem_dependencies")
    accelmem_dependencies()

Everything is local: system libraries installed by Debian (see ./bazelw for the package list) are
wrapped as repositories under upstream's names, and the repositories that Bazel 4.2.3's built-in
WORKSPACE suffix would download are replaced by local stand-ins. Nothing is ever downloaded. A
repository the caller already declared (a source build of abseil, say) is left alone.
"""

load("//third_party:bazel_stubs.bzl", "bazel_builtin_stand_ins")
load("//third_party:cuda_configure.bzl", "cuda_configure")
load("//third_party:llvm_configure.bzl", "llvm_configure")
load("//third_party:python_configure.bzl", "python_configure")
load("//third_party:system_library.bzl", "absl_system_repository", "system_library_repository")
load("//third_party/absl:system_absl.bzl", "ABSL_PACKAGES")

def _maybe(rule, name, **kwargs):
    if name not in native.existing_rules():
        rule(name = name, **kwargs)

def accelmem_dependencies():
    """Declares every external repository accelmem's targets use (all local)."""
    bazel_builtin_stand_ins()
    _maybe(
        absl_system_repository,
        name = "com_google_absl",
        packages = ABSL_PACKAGES,
    )
    _maybe(
        system_library_repository,
        name = "com_google_googletest",
        build_files = {Label("//third_party:googletest.BUILD"): "BUILD.bazel"},
        required_files = ["/usr/include/gtest/gtest.h", "/usr/include/gmock/gmock.h"],
        debian_packages = ["libgtest-dev", "libgmock-dev"],
    )
    _maybe(
        system_library_repository,
        name = "com_github_google_benchmark",
        build_files = {Label("//third_party:benchmark.BUILD"): "BUILD.bazel"},
        required_files = ["/usr/include/benchmark/benchmark.h"],
        debian_packages = ["libbenchmark-dev"],
    )
    _maybe(
        system_library_repository,
        name = "com_google_protobuf",
        build_files = {Label("//third_party:protobuf.BUILD"): "BUILD.bazel"},
        symlinks = {"/usr/bin/protoc": "bin/protoc"},
        required_files = ["/usr/include/google/protobuf/message.h", "/usr/bin/protoc"],
        debian_packages = ["libprotobuf-dev", "protobuf-compiler"],
    )
    _maybe(
        llvm_configure,
        name = "llvm",
        build_file = Label("//third_party:llvm.BUILD"),
    )
    _maybe(cuda_configure, name = "local_cuda")
    _maybe(
        python_configure,
        name = "local_python",
        build_file = Label("//third_party:python.BUILD"),
    )
    _maybe(
        system_library_repository,
        name = "pybind11",
        build_files = {Label("//third_party:pybind11.BUILD"): "BUILD.bazel"},
        symlinks = {"/usr/include/pybind11": "include/pybind11"},
        required_files = ["/usr/include/pybind11/pybind11.h"],
        debian_packages = ["pybind11-dev"],
    )
    _maybe(
        system_library_repository,
        name = "nlohmann_json",
        build_files = {Label("//third_party:nlohmann_json.BUILD"): "BUILD.bazel"},
        symlinks = {"/usr/include/nlohmann": "include/nlohmann"},
        required_files = ["/usr/include/nlohmann/json.hpp"],
        debian_packages = ["nlohmann-json3-dev"],
    )
    _maybe(
        system_library_repository,
        name = "coin_cbc",
        build_files = {Label("//third_party:cbc.BUILD"): "BUILD.bazel"},
        symlinks = {"/usr/include/coin": "include/coin"},
        required_files = ["/usr/include/coin/Cbc_C_Interface.h"],
        debian_packages = ["coinor-libcbc-dev"],
    )
