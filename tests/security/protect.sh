#!/bin/bash
# Behaviours that only a test keeps (issue #16, item 2), each checked so it
# fails when the behaviour is broken (tests/mutate/mutations.tsv breaks
# each one on purpose): every /proc mask one by one, read-only binds that
# stay read-only below, ambient --cap-add for a non-root sandbox user, no
# capability left with seccomp out of the way, init holding neither
# capabilities nor setup fds, and cloister run inside `unshare -r`.
source "$(dirname "$0")/../lib.sh"
SC=${CORE_SECCOMP:---seccomp=default}

MASK_FILES="kcore keys timer_list sched_debug latency_stats timer_stats kallsyms kpagecount kpageflags kpagecgroup"
MASK_DIRS="acpi scsi asound driver"
RO_ENTRIES="sys sysrq-trigger irq bus fs"

# The sandbox's mountinfo line whose mount point is $1 (field 5).
mi_line() { printf '%s\n' "$MI" | awk -v mp="$1" '$5 == mp'; }

t_proc_masks_one_by_one() {
	clr run "$SC" -- cat /proc/self/mountinfo
	assert_eq 0 "$RC" "run ($ERR)"
	MI=$OUT
	local f l n=0
	for f in $MASK_FILES; do
		[ -e "/proc/$f" ] || continue   # this kernel has no such entry
		l=$(mi_line "/proc/$f")
		[ -n "$l" ] || fail "/proc/$f is not masked"
		assert_eq /null "$(echo "$l" | awk '{print $4}')" "/proc/$f masked with /dev/null"
		n=$((n + 1))
	done
	[ "$n" -ge 5 ] || fail "only $n mask files exist here: the check proves little"
	for f in $MASK_DIRS; do
		[ -d "/proc/$f" ] || continue
		l=$(mi_line "/proc/$f")
		[ -n "$l" ] || fail "/proc/$f is not masked"
		case $l in *" - tmpfs "*) ;; *) fail "/proc/$f not covered by a tmpfs: $l" ;; esac
		case $(echo "$l" | awk '{print $6}') in ro,*) ;; *) fail "/proc/$f cover not read-only: $l" ;; esac
	done
	for f in $RO_ENTRIES; do
		[ -e "/proc/$f" ] || continue
		l=$(mi_line "/proc/$f")
		[ -n "$l" ] || fail "/proc/$f is not a mount of its own"
		case $(echo "$l" | awk '{print $6}') in ro,*) ;; *) fail "/proc/$f not read-only: $l" ;; esac
	done
}

# What the masks show: nothing, whoever reads.
t_proc_masked_contents_empty() {
	local f list="" d
	for f in $MASK_FILES; do [ -e "/proc/$f" ] && list="$list $f"; done
	clr run "$SC" --uid 0 -- sh -c 'for f in "$@"; do printf "%s %s\n" "$f" "$(head -c 64 "/proc/$f" 2>/dev/null | wc -c)"; done' _ $list
	assert_eq 0 "$RC" "run ($ERR)"
	for f in $list; do
		assert_contains "$OUT" "$f 0" "/proc/$f reads empty inside"
	done
	for d in $MASK_DIRS; do
		[ -d "/proc/$d" ] || continue
		clr run "$SC" -- ls -A "/proc/$d"
		assert_eq "" "$OUT" "/proc/$d lists nothing inside"
	done
	# The host side of /proc/keys is not empty for the caller (it has a
	# session keyring at least), so "empty" inside means masked.
	clr run "$SC" -- cat /proc/keys
	assert_eq "" "$OUT" "/proc/keys inside"
}

# A submount under a read-only bind source is read-only too (recursive),
# in a mount namespace of the test's own.
t_ro_bind_submount_readonly() {
	mkdir -p "$T_TMP/src/sub"
	local un=(unshare -m --propagation private)
	is_root || un=(unshare -Urm --propagation private)
	"${un[@]}" sh -c 'mount -t tmpfs sub "$1/src/sub" && touch "$1/src/sub/host-can" &&
		exec "$2" run "$3" --ro "$1/src:/src" -- sh -c "touch /src/sub/x 2>/dev/null && echo wrote; touch /src/y 2>/dev/null && echo wrote-top; ls /src/sub"' \
		_ "$T_TMP" "$CL" "$SC" >"$T_TMP/out" 2>&1
	assert_eq "host-can" "$(cat "$T_TMP/out")" "the submount is visible and read-only"
}

# bwrap --ro-bind / /: /dev/shm (a submount of the host's /) stays
# read-only, as with bwrap.
t_bwrap_ro_bind_root_recursive() {
	[ -d /dev/shm ] && [ -w /dev/shm ] || fail "the host has no writable /dev/shm to test with"
	local f=/dev/shm/clmark-${T_TMP##*.}
	# (Under --ro-bind / / the host's /dev is nodev, as with bwrap: no
	# redirection to /dev/null in here.)
	"$CL" bwrap --ro-bind / / sh -c "touch $f && echo wrote" >"$T_TMP/out" 2>"$T_TMP/err"
	[ ! -e "$f" ] || { rm -f "$f"; fail "wrote $f through --ro-bind / /"; }
	assert_eq "" "$(cat "$T_TMP/out")" "output"
	assert_contains "$(cat "$T_TMP/err")" "Read-only file system" "why touch failed"
}

# Host device nodes bound into /dev are nosuid and noexec.
t_dev_nodes_nosuid_noexec() {
	clr run "$SC" -- cat /proc/self/mountinfo
	MI=$OUT
	local n l
	for n in null zero full random urandom tty; do
		l=$(mi_line "/dev/$n")
		[ -n "$l" ] || fail "/dev/$n is not a bind of the host's node"
		case ",$(echo "$l" | awk '{print $6}')," in *,nosuid,*) ;; *) fail "/dev/$n not nosuid: $l" ;; esac
		case ",$(echo "$l" | awk '{print $6}')," in *,noexec,*) ;; *) fail "/dev/$n not noexec: $l" ;; esac
	done
}

# --cap-add for a non-root sandbox user must be ambient to survive exec:
# binding a port below 1024 works with it and fails without.
t_cap_add_reaches_non_root_command() {
	local py='import socket
s = socket.socket()
try:
    s.bind(("127.0.0.1", 80)); print("bound")
except PermissionError: print("denied")'
	clr run "$SC" --uid 1000 --cap-add NET_BIND_SERVICE -- sh -c "grep CapAmb /proc/self/status; python3 -c '$py'"
	assert_eq 0 "$RC" "run ($ERR)"
	assert_contains "$OUT" "CapAmb:	0000000000000400" "ambient set"
	assert_contains "$OUT" "bound" "port 80 as uid 1000 with NET_BIND_SERVICE"
	clr run "$SC" --uid 1000 -- python3 -c "$py"
	assert_eq denied "$OUT" "port 80 as uid 1000 without it"
}

# With seccomp out of the way, only the capability drop stops a mount:
# every set is empty and mount(2) fails with EPERM.
t_no_capabilities_even_unconfined() {
	clr run --seccomp unconfined --uid 0 -- sh -c 'grep -E "^Cap(Inh|Prm|Eff|Bnd|Amb)" /proc/self/status; mount -t tmpfs none /tmp 2>&1 && echo MOUNTED; unshare -m true 2>/dev/null && echo UNSHARED; echo end'
	assert_eq 0 "$RC" "run ($ERR)"
	local s
	for s in CapInh CapPrm CapEff CapBnd CapAmb; do
		assert_contains "$OUT" "$s:	0000000000000000" "$s"
	done
	assert_not_contains "$OUT" "MOUNTED" "mount with no capabilities"
	assert_contains "$OUT" "end"
}

# init (pid 1 of the sandbox) while the command runs: no capabilities and
# no fd but stdio, the signalfd it forwards signals with and its sync socket
# (no mount trees, /proc, lock or report fds left from setup).
t_init_holds_no_caps_and_no_setup_fds() {
	local m; m=$(marker init)
	mkfifo gate
	"$CL" run "$SC" -- sh -c "read x || :; : $m" <gate >/dev/null 2>"$T_TMP/err" &
	local pid=$! init="" fds caps
	exec 9>gate
	init_up() { init=$(pgrep -P "$pid" | head -1); [ -n "$init" ] && [ -n "$(pgrep -P "$init")" ]; }
	wait_until init_up || fail "sandbox did not start: $(cat "$T_TMP/err")"
	caps=$(grep -E '^Cap(Prm|Eff|Bnd|Amb)' "/proc/$init/status")
	fds=$(for f in /proc/$init/fd/*; do echo "${f##*/}:$(readlink "$f")"; done)
	exec 9>&-
	wait $pid
	for s in CapPrm CapEff CapBnd CapAmb; do
		assert_contains "$caps" "$s:	0000000000000000" "init's $s"
	done
	# init is non-dumpable and its memory belongs to the caller's user
	# namespace: only host root may list its fds (the user pass checks
	# the capabilities above).
	is_root || return 0
	local extra
	extra=$(printf '%s\n' "$fds" | grep -vE '^[012]:' | grep -v ':socket:' |
		grep -v ':anon_inode:\[signalfd\]' || true)
	assert_eq "" "$extra" "fds init holds besides stdio, its signalfd and its sync socket"
	[ "$(printf '%s\n' "$fds" | grep -c ':socket:')" -le 1 ] || fail "init holds several sockets: $fds"
}

# Root of a nested user namespace (a CI container, `unshare -r`) is no
# host root: cloister runs there as it does for any user.
t_runs_inside_unshare_r() {
	unshare -r "$CL" run "$SC" -- sh -c 'id -u; echo ok' >"$T_TMP/out" 2>&1
	assert_eq 0 "$?" "exit ($(cat "$T_TMP/out"))"
	assert_contains "$(cat "$T_TMP/out")" "ok"
}

run_tests
