#!/bin/sh
# Installs the peers of `make bench-peers` from Debian packages when they are missing:
# ns-2 (package ns2, the `ns` command) and ns-3 (ns3, libns3-dev) with a C++ compiler to
# build benchmarks/peers/dumbbell-ns3.cc.
set -e
missing=""
command -v ns >/dev/null 2>&1 || missing="$missing ns2"
[ -f /usr/include/ns3/core-module.h ] || missing="$missing ns3 libns3-dev"
command -v g++ >/dev/null 2>&1 || missing="$missing g++"
if [ -z "$missing" ]; then
    echo "ns-2 and ns-3 are installed"
    exit 0
fi
echo "installing:$missing"
if [ "$(id -u)" = 0 ]; then
    apt-get install -y $missing
else
    sudo apt-get install -y $missing
fi
