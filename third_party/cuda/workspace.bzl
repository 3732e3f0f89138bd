"""The CUDA toolkit as a local repository, found through CUDA_PATH (default /usr/local/cuda);
declared by //:repositories.bzl."""

def _cuda_toolkit_impl(ctx):
    root = ctx.os.environ.get("CUDA_PATH", "/usr/local/cuda")
    for needed in ["include/cuda.h", "include/nvrtc.h", "lib64/libcudart_static.a"]:
        if not ctx.path(root + "/" + needed).exists:
            fail(("tiletune: no CUDA toolkit found at %s (%s is missing): install the CUDA " +
                  "13 toolkit or set CUDA_PATH to its folder (@%s is declared by " +
                  "tiletune_dependencies() in @tiletune//:repositories.bzl)") % (root, needed, ctx.name))
    ctx.symlink(root + "/include", "include")
    ctx.symlink(root + "/lib64", "lib64")
    ctx.symlink(ctx.attr.build_file, "BUILD.bazel")
    ctx.file("WORKSPACE", "workspace(name = \"%s\")\n" % ctx.name)
    ctx.file("cuda_path.bzl", "CUDA_PATH = %r\n" % root)

cuda_toolkit = repository_rule(
    implementation = _cuda_toolkit_impl,
    attrs = {"build_file": attr.label(mandatory = True, allow_single_file = True)},
    environ = ["CUDA_PATH"],
    local = True,
)
