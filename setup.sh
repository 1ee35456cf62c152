#!/usr/bin/env bash
# One-time setup of the MRC lab (root; idempotent; Debian 12 / Ubuntu 22.04+).
#   sudo ./setup.sh
# Installs the apt packages, makes the project venv .venv (from
# /usr/bin/python3 with system site-packages, so apt's Mininet is visible),
# installs the pinned Python requirements and the project into it, builds
# the switch programs, starts Open vSwitch, and says what this kernel offers. Re-running it changes
# nothing and takes seconds.
set -euo pipefail
cd "$(dirname "$0")"
ROOT=$(pwd)

say() { printf '\033[1msetup:\033[0m %s\n' "$*"; }
die() { printf 'setup: error: %s\n' "$*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || die "run as root: sudo ./setup.sh"
command -v apt-get >/dev/null || die "needs apt (Debian 12 or Ubuntu 22.04+)"

APT_PACKAGES=(mininet openvswitch-switch ethtool iputils-ping iproute2 tcpdump
              clang llvm libbpf-dev linux-libc-dev gcc python3-venv python3-dev
              python-is-python3   # the README's `sudo python ...`: sudo's PATH has only /usr/bin-like dirs
              openssh-server)     # sshd for the tests' second server (tests/cluster_harness.py, docs/cluster.md)
missing=()
for pkg in "${APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
    say "installing apt packages: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
    say "apt packages present"
fi
# The tests start an sshd of their own, inside a namespace; the lab opens no port. So when this
# script installed openssh-server, the system service the package starts and enables is stopped
# and disabled (an sshd someone installed before is left alone).
if [[ " ${missing[*]} " == *" openssh-server "* ]]; then
    if [ -d /run/systemd/system ]; then
        for unit in ssh.socket ssh.service; do
            if systemctl cat "$unit" >/dev/null 2>&1; then systemctl disable --now -q "$unit"; fi
        done
    elif [ -x /etc/init.d/ssh ]; then   # no systemd: the package's init script may have started it
        update-rc.d ssh disable >/dev/null 2>&1 || true
        invoke-rc.d ssh stop >/dev/null 2>&1 || true   # refused where policy-rc.d kept it from starting
    fi
    say "openssh-server installed for the tests; its system service is stopped and disabled"
fi
# A headless browser: the tests open a run's page from the file system (tests/browser.py).
# Debian calls it chromium, Ubuntu chromium-browser.
if ! command -v chromium >/dev/null && ! command -v chromium-browser >/dev/null; then
    browser=chromium
    apt-cache show chromium >/dev/null 2>&1 || browser=chromium-browser
    say "installing $browser (the tests open a run's page in it)"
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -qq --no-install-recommends "$browser" >/dev/null \
        || { apt-get update -qq && apt-get install -y -qq --no-install-recommends "$browser" >/dev/null; } \
        || die "$browser not installable: the tests need a headless Chromium"
fi
# bpftool (the port program's loader uses it): its own package on Debian,
# part of linux-tools on Ubuntu.
if ! command -v bpftool >/dev/null; then
    if apt-cache show bpftool >/dev/null 2>&1; then
        apt-get install -y -qq bpftool >/dev/null
    else
        apt-get install -y -qq "linux-tools-$(uname -r)" linux-tools-common >/dev/null \
            || die "bpftool not installable: install bpftool (Debian) or linux-tools-\$(uname -r) (Ubuntu)"
    fi
fi

PY=/usr/bin/python3
"$PY" -c 'import mininet.net' 2>/dev/null || die "apt's mininet is not importable by $PY"
if [ ! -x .venv/bin/python ]; then
    say "creating .venv"
    "$PY" -m venv --system-site-packages .venv
fi
stamp=.venv/.requirements.sha256
want=$(cat requirements.txt pyproject.toml | sha256sum | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    say "installing pinned Python requirements into .venv"
    .venv/bin/python -m pip install -q --disable-pip-version-check -r requirements.txt
    .venv/bin/python -m pip install -q --disable-pip-version-check --no-deps --no-build-isolation -e .
    echo "$want" > "$stamp"
else
    say "Python requirements up to date"
fi
.venv/bin/python -c 'import os_ken, scapy, mininet, matplotlib, typer, mrc_host, topologies, lab' \
    || die "the venv cannot import the lab's packages"

say "building the switch programs (eBPF)"
build_bpf() {  # SOURCE OBJECT: compiled again only when the source changed
    if [ ! -f "$2" ] || [ "$1" -nt "$2" ]; then sh topologies/port_program/build_bpf.sh "$1" "$2"; fi
}
build_bpf topologies/port_program/port_program.c build/port_program.o       # every switch port: trimming, ECN, faults
build_bpf topologies/srv6/un_program.c build/un_program.o      # srv6 routers' uN End where seg6local is missing

# Open vSwitch: started here so the lab finds it running (the lab starts it too if needed).
if ! ovs-vsctl --timeout=3 show >/dev/null 2>&1; then
    say "starting Open vSwitch"
    /usr/share/openvswitch/scripts/ovs-ctl start --system-id=random >/dev/null
fi
say "$(.venv/bin/python -m lab.kernel_offers)"
say "done. Next: sudo python lab/run.py check"
