"""Build conventions shared by every tiletune package: copts and test tags.

The test tags are defined here and nowhere else. GPU tests carry GPU_TEST_TAGS; the
default `bazel test //...` filters them out (.bazelrc), `--config=gpu` selects them.
"""

# On tiletune's own targets, not in a .bazelrc, so a workspace that uses tiletune builds it
# without copying flags (Bazel's default C++ toolchain compiles as -std=c++0x).
TT_COPTS = [
    "-std=c++17",
    "-Wall",
    "-Wextra",
    "-Wno-unused-parameter",
    "-Wno-sign-compare",
    "-Wno-missing-field-initializers",
]

# Tests that need an NVIDIA GPU and driver. They GTEST_SKIP() when no driver loads.
GPU_TEST_TAGS = [
    "gpu",
    "requires-gpu-nvidia",
    # Tests sharing one GPU must not time each other's kernels.
    "exclusive",
]

# tiletune's own labels, resolved in tiletune's repository wherever these macros are used.
# select() keys are strings in Bazel 4: the label printed in this repository's terms.
_CLANG = str(Label("//compiler/base:clang"))
_FUZZ_REPLAY_MAIN = Label("//compiler/base:fuzz_replay_main.cc")
_GTEST_MAIN = Label("@com_google_googletest//:gtest_main")
_ROOT_PACKAGE = Label("//:__pkg__")

def tt_cc_library(name, copts = [], **kwargs):
    native.cc_library(name = name, copts = TT_COPTS + copts, **kwargs)

def tt_cc_binary(name, copts = [], **kwargs):
    native.cc_binary(name = name, copts = TT_COPTS + copts, **kwargs)

def tt_fuzz_binary(name, srcs, deps = [], **kwargs):
    """A libFuzzer binary of `srcs` (which define LLVMFuzzerTestOneInput).

    With clang (--repo_env=CC=clang; .ci/fuzz.sh) it links libFuzzer, AddressSanitizer and
    UndefinedBehaviorSanitizer (every finding fatal); with gcc, a main that replays the
    files or folders named on its command line.
    """
    sanitizers = [
        "-fsanitize=fuzzer,address,undefined",
        "-fno-sanitize-recover=all",
        # Bazel links with clang, not clang++: bring in UBSan's C++ half (vptr, function).
        "-fsanitize-link-c++-runtime",
    ]
    native.cc_binary(
        name = name,
        srcs = srcs + select({
            _CLANG: [],
            "//conditions:default": [_FUZZ_REPLAY_MAIN],
        }),
        copts = TT_COPTS + select({
            _CLANG: sanitizers,
            "//conditions:default": [],
        }),
        linkopts = select({
            _CLANG: sanitizers,
            "//conditions:default": [],
        }),
        deps = deps,
        tags = ["fuzz"],
        **kwargs
    )

def tt_cc_test(name, copts = [], deps = [], size = "small", **kwargs):
    """A CPU test: runs everywhere, part of the default `bazel test //...`."""
    native.cc_test(
        size = size,
        name = name,
        copts = TT_COPTS + copts,
        deps = deps + [_GTEST_MAIN],
        **kwargs
    )

def tt_gpu_test(name, copts = [], deps = [], tags = [], size = "medium", **kwargs):
    """A test that launches kernels: tagged gpu, selected by --config=gpu."""
    native.cc_test(
        size = size,
        name = name,
        copts = TT_COPTS + copts,
        deps = deps + [_GTEST_MAIN],
        tags = tags + GPU_TEST_TAGS,
        **kwargs
    )

def tt_all_targets(name = "all_targets"):
    """Ends a BUILD file: groups of every rule of the package so far, and of its libraries.

    //:layering_test queries the dependencies of these groups; every package under compiler/
    and kernels/ ends with tt_all_targets() and is listed there. `name` holds every rule
    (tests too: nothing there may reach //autotune); `<name>_libraries` holds the rules that
    ship (no tests, nothing testonly), which the per-layer rules of DESIGN.md constrain.
    """
    rules = native.existing_rules()
    # Rules tagged manual are left out: they build only under their own flags
    # (kernels/python:libtiletune.so needs --define=tiletune_link=shared).
    kept = [
        r
        for r in sorted(rules.keys())
        if rules[r]["kind"] not in ("config_setting",) and "manual" not in rules[r].get("tags", [])
    ]
    native.filegroup(
        name = name,
        testonly = True,
        srcs = [":" + r for r in kept],
        visibility = [_ROOT_PACKAGE],
    )
    native.filegroup(
        name = name + "_libraries",
        testonly = True,
        srcs = [
            ":" + r
            for r in kept
            if not rules[r]["kind"].endswith("_test") and not rules[r].get("testonly", False) and
               rules[r]["kind"] not in ("genquery", "filegroup")
        ],
        visibility = [_ROOT_PACKAGE],
    )
