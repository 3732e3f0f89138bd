"""Google Benchmark, found in the system prefix (Debian package libbenchmark-dev)."""

load("//third_party:system_library.bzl", "system_library")

def benchmark_repository():
    system_library(
        name = "com_github_google_benchmark",
        build_file = "//third_party/benchmark:benchmark.BUILD",
        include_dirs = ["benchmark"],
        libs = ["libbenchmark.so.1debian"],
        package = "libbenchmark-dev",
    )
