#!/bin/sh
# Proves a freshly built libicount.so loads into the dynamic qemu-x86_64 and
# counts exactly: a static program runs a marked loop of a known shape twice;
# both regions must give the same, non-zero count, and two runs must agree.
#   selftest.sh PATH/TO/libicount.so
set -eu
plugin=$1
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc -O1 -static -I"$here/../harness" -o "$tmp/probe" "$here/selftest_probe.c" "$here/../harness/counter_marker.c"
addr() { nm "$tmp/probe" | awk -v s="$1" '$3 == s { print "0x" $1 }'; }
args="begin=$(addr cl_marker_begin),end=$(addr cl_marker_end)"
qemu-x86_64 -plugin "$plugin,$args,out=$tmp/a" "$tmp/probe"
qemu-x86_64 -plugin "$plugin,$args,out=$tmp/b" "$tmp/probe"
cmp "$tmp/a" "$tmp/b"
[ "$(wc -l < "$tmp/a")" -eq 2 ] || { echo "selftest: expected 2 regions, got:" >&2; cat "$tmp/a" >&2; exit 1; }
[ "$(sed -n 1p "$tmp/a")" = "$(sed -n 2p "$tmp/a")" ] || { echo "selftest: equal regions differ" >&2; exit 1; }
[ "$(sed -n 1p "$tmp/a")" -gt 1000 ] || { echo "selftest: count too small" >&2; exit 1; }
# mode=ct: the same hashes in two runs; the two regions (the compiler may give each its own copy of the loop)
# make the same memory accesses; a traced region's stream has one record per instruction at least
qemu-x86_64 -plugin "$plugin,$args,out=$tmp/c,mode=ct,trace=1" "$tmp/probe"
qemu-x86_64 -plugin "$plugin,$args,out=$tmp/d,mode=ct" "$tmp/probe"
cmp "$tmp/c" "$tmp/d"
[ "$(sed -n 1p "$tmp/c" | cut -d' ' -f3-)" = "$(sed -n 2p "$tmp/c" | cut -d' ' -f3-)" ] ||
    { echo "selftest: mode=ct memory hashes of equal regions differ:" >&2; cat "$tmp/c" >&2; exit 1; }
[ "$(wc -c < "$tmp/c.trace1")" -ge $((16 * $(sed -n 1p "$tmp/a"))) ] || { echo "selftest: trace too short" >&2; exit 1; }
echo "icount selftest: 2 regions of $(sed -n 1p "$tmp/a") guest instructions, identical in two runs; mode=ct hashes equal"
