#!/bin/sh
# First layer of every cipherlab image (identical in all Dockerfiles, so the
# engine builds it once and shares it): what every target needs -- clang and
# lld for --target=<triple> builds, binutils, the dynamic qemu-user emulators
# (the TCG plugin loads only into these, not into qemu-user-static), make,
# coreutils' timeout -- and the unprivileged user the lab runs as.
set -eu
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends \
    clang lld binutils make qemu-user >/dev/null
apt-get clean
rm -rf /var/lib/apt/lists/*
# uid/gid 10001: not root, and unlikely to collide with a host user.
groupadd --gid 10001 lab
useradd --uid 10001 --gid 10001 --home-dir /home/lab --create-home --shell /bin/sh lab
