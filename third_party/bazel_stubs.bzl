"""Local stand-ins for the repositories that Bazel 4.2.3's built-in WORKSPACE suffix downloads.

Bazel's own `@bazel_tools` loads `@rules_cc//cc:defs.bzl`, `@rules_java//java:defs.bzl` and
`@remote_coverage_tools`. Offline those downloads fail, and Debian's `bazel-rules-cc` is too new for
4.2.3, so each stand-in forwards to the native rules that 4.2.3 still has built in.
"""

_RULES_CC_DEFS = '''"""Forwards to the native C++ rules of Bazel 4.2.3 (accelmem offline stand-in)."""

def cc_binary(**attrs):
    native.cc_binary(**attrs)

def cc_import(**attrs):
    native.cc_import(**attrs)

def cc_library(**attrs):
    native.cc_library(**attrs)

def cc_proto_library(**attrs):
    native.cc_proto_library(**attrs)

def cc_test(**attrs):
    native.cc_test(**attrs)

def cc_toolchain(**attrs):
    native.cc_toolchain(**attrs)

def cc_toolchain_suite(**attrs):
    native.cc_toolchain_suite(**attrs)

def fdo_prefetch_hints(**attrs):
    native.fdo_prefetch_hints(**attrs)

def fdo_profile(**attrs):
    native.fdo_profile(**attrs)

def objc_import(**attrs):
    native.objc_import(**attrs)

def objc_library(**attrs):
    native.objc_library(**attrs)
'''

_RULES_CC_BUILD = '''package(default_visibility = ["//visibility:public"])

alias(
    name = "toolchain_type",
    actual = "@bazel_tools//tools/cpp:toolchain_type",
)

exports_files(["defs.bzl"])
'''

_RULES_JAVA_DEFS = '''"""Forwards to the native Java rules of Bazel 4.2.3 (accelmem offline stand-in)."""

def java_binary(**attrs):
    native.java_binary(**attrs)

def java_import(**attrs):
    native.java_import(**attrs)

def java_library(**attrs):
    native.java_library(**attrs)

def java_lite_proto_library(**attrs):
    native.java_lite_proto_library(**attrs)

def java_plugin(**attrs):
    native.java_plugin(**attrs)

def java_proto_library(**attrs):
    native.java_proto_library(**attrs)

def java_runtime(**attrs):
    native.java_runtime(**attrs)

def java_test(**attrs):
    native.java_test(**attrs)

def java_toolchain(**attrs):
    native.java_toolchain(**attrs)
'''

_COVERAGE_BUILD = '''package(default_visibility = ["//visibility:public"])

# Coverage post-processing is not available offline; these targets exist so that
# @bazel_tools//tools/test resolves. `bazel coverage` is not supported by accelmem.
filegroup(name = "coverage_report_generator")

filegroup(name = "lcov_merger")

filegroup(name = "coverage_output_generator")
'''

def _stub_repository_impl(ctx):
    ctx.file("WORKSPACE", 'workspace(name = "%s")\n' % ctx.name)
    for path, content in ctx.attr.files.items():
        ctx.file(path, content)

_stub_repository = repository_rule(
    implementation = _stub_repository_impl,
    attrs = {"files": attr.string_dict(mandatory = True)},
    local = True,
)

def bazel_builtin_stand_ins():
    """Declares @rules_cc, @rules_java and @remote_coverage_tools unless already declared."""
    if "rules_cc" not in native.existing_rules():
        _stub_repository(
            name = "rules_cc",
            files = {
                "BUILD.bazel": "",
                "cc/BUILD.bazel": _RULES_CC_BUILD,
                "cc/defs.bzl": _RULES_CC_DEFS,
            },
        )
    if "rules_java" not in native.existing_rules():
        _stub_repository(
            name = "rules_java",
            files = {
                "BUILD.bazel": "",
                "java/BUILD.bazel": 'exports_files(["defs.bzl"])\n',
                "java/defs.bzl": _RULES_JAVA_DEFS,
            },
        )
    if "remote_coverage_tools" not in native.existing_rules():
        _stub_repository(
            name = "remote_coverage_tools",
            files = {"BUILD.bazel": _COVERAGE_BUILD},
        )
