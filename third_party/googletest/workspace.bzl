"""GoogleTest, found in the system prefix (Debian package libgtest-dev)."""

load("//third_party:system_library.bzl", "system_library")

def googletest_repository():
    system_library(
        name = "com_google_googletest",
        build_file = "//third_party/googletest:googletest.BUILD",
        include_dirs = ["gtest", "gmock"],
        libs = ["libgtest.a", "libgtest_main.a", "libgmock.a"],
        package = "libgtest-dev libgmock-dev",
    )
