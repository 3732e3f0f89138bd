"""Packs the tiletune wheel: the Python package, libtiletune.so, and the shared abseil and
protobuf libraries it needs (found as the dynamic loader finds them here), all in
tiletune/_lib, where libtiletune.so's RPATH ($ORIGIN) finds them.

    python3 kernels/python/make_wheel.py bazel-bin/kernels/python/libtiletune.so dist/
"""
import base64
import hashlib
import os
import re
import subprocess
import sys
import zipfile

CARRIED = re.compile(r"^(libabsl_\S+|libprotobuf\.so\S*)$")


def version(root):
    text = open(os.path.join(root, "compiler/base/version.h")).read()
    return re.search(r'kVersion\[\] = "([^"]+)"', text).group(1)


def carried_libraries(library):
    found = {}
    for line in subprocess.run(["ldd", library], capture_output=True, text=True, check=True).stdout.splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[1] == "=>" and CARRIED.match(parts[0]):
            if parts[2] == "not":
                sys.exit(f"make_wheel: {parts[0]}, which {library} needs, is not installed")
            found[parts[0]] = parts[2]
    return found


def main():
    library, out = sys.argv[1], sys.argv[2]
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    v = version(root)
    files = {}  # path in the wheel -> bytes
    package = os.path.join(root, "kernels/python/tiletune")
    for name in sorted(os.listdir(package)):
        if name.endswith(".py"):
            files[f"tiletune/{name}"] = open(os.path.join(package, name), "rb").read()
    files["tiletune/_lib/libtiletune.so"] = open(library, "rb").read()
    for soname, path in sorted(carried_libraries(library).items()):
        files[f"tiletune/_lib/{soname}"] = open(path, "rb").read()
    dist = f"tiletune-{v}.dist-info"
    files[f"{dist}/METADATA"] = (
        f"Metadata-Version: 2.1\nName: tiletune\nVersion: {v}\n"
        "Summary: Tuned GPU copies, im2col and col2im for CUDA arrays (PyTorch, CuPy, ...)\n"
        "Requires-Python: >=3.8\n").encode()
    files[f"{dist}/WHEEL"] = (
        "Wheel-Version: 1.0\nGenerator: tiletune make_wheel.py\nRoot-Is-Purelib: false\n"
        "Tag: py3-none-linux_x86_64\n").encode()
    record = []
    for path, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(data)}")
    record.append(f"{dist}/RECORD,,")
    files[f"{dist}/RECORD"] = ("\n".join(record) + "\n").encode()
    os.makedirs(out, exist_ok=True)
    wheel = os.path.join(out, f"tiletune-{v}-py3-none-linux_x86_64.whl")
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as z:
        for path, data in files.items():
            info = zipfile.ZipInfo(path, date_time=(2026, 1, 1, 0, 0, 0))
            info.external_attr = (0o755 if path.endswith(".so") or ".so." in path else 0o644) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data)
    print(f"make_wheel: {wheel} ({os.path.getsize(wheel) // 1024} KiB, {len(files)} files)")


if __name__ == "__main__":
    main()
