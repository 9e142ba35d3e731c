"""ptxas_cc_test: a test that assembles generated PTX with the CUDA toolkit's ptxas."""

load("@local_cuda//:defs.bzl", "if_cuda_is_configured")
load("//bazel:cc_test.bzl", "accelmem_cc_test")
load("//bazel:copts.bzl", "TEST_COPTS")

def ptxas_cc_test(name, deps = [], size = "small", **kwargs):
    """A cc_test that gets ptxas's path as argv[1] where @local_cuda is configured.

    Without a toolkit the test gets no argument and its ptxas checks skip (ptxas_testing.h). The
    test's main() comes from //runtime/cuda:ptxas_test_main; no GPU is needed.

    Args:
      name: the test's name.
      deps: the test's dependencies (ptxas_test_main is added).
      size: the test size.
      **kwargs: passed to accelmem_cc_test.
    """
    accelmem_cc_test(
        name = name,
        size = size,
        args = if_cuda_is_configured(["$(location @local_cuda//:ptxas)"]),
        copts = TEST_COPTS,
        data = if_cuda_is_configured(["@local_cuda//:ptxas"]),
        deps = deps + [str(Label("//runtime/cuda:ptxas_test_main"))],
        **kwargs
    )
