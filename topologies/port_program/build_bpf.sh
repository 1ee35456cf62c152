#!/bin/sh
# Build one of the lab's eBPF programs (a .c file under topologies/) into an object:
#   sh topologies/port_program/build_bpf.sh topologies/port_program/port_program.c build/port_program.o
#   sh topologies/port_program/build_bpf.sh topologies/srv6/un_program.c build/un_program.o
# Called by setup.sh; safe to run again. Exits non-zero with the apt
# package to install when a tool or header is missing: the lab must never
# silently run without its switch programs.
set -eu
src="$1"
out="$2"

need() {  # need TOOL-OR-FILE APT-PACKAGE
    echo "build_bpf: $1 not found; install it: apt-get install -y $2" >&2
    exit 1
}
command -v clang >/dev/null 2>&1 || need clang clang
[ -f /usr/include/bpf/bpf_helpers.h ] || need "bpf/bpf_helpers.h" libbpf-dev
[ -f /usr/include/linux/bpf.h ] || need "linux/bpf.h" linux-libc-dev

# asm/types.h lives in a multiarch directory that clang -target bpf does
# not search by itself.
multiarch=$(gcc -print-multiarch 2>/dev/null || dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo "$(uname -m)-linux-gnu")
[ -d "/usr/include/$multiarch/asm" ] || need "/usr/include/$multiarch/asm" linux-libc-dev

mkdir -p "$(dirname "$out")"
tmp="$out.tmp.$$"
# -g: BTF is required (the port program's per-port state holds a bpf_spin_lock)
clang -O2 -g -Wall -Werror -target bpf -I"/usr/include/$multiarch" \
    -c "$src" -o "$tmp"
mv -f "$tmp" "$out"
echo "build_bpf: built $out"
