"""A repository rule that exposes a library installed by the system package manager.

The repository symlinks the library's header folders and archives from the system
prefix and takes its BUILD file from the dependency's own folder in third_party/.
When something is missing, the error names the Debian package and the setup script.
"""

_LIB_DIRS = [
    "lib/x86_64-linux-gnu",
    "lib/aarch64-linux-gnu",
    "lib64",
    "lib",
]

def _find_lib_dir(ctx, prefix, probe):
    for d in _LIB_DIRS:
        if ctx.path(prefix + "/" + d + "/" + probe).exists:
            return prefix + "/" + d
    return None

def _merge_archives(ctx, lib_dir):
    # One archive instead of many: GNU ld rescans a single archive until nothing new
    # resolves, so the members' mutual dependencies need no hand-kept link order.
    script = ["create lib/%s" % ctx.attr.merged_archive]
    for lib in ctx.attr.libs:
        script.append("addlib %s/%s" % (lib_dir, lib))
    script += ["save", "end", ""]
    ctx.file("merge.mri", "\n".join(script))
    ctx.execute(["mkdir", "-p", "lib"])
    result = ctx.execute(["sh", "-c", "ar -M < merge.mri"])
    if result.return_code != 0:
        fail("tiletune: merging %s archives failed: %s" % (ctx.name, result.stderr))

def _system_library_impl(ctx):
    prefix = ctx.os.environ.get("TILETUNE_SYSTEM_PREFIX", "/usr")
    hint = "install the Debian package %s (bash third_party/setup.sh does it)" % ctx.attr.package
    for inc in ctx.attr.include_dirs:
        src = ctx.path(prefix + "/include/" + inc)
        if not src.exists:
            fail("tiletune: %s/include/%s not found: %s" % (prefix, inc, hint))
        ctx.symlink(src, "include/" + inc)
    for f in ctx.attr.include_files:
        src = ctx.path(prefix + "/include/" + f)
        if not src.exists:
            fail("tiletune: %s/include/%s not found: %s" % (prefix, f, hint))
        ctx.symlink(src, "include/" + f)
    if ctx.attr.libs:
        lib_dir = _find_lib_dir(ctx, prefix, ctx.attr.libs[0])
        if lib_dir == None:
            fail("tiletune: %s not found under %s/{%s}: %s" % (
                ctx.attr.libs[0],
                prefix,
                ",".join(_LIB_DIRS),
                hint,
            ))
        for lib in ctx.attr.libs:
            src = ctx.path(lib_dir + "/" + lib)
            if not src.exists:
                fail("tiletune: %s/%s not found: %s" % (lib_dir, lib, hint))
            if not ctx.attr.merged_archive:
                ctx.symlink(src, "lib/" + lib)
        if ctx.attr.merged_archive:
            _merge_archives(ctx, lib_dir)
    for tool in ctx.attr.tools:
        src = ctx.path(prefix + "/bin/" + tool)
        if not src.exists:
            fail("tiletune: %s/bin/%s not found: %s" % (prefix, tool, hint))
        ctx.symlink(src, "bin/" + tool)
    ctx.symlink(ctx.attr.build_file, "BUILD.bazel")
    ctx.file("WORKSPACE", "workspace(name = \"%s\")\n" % ctx.name)

system_library = repository_rule(
    implementation = _system_library_impl,
    attrs = {
        "build_file": attr.label(mandatory = True, allow_single_file = True),
        "include_dirs": attr.string_list(doc = "Folders under <prefix>/include to expose."),
        "include_files": attr.string_list(doc = "Single headers under <prefix>/include."),
        "libs": attr.string_list(doc = "Library files in the multiarch lib folder."),
        "merged_archive": attr.string(doc = "If set, merge all libs into lib/<this name>."),
        "package": attr.string(mandatory = True, doc = "Debian package(s) that provide it."),
        "tools": attr.string_list(doc = "Executables under <prefix>/bin."),
    },
    environ = ["TILETUNE_SYSTEM_PREFIX"],
    local = True,
)
