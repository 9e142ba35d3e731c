#!/bin/sh
# Packs the GPU bundle (bundle.bzl): pack.sh OUT.tar.xz FOLDER SRC=DEST...
# Copies each SRC to FOLDER/DEST (binaries under bin/ are stripped), then every shared library
# that ldd resolves for a bin/ binary into FOLDER/lib/, except the C library (libc, libm, libdl,
# libpthread, librt), the dynamic loader and libcuda, which the GPU machine provides. Records the
# newest glibc symbol version the files need in FOLDER/GLIBC_REQUIRED and puts this machine's
# glibc (loader, libc, libm and the libdl/libpthread/librt stubs) in FOLDER/lib/glibc/, which
# run.sh uses only on a machine whose glibc is older than that. Writes a reproducible tar.xz
# (sorted names, zero times and owners; xz -1: a third of -6's time for 15% more bytes).
set -eu
out=$1
folder=$2
shift 2
work=$(mktemp -d "${TMPDIR:-/tmp}/gpu_bundle.XXXXXX")
trap 'rm -rf "$work"' EXIT
root=$work/$folder
mkdir -p "$root/bin" "$root/lib"
for entry in "$@"; do
  src=${entry%%=*}
  dest=${entry#*=}
  mkdir -p "$(dirname "$root/$dest")"
  cp -L "$src" "$root/$dest"
  chmod u+w "$root/$dest"
  case $dest in
    bin/*) strip --strip-all "$root/$dest" ;;
    *.so) strip --strip-unneeded "$root/$dest" ;;
  esac
done
for binary in "$root"/bin/*; do
  ldd "$binary" >"$work/ldd.txt"
  while read -r name arrow path _; do
    [ "$arrow" = "=>" ] || continue
    case $name in
      libc.so.* | libm.so.* | libdl.so.* | libpthread.so.* | librt.so.* | ld-linux* | libcuda.so*) continue ;;
    esac
    if [ "$path" = "not" ]; then
      echo "pack.sh: $binary needs $name, which ldd does not find" >&2
      exit 1
    fi
    case $name in
      libLLVM*)
        echo "pack.sh: $binary links $name; it must link LLVM statically (STATIC_LLVM_LINKOPTS)" >&2
        exit 1
        ;;
    esac
    [ -e "$root/lib/$name" ] || cp -L "$path" "$root/lib/$name"
  done <"$work/ldd.txt"
done
objdump -T "$root"/bin/* "$root"/lib/*.so* 2>/dev/null | grep -o 'GLIBC_[0-9][0-9.]*' | sort -u -V |
  tail -n 1 >"$root/GLIBC_REQUIRED"
mkdir -p "$root/lib/glibc"
libc=$(ldd "$root/bin/$(ls "$root/bin" | head -n 1)" | awk '$1 == "libc.so.6" { print $3 }')
libdir=$(dirname "$libc")
loader=$(ldd "$root/bin/$(ls "$root/bin" | head -n 1)" | awk '$1 ~ /ld-linux/ { print $1 }')
cp -L "$loader" "$root/lib/glibc/$(basename "$loader")"
for name in libc.so.6 libm.so.6 libdl.so.2 libpthread.so.0 librt.so.1; do
  cp -L "$libdir/$name" "$root/lib/glibc/$name"
done
chmod -R a+rX,go-w "$root"
tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -C "$work" -cf - "$folder" |
  xz -1 -T2 >"$out"
