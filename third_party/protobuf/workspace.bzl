"""Protocol Buffers, found in the system prefix (libprotobuf-dev, protobuf-compiler)."""

load("//third_party:system_library.bzl", "system_library")

def protobuf_repository():
    system_library(
        name = "com_google_protobuf",
        build_file = "//third_party/protobuf:protobuf.BUILD",
        include_dirs = ["google/protobuf"],
        libs = ["libprotobuf.a"],
        package = "libprotobuf-dev protobuf-compiler",
        tools = ["protoc"],
    )
