#!/bin/sh
# Builds the instruction-count TCG plugin (c_src/qemu_plugin) against the
# plugin API header of the very QEMU Debian ships in these images.  Debian
# does not package that header, so it comes from Debian's qemu source
# package: a deb-src entry with the same URIs as the image's Debian sources,
# then `apt-get source qemu`.  Nothing of QEMU is copied into the repository.
#
#   build-qemu-plugin.sh PLUGIN_SOURCE_DIR OUTPUT_DIR
set -eu
src=$1 out=$2
export DEBIAN_FRONTEND=noninteractive
for f in /etc/apt/sources.list.d/*.sources; do
    [ -e "$f" ] && sed 's/^Types: deb$/Types: deb-src/' "$f" > "${f%.sources}-src.sources"
done
if [ -s /etc/apt/sources.list ]; then
    sed -n 's/^deb /deb-src /p' /etc/apt/sources.list > /etc/apt/sources.list.d/deb-src.list
fi
apt-get update -qq
apt-get install -y -qq --no-install-recommends \
    gcc libc6-dev dpkg-dev xz-utils qemu-user >/dev/null
work=$(mktemp -d)
cd "$work"
apt-get source -qq qemu >/dev/null 2>&1 || apt-get source qemu
header=$(find "$work" -path '*/include/qemu/qemu-plugin.h' | head -n 1)
[ -n "$header" ] || { echo "qemu-plugin.h not found in the qemu source package" >&2; exit 1; }
mkdir -p "$out"
make -C "$src" QEMU_PLUGIN_INCLUDE="$(dirname "$header")" OUT="$out"
# Record which QEMU the plugin was built against, and prove it loads.
dpkg-query -W -f='${Version}\n' qemu-user > "$out/qemu-version"
"$src/selftest.sh" "$out/libicount.so"
cd / && rm -rf "$work" /var/lib/apt/lists/* && apt-get clean
