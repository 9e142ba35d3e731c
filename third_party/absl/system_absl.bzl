"""The abseil label graph (LTS 2022-06-23, as Debian ships it) mapped onto Debian's shared libraries.

Each entry is "name|linkopts|deps": the upstream target name, the `-l` flags of the libraries that
implement it, and its upstream dependencies. Header-only targets have no linkopts. Add a target here
when code needs a new abseil label; keep the upstream name.
"""

ABSL_PACKAGES = {
    "absl/algorithm": [
        "algorithm||",
        "container||//absl/algorithm:algorithm //absl/base:core_headers //absl/meta:type_traits",
    ],
    "absl/base": [
        "config||",
        "core_headers||//absl/base:config",
        "log_severity|-labsl_log_severity|//absl/base:core_headers",
        "raw_logging_internal|-labsl_raw_logging_internal|//absl/base:log_severity",
        "spinlock_wait|-labsl_spinlock_wait|//absl/base:core_headers",
        "throw_delegate|-labsl_throw_delegate|//absl/base:config",
        "base|-labsl_base|//absl/base:core_headers //absl/base:log_severity //absl/base:raw_logging_internal //absl/base:spinlock_wait //absl/base:throw_delegate",
        "endian||//absl/base:core_headers",
        "prefetch||//absl/base:config",
    ],
    "absl/cleanup": ["cleanup||//absl/base:core_headers //absl/utility"],
    "absl/container": [
        "btree||//absl/container:compressed_tuple //absl/strings //absl/types:compare",
        "compressed_tuple||//absl/utility",
        "fixed_array||//absl/container:compressed_tuple //absl/base:throw_delegate",
        "inlined_vector||//absl/container:compressed_tuple //absl/base:throw_delegate //absl/memory",
        "raw_hash_set|-labsl_raw_hash_set -labsl_hashtablez_sampler -labsl_exponential_biased|//absl/hash //absl/base //absl/synchronization",
        "flat_hash_map||//absl/container:raw_hash_set //absl/algorithm:container //absl/memory",
        "flat_hash_set||//absl/container:raw_hash_set //absl/algorithm:container //absl/memory",
        "node_hash_map||//absl/container:raw_hash_set //absl/algorithm:container //absl/memory",
        "node_hash_set||//absl/container:raw_hash_set //absl/algorithm:container //absl/memory",
    ],
    "absl/debugging": [
        "stacktrace|-labsl_stacktrace -labsl_debugging_internal|//absl/base",
        "symbolize|-labsl_symbolize -labsl_demangle_internal -labsl_malloc_internal|//absl/debugging:stacktrace",
        "failure_signal_handler|-labsl_failure_signal_handler -labsl_examine_stack|//absl/debugging:symbolize",
        "leak_check|-labsl_leak_check|//absl/base:core_headers",
    ],
    "absl/flags": [
        "flag|-labsl_flags_internal -labsl_flags_marshalling -labsl_flags_reflection -labsl_flags_config -labsl_flags_program_name -labsl_flags_private_handle_accessor -labsl_flags_commandlineflag -labsl_flags_commandlineflag_internal|//absl/strings //absl/strings:str_format //absl/synchronization //absl/types:optional",
        "usage|-labsl_flags_usage -labsl_flags_usage_internal|//absl/flags:flag",
        "parse|-labsl_flags_parse|//absl/flags:flag //absl/flags:usage",
    ],
    "absl/functional": [
        "any_invocable||//absl/base:core_headers //absl/meta:type_traits //absl/utility",
        "bind_front||//absl/container:compressed_tuple //absl/meta:type_traits //absl/utility",
        "function_ref||//absl/base:core_headers //absl/meta:type_traits",
    ],
    "absl/hash": ["hash|-labsl_hash -labsl_city -labsl_low_level_hash|//absl/base //absl/numeric:int128 //absl/strings //absl/types:optional //absl/types:variant"],
    "absl/memory": ["memory||//absl/base:core_headers //absl/meta:type_traits"],
    "absl/meta": ["type_traits||//absl/base:config"],
    "absl/numeric": [
        "bits||//absl/base:core_headers",
        "int128|-labsl_int128|//absl/base:core_headers",
    ],
    "absl/random": [
        "random|-labsl_random_distributions -labsl_random_seed_sequences -labsl_random_internal_pool_urbg -labsl_random_internal_randen -labsl_random_internal_randen_hwaes -labsl_random_internal_randen_hwaes_impl -labsl_random_internal_randen_slow -labsl_random_internal_platform -labsl_random_internal_seed_material -labsl_random_seed_gen_exception|//absl/base //absl/numeric:int128 //absl/strings //absl/types:span",
        "bit_gen_ref||//absl/random",
        "distributions||//absl/random",
    ],
    "absl/status": [
        "status|-labsl_status -labsl_strerror|//absl/strings //absl/strings:cord //absl/strings:str_format //absl/types:optional",
        "statusor|-labsl_statusor|//absl/status //absl/types:variant",
    ],
    "absl/strings": [
        "strings|-labsl_strings -labsl_strings_internal|//absl/base //absl/numeric:bits //absl/numeric:int128 //absl/memory",
        "str_format|-labsl_str_format_internal|//absl/strings",
        "cord|-labsl_cord -labsl_cord_internal -labsl_cordz_functions -labsl_cordz_info -labsl_cordz_handle|//absl/strings //absl/synchronization //absl/container:inlined_vector //absl/functional:function_ref",
        "internal|-labsl_strings_internal|//absl/base",
    ],
    "absl/synchronization": ["synchronization|-labsl_synchronization -labsl_graphcycles_internal|//absl/base //absl/debugging:stacktrace //absl/debugging:symbolize //absl/time"],
    "absl/time": ["time|-labsl_time -labsl_time_zone -labsl_civil_time|//absl/base //absl/numeric:int128 //absl/strings"],
    "absl/types": [
        "compare||//absl/base:core_headers //absl/meta:type_traits",
        "optional|-labsl_bad_optional_access|//absl/utility",
        "span||//absl/base:throw_delegate //absl/meta:type_traits //absl/algorithm",
        "variant|-labsl_bad_variant_access|//absl/utility",
    ],
    "absl/utility": ["utility||//absl/base:config //absl/meta:type_traits"],
}
