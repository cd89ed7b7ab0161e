#!/bin/sh
# Per-target layer: the GNU toolchain for one triple.
#   toolchain.sh native                          gcc + libc6-dev of the image itself
#   toolchain.sh TRIPLE DEBIAN_ARCH              gcc-TRIPLE + libc6-dev-DEBIAN_ARCH-cross
# The cross C library is named explicitly: gcc-TRIPLE alone does not always
# pull the -dev package that static links (libc.a) need.
set -eu
export DEBIAN_FRONTEND=noninteractive
if [ "$1" = native ]; then
    pkgs="gcc libc6-dev"
else
    triple=$1 debarch=$2
    pkgs="gcc-$triple libc6-dev-$debarch-cross"
fi
apt-get update -qq
# shellcheck disable=SC2086  # word splitting of the package list is intended
apt-get install -y -qq --no-install-recommends $pkgs >/dev/null
apt-get clean
rm -rf /var/lib/apt/lists/*
