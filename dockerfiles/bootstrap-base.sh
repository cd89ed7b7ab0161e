#!/bin/sh
# Makes the root file system of the base image `debian:bookworm` when no
# container registry can be reached: a minbase Debian built by mmdebstrap from
# the host's own Debian apt sources, with the host's apt settings that those
# sources need (a snapshot mirror may need Check-Valid-Until false; a proxy).
# lab/images.py then imports the tarball as debian:bookworm.
#
#   bootstrap-base.sh OUT.tar SOURCES_FILE [SUITE]
#
# SOURCES_FILE holds the host's Debian entries only (deb822 .sources or
# one-line .list), as lab/images.py extracts them.
set -eu
out=$1 sources=$2 suite=${3:-bookworm}
command -v mmdebstrap >/dev/null || {
    echo "bootstrap-base: mmdebstrap is missing (apt-get install mmdebstrap)" >&2
    exit 1
}
set --
for key in Acquire::Check-Valid-Until Acquire::http::Proxy Acquire::https::Proxy; do
    value=$(apt-config dump "$key" | sed -n "s/^$key \"\\(.*\\)\";\$/\\1/p" | head -n 1)
    [ -n "$value" ] && set -- "$@" "--aptopt=$key \"$value\";"
done
exec mmdebstrap --variant=minbase --format=tar --aptopt='Acquire::Languages "none";' "$@" \
    "$suite" "$out" "$sources"
