"""Builds the accelmem wheel from the package sources and the compiled extension.

    build_wheel.py --out DIST.whl --version V --tag cp311-cp311-linux_x86_64 \
        --ext path/to/_accelmem.so FILE... (accelmem/*.py, *.pyi, py.typed)

The archive is reproducible (sorted entries, fixed timestamps) and follows the wheel format
(https://packaging.python.org/en/latest/specifications/binary-distribution-format/): the
package under accelmem/, and accelmem-V.dist-info/ with METADATA, WHEEL and RECORD (a sha256
and size per file).
"""

import argparse
import base64
import hashlib
import os
import zipfile

SUMMARY = "Memory management for accelerator compilers and runtimes (tile IR, passes, " \
          "placement, sparse runtime)"


def record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return "%s,sha256=%s,%d" % (name, digest, len(data))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    parser.add_argument("--version", required=True)
    parser.add_argument("--tag", required=True)
    parser.add_argument("--python-version", required=True)
    parser.add_argument("--ext", required=True)
    parser.add_argument("files", nargs="+")
    args = parser.parse_args()

    entries = {}
    for path in args.files:
        parts = path.replace(os.sep, "/").split("/")
        name = "/".join(parts[parts.index("accelmem"):])
        with open(path, "rb") as f:
            entries[name] = f.read()
    with open(args.ext, "rb") as f:
        entries["accelmem/_accelmem.so"] = f.read()

    dist_info = "accelmem-%s.dist-info" % args.version
    entries[dist_info + "/METADATA"] = "\n".join([
        "Metadata-Version: 2.1",
        "Name: accelmem",
        "Version: %s" % args.version,
        "Summary: %s" % SUMMARY,
        "License: Apache-2.0",
        "Requires-Python: ==%s.*" % args.python_version,
        "Requires-Dist: numpy",
        "",
        "Python bindings of accelmem: tile IR, memory passes, placement planner, sparse runtime.",
        "",
    ]).encode()
    entries[dist_info + "/WHEEL"] = "\n".join([
        "Wheel-Version: 1.0",
        "Generator: accelmem build_wheel.py",
        "Root-Is-Purelib: false",
        "Tag: %s" % args.tag,
        "",
    ]).encode()
    record = [record_line(n, d) for n, d in sorted(entries.items())]
    record.append("%s/RECORD,," % dist_info)
    entries[dist_info + "/RECORD"] = ("\n".join(record) + "\n").encode()

    with zipfile.ZipFile(args.out, "w", compression=zipfile.ZIP_DEFLATED) as whl:
        # dist-info last, as the format recommends.
        names = sorted(entries, key=lambda n: (n.startswith(dist_info), n))
        for name in names:
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            mode = 0o755 if name.endswith(".so") else 0o644
            info.external_attr = (0o100000 | mode) << 16
            whl.writestr(info, entries[name])


if __name__ == "__main__":
    main()
