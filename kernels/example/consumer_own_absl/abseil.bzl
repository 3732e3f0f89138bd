"""consumer_abseil: an abseil repository with abseil's own layout, made from the system's
abseil (Debian's libabsl-dev): the headers in their packages (absl/strings/str_cat.h in
//absl/strings), one cc_library per target of abseil's BUILD files that this workspace or
tiletune uses, all linking the system's archives. It stands for "a workspace that brings its
own abseil": it shares no file or target name with tiletune's stand-in."""

# Package -> the targets abseil's BUILD files define there (those used here).
_TARGETS = {
    "absl/base": ["base", "core_headers"],
    "absl/container": ["flat_hash_map", "flat_hash_set", "inlined_vector"],
    "absl/flags": ["commandlineflag", "flag", "reflection"],
    "absl/functional": ["function_ref"],
    "absl/status": ["status", "statusor"],
    "absl/strings": ["strings", "str_format"],
    "absl/synchronization": ["synchronization"],
    "absl/time": ["time"],
    "absl/types": ["optional", "span"],
}

def _consumer_abseil_impl(ctx):
    include = ctx.path("/usr/include/absl")
    if not include.exists:
        fail("consumer_abseil: /usr/include/absl not found: install libabsl-dev")
    # Every header, linked into a real folder of this repository so that BUILD files fit.
    found = ctx.execute(["find", str(include), "-name", "*.h", "-o", "-name", "*.inc"])
    for header in found.stdout.splitlines():
        ctx.symlink(header, "absl" + header[len(str(include)):])
    archives = ctx.execute(["sh", "-c", "ls /usr/lib/*-linux-gnu/libabsl_*.a"]).stdout.splitlines()
    script = ["create lib/libabsl.a"] + ["addlib " + a for a in archives] + ["save", "end", ""]
    ctx.file("lib/merge.mri", "\n".join(script))
    if ctx.execute(["sh", "-c", "ar -M < lib/merge.mri"]).return_code != 0:
        fail("consumer_abseil: merging the system's abseil archives failed")
    ctx.file("lib/BUILD.bazel", "\n".join([
        "cc_library(",
        "    name = \"archives\",",
        "    srcs = [\"libabsl.a\"],",
        "    linkopts = [\"-lpthread\"],",
        "    visibility = [\"//visibility:public\"],",
        ")",
        "",
    ]))
    for package, names in _TARGETS.items():
        lines = []
        for name in names:
            lines += [
                "cc_library(",
                "    name = %r," % name,
                "    hdrs = glob([\"**/*.h\", \"**/*.inc\"]),",
                "    deps = [\"//lib:archives\"],",
                "    visibility = [\"//visibility:public\"],",
                ")",
                "",
            ]
        ctx.file(package + "/BUILD.bazel", "\n".join(lines))
    ctx.file("WORKSPACE", "workspace(name = \"com_google_absl\")\n")
    ctx.file("BUILD.bazel", "")

consumer_abseil = repository_rule(implementation = _consumer_abseil_impl, local = True)
