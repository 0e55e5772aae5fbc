#!/bin/bash
# Brings up a Docker engine for tests/integration/docker.sh (root only):
# starts Debian's dockerd unless a daemon already answers on the socket,
# and imports the test image (a static busybox, no registry needed).
#   dockerd.sh up IMAGE     prints nothing on success; the log is under $DOCKERD_DIR
#   dockerd.sh down         stops the dockerd this script started (by its pid file)
#                           once no other user of it is left; one that was
#                           already running is left alone
# Users: every "up" leaves a lease named after $DOCKERD_USER (the calling
# suite's pid; export it, as the tests' own subshells have other pids) and
# "down" removes it. Suites run at the same time share one daemon, so the
# one that started it must not stop it under another one still running.
set -eu
DOCKERD_DIR=${DOCKERD_DIR:-/tmp/cloister-dockerd}
SOCK=/var/run/docker.sock
USERS=$DOCKERD_DIR/users
ME=${DOCKERD_USER:-$PPID}
# The docker.io client (the engine's own version); any client on PATH
# would do, this one is always there once the package is.
CLI=/usr/bin/docker
[ -x "$CLI" ] || CLI=$(command -v docker)

answers() { timeout 5 "$CLI" -H "unix://$SOCK" version >/dev/null 2>&1; }

start() {
	local pid
	mkdir -p "$DOCKERD_DIR"
	# Own session: the test's process group may be killed on a timeout,
	# the daemon must outlive it (containers are cleaned by the tests).
	setsid /usr/sbin/dockerd --exec-opt native.cgroupdriver=cgroupfs \
		</dev/null >>"$DOCKERD_DIR/dockerd.log" 2>&1 &
	pid=$!
	echo "$pid" >"$DOCKERD_DIR/pid"
	# dockerd answers in about a second here; 60 s covers a cold CI disk.
	for _ in $(seq 600); do
		answers && return 0
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	echo "dockerd did not come up; last lines of $DOCKERD_DIR/dockerd.log:" >&2
	tail -5 "$DOCKERD_DIR/dockerd.log" >&2
	return 1
}

import_image() {  # IMAGE
	local root
	"$CLI" image inspect "$1" >/dev/null 2>&1 && return 0
	root=$(mktemp -d "${TMPDIR:-/tmp}/cloister-img.XXXXXX")
	mkdir -p "$root/bin" "$root/etc" "$root/tmp" "$root/proc" "$root/dev" "$root/sys"
	chmod 1777 "$root/tmp"
	cp /bin/busybox "$root/bin/busybox"
	for app in $(/bin/busybox --list); do
		[ "$app" = busybox ] || ln -s busybox "$root/bin/$app"
	done
	echo 'root:x:0:0:root:/:/bin/sh' >"$root/etc/passwd"
	echo 'root:x:0:' >"$root/etc/group"
	tar -C "$root" -c . | "$CLI" import -c 'ENV PATH=/bin' - "$1" >/dev/null
	rm -rf "$root"
}

case "${1:-}" in
up)
	[ "$(id -u)" = 0 ] || { echo "dockerd.sh: needs root" >&2; exit 1; }
	[ -x /usr/sbin/dockerd ] || { echo "dockerd.sh: docker.io is not installed (tests/deps.sh install)" >&2; exit 1; }
	if ! ldd /bin/busybox >/dev/null 2>&1 && [ -x /bin/busybox ]; then :; else
		echo "dockerd.sh: /bin/busybox is not the static one (busybox-static)" >&2; exit 1
	fi
	# The lease first: a "down" of another suite from now on sees us.
	mkdir -p "$USERS" && : >"$USERS/$ME"
	answers || start
	import_image "${2:?image name}"
	;;
down)
	rm -f "$USERS/$ME"
	# Another suite that is still running keeps the daemon (the last
	# one out stops it); a lease whose suite is gone does not count.
	for u in "$USERS"/*; do
		[ -e "$u" ] || continue
		kill -0 "${u##*/}" 2>/dev/null && exit 0
		rm -f "$u"
	done
	# Only a daemon this script started (its pid file), and only once it
	# has exited (its containerd goes with it) is it reported down.
	if [ -s "$DOCKERD_DIR/pid" ]; then
		pid=$(cat "$DOCKERD_DIR/pid")
		if kill "$pid" 2>/dev/null; then
			for _ in $(seq 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
			kill -0 "$pid" 2>/dev/null && { echo "dockerd.sh: dockerd $pid did not stop" >&2; exit 1; }
		fi
		rm -f "$DOCKERD_DIR/pid"
	fi
	;;
*) echo "usage: dockerd.sh up IMAGE | down" >&2; exit 2 ;;
esac
