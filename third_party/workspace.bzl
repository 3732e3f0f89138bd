"""Every external repository tiletune uses, all found on the local machine."""

load("//third_party/absl:workspace.bzl", "absl_repository")
load("//third_party/benchmark:workspace.bzl", "benchmark_repository")
load("//third_party/cuda:workspace.bzl", "cuda_repository")
load("//third_party/googletest:workspace.bzl", "googletest_repository")
load("//third_party/protobuf:workspace.bzl", "protobuf_repository")

def tiletune_repositories():
    absl_repository()
    benchmark_repository()
    cuda_repository()
    googletest_repository()
    protobuf_repository()
