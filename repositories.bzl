"""tiletune's external repositories: the one entry point for tiletune's own WORKSPACE and for
any Bazel workspace that uses tiletune (WORKSPACE mode; Bazel 4.2 and later).

In a consumer's WORKSPACE:

    local_repository(name = "tiletune", path = "/path/to/tiletune")
    # or: http_archive(name = "tiletune", urls = [...], strip_prefix = "tiletune-...")
    load("@tiletune//:repositories.bzl", "tiletune_dependencies")
    tiletune_dependencies()

Each repository below is declared only where the workspace has not defined one of that
name first: define `com_google_absl` (or any other) before the call and tiletune builds
against yours. tiletune's BUILD files use the canonical per-target labels
(`@com_google_absl//absl/status:statusor`, `@com_google_protobuf//:protobuf`), so a real
abseil repository serves as well as the stand-in declared here.

  rules_cc, rules_java, remote_coverage_tools
      offline stand-ins for what Bazel 4.2 would download for any C++ build and test
  com_google_absl, com_google_protobuf, com_google_googletest, com_github_google_benchmark
      the system's libraries (Debian's libabsl-dev, libprotobuf-dev and protobuf-compiler,
      libgtest-dev and libgmock-dev, libbenchmark-dev), linked statically; a missing
      package fails the build naming it and third_party/setup.sh
  local_cuda
      the CUDA 13 toolkit at $CUDA_PATH (default /usr/local/cuda): headers, the static
      runtime, NVRTC (loaded at run time; never linked), cuDNN headers

Every label here goes through Label(), so it names tiletune's own files from whichever
workspace calls this.
"""

load("//third_party:system_library.bzl", "system_library")
load("//third_party/absl:workspace.bzl", "ABSL_LIBS", "ABSL_TARGETS")
load("//third_party/cuda:workspace.bzl", "cuda_toolkit")

def _local_folder_impl(ctx):
    # The folder of `marker`, one of tiletune's files, as this repository.
    folder = ctx.path(ctx.attr.marker).dirname
    for child in folder.readdir():
        ctx.symlink(child, child.basename)

_local_folder = repository_rule(
    implementation = _local_folder_impl,
    attrs = {"marker": attr.label(mandatory = True, allow_single_file = True)},
    local = True,
)

def _maybe(rule, name, **kwargs):
    if native.existing_rule(name) == None:
        rule(name = name, **kwargs)

def tiletune_dependencies():
    """Declares every repository tiletune needs that the workspace has not defined."""
    for shim in ["rules_cc", "rules_java", "remote_coverage_tools"]:
        _maybe(
            _local_folder,
            name = shim,
            marker = Label("//third_party/%s:WORKSPACE" % shim),
        )
    _maybe(
        system_library,
        name = "com_google_absl",
        build_file = Label("//third_party/absl:absl.BUILD"),
        include_dirs = ["absl"],
        merged_archive = "libabsl_all.a",
        shared = True,
        package = "libabsl-dev",
        libs = ABSL_LIBS,
        aliases = ABSL_TARGETS,
        alias_actual = "//:absl",
    )
    _maybe(
        system_library,
        name = "com_google_protobuf",
        build_file = Label("//third_party/protobuf:protobuf.BUILD"),
        include_dirs = ["google/protobuf"],
        libs = ["libprotobuf.a"],
        shared = True,
        package = "libprotobuf-dev protobuf-compiler",
        tools = ["protoc"],
    )
    _maybe(
        system_library,
        name = "com_google_googletest",
        build_file = Label("//third_party/googletest:googletest.BUILD"),
        include_dirs = ["gtest", "gmock"],
        libs = ["libgtest.a", "libgtest_main.a", "libgmock.a"],
        package = "libgtest-dev libgmock-dev",
    )
    _maybe(
        system_library,
        name = "com_github_google_benchmark",
        build_file = Label("//third_party/benchmark:benchmark.BUILD"),
        include_dirs = ["benchmark"],
        libs = ["libbenchmark.so.1debian"],
        package = "libbenchmark-dev",
    )
    _maybe(
        cuda_toolkit,
        name = "local_cuda",
        build_file = Label("//third_party/cuda:cuda.BUILD"),
    )
