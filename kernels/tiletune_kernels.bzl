"""tiletune_kernels: tuned kernels compiled at build time and linked into a program.

    load("@tiletune//kernels:tiletune_kernels.bzl", "tiletune_kernels")

    tiletune_kernels(
        name = "resnet_kernels",
        database = "h200.txtpb",          # a tuning database (text or binary)
        targets = ["sm_90a"],             # every record must be for one of these
        problems = [                      # optional: bake only these problems
            "im2col:f16:32,56,56,64:k=3:p=1",
        ],
        ptx = True,                       # also PTX, for GPUs newer than the targets
    )

    cc_binary(
        name = "app",
        srcs = ["app.cc"],
        copts = ["-std=c++17"],             # tiletune's headers are C++17
        deps = [":resnet_kernels", "@tiletune//kernels:tiletune"],
    )

At build time //kernels:bake compiles each record's tuned kernel with NVRTC (no GPU needed)
and generates a source embedding the CUBINs and the records; the cc_library it becomes
registers them when linked (alwayslink), so tiletune::Library launches those problems with
no NVRTC, no file and no environment variable. With `ptx` (the default) each kernel is also
embedded as PTX for its target's plain virtual architecture (compute_90 for sm_90a): on a
newer GPU with the same data-movement features, which takes the targets' records (see
compiler/backend/tuned_resolver.h), the driver compiles that PTX, still without NVRTC.
Anything else falls back to the JIT, or is
Unimplemented naming the problem when the JIT is off (LibraryOptions::jit, TILETUNE_JIT=0).
A database that does not read, a record for an architecture not in `targets`, or a problem
in `problems` the database lacks fails the build with that error.
"""

# tiletune's own targets, named from whichever workspace loads this file.
_BAKE = Label("//kernels:bake")
_PREBUILT = Label("//kernels:prebuilt")

def tiletune_kernels(name, database, targets = ["sm_90a"], problems = [], ptx = True, **kwargs):
    generated = name + "_baked.cc"
    if not targets:
        fail("tiletune_kernels(%r): `targets` is empty; give the architectures, e.g. [\"sm_90a\"]" % name)
    problem_flag = ""
    if problems:
        for spec in problems:
            if "'" in spec or ";" in spec:
                fail("tiletune_kernels: problem spec %r may not hold ' or ;" % spec)
        problem_flag = "--problems='%s'" % ";".join(problems)
    native.genrule(
        name = name + "_bake",
        # The tool as a source, not a tool: built once, in the target configuration the
        # rest of the build already compiles (a host build would compile it all again).
        srcs = [database, _BAKE],
        outs = [generated],
        cmd = "$(location %s) --database=$(location %s) --targets=%s --name=%s %s --ptx=%s --output=$@" % (
            _BAKE,
            database,
            ",".join(targets),
            "%s//%s:%s" % (native.repository_name() if native.repository_name() != "@" else "", native.package_name(), name),
            problem_flag,
            "true" if ptx else "false",
        ),
        message = "Baking tuned kernels for " + name,
    )
    native.cc_library(
        name = name,
        srcs = [generated],
        copts = ["-std=c++17"],
        deps = [_PREBUILT],
        alwayslink = True,
        **kwargs
    )
