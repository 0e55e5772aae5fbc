#!/bin/bash
# Lists or installs the Debian packages cloister needs to build, test and
# benchmark. `tests/deps.sh install` installs what is missing when root,
# otherwise names exactly what is missing and fails.
set -u
BUILD="gcc make pkg-config libjansson-dev libcurl4-openssl-dev libcap-dev libmnl-dev libseccomp-dev libnl-route-3-dev libsqlite3-dev libgit2-dev libssl3"
# libgit2-dev: its headers at build time; src/workspace/wsdl.c dlopens
# libgit2.so.1.5 (and libcrypto.so.3 from libssl3) for workspace diffs.
# dpkg-dev, xz-utils and python3-seccomp: tests/bwrap/upstream.sh unpacks
# bubblewrap's source package and runs its seccomp test; libcap2-bin:
# capsh, which both suites use to compare capability sets.
# ripgrep, socat, curl: srt refuses to start without rg and socat, and the
# client scenarios (tests/bwrap/clients.sh) fetch from a local server with
# curl. The clients, bun and the Smithers packages come from npm: node's
# own npm, which this machine kind has (Debian's npm package would replace
# that node), so npm is not listed here.
# clang and libclang-rt-14-dev (libFuzzer and the sanitizer runtimes;
# only a recommendation of clang-14), cppcheck, clang-tidy and valgrind:
# make fuzz, lint and check-valgrind (tests/integration/fuzz.sh, lint.sh).
# hyperfine, gnuplot-nox: tests/integration/bench_harness.sh runs bench/run.sh.
# git: tests/integration/workspace.sh checks that git apply accepts the
# bundle's diffs, and bench P6 compares with git add -A && git diff --cached.
TEST="docker.io openssh-server openssh-client bubblewrap iproute2 procps python3 util-linux busybox-static dpkg-dev xz-utils python3-seccomp libcap2-bin strace clang libclang-rt-14-dev cppcheck clang-tidy valgrind git ripgrep socat curl hyperfine gnuplot-nox"
BENCH="hyperfine gnuplot-nox strace linux-perf"
VM="qemu-system-x86 linux-image-amd64 cpio xz-utils kmod strace"
pkgs="$BUILD $TEST"
case " $* " in *" --bench "*) pkgs="$pkgs $BENCH" ;; esac
case " $* " in *" --vm "*) pkgs="$pkgs $VM" ;; esac

# One dpkg-query for all (make check runs this every time: a narrow run
# must not pay a query per package).
installed=" $(dpkg-query -W -f='${Package} ${Status}\n' $pkgs 2>/dev/null |
	awk '$NF == "installed" && $(NF-1) == "ok" {sub(/:.*/, "", $1); printf "%s ", $1}')"
missing=""
for p in $pkgs; do
	case $installed in *" $p "*) ;; *) missing="$missing $p" ;; esac
done
[ -z "$missing" ] && exit 0
if [ "${1:-}" != install ]; then echo "missing Debian packages:$missing"; exit 1; fi
if [ "$(id -u)" != 0 ]; then
	echo "missing Debian packages:$missing"
	echo "run as root: apt-get install$missing"
	exit 1
fi
echo "installing:$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get install -y -q --no-install-recommends $missing >/tmp/cloister-apt.log 2>&1 || {
	apt-get update -q >>/tmp/cloister-apt.log 2>&1
	apt-get install -y -q --no-install-recommends $missing >>/tmp/cloister-apt.log 2>&1
} || { tail -20 /tmp/cloister-apt.log; exit 1; }
