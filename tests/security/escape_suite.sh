#!/bin/bash
# Escape-attempt suite (issue #14): every attack of build/tests/escprobe
# (tests/security/probes/) runs once on the bare host, to show it is real
# there (the control), then under each sandbox wrapper below, as whoever
# runs the suite (tests/run.sh: root, then the unprivileged test user).
#   gate wrappers: one PASS/FAIL line per probe (blocked, or the outcome
#                  listed in EXPECT with its reason);
#   info wrappers: recorded only ("info" lines), never failing.
# ESC_RESULTS=FILE appends one tab-separated row per run for the table in
# docs/security.md (tests/security/probes/escape_table.sh).
source "$(dirname "$0")/../lib.sh"
PROBE=$HELPERS/escprobe
TTYRUN=(python3 "$TOP/tests/helpers/ttyrun.py")
IDENT=$(is_root && echo root || echo user)
[ -x "$PROBE" ] || { echo "FAIL $TFILE: build/tests/escprobe not built (make check builds it)"; exit 1; }

# Sandbox wrappers: NAME MODE [BASE [VAR=VALUE...]]. argv_NAME PROBE ARGS...
# sets ARGV to the command line that runs the probe in that sandbox; a
# wrapper with a BASE runs BASE's command line with the variables set, so
# a new column is one line, e.g. cloister-as-bwrap with a hardening policy:
#	"cbwrap_policy gate cbwrap CLOISTER_BWRAP_POLICY=/path/to/policy"
# (EXPECT entries are per wrapper: a new column expects every attack
# blocked until told otherwise.)
WRAPPERS=(
	"run gate"      # cloister run, defaults (+ the limits in res_opts)
	"cbwrap gate"   # cloister's bwrap front-end, Smithers' bubblewrap argv
	# the same, with the opt-in hardening policy (docs/bwrap.md)
	'cbwrap_policy gate cbwrap CLOISTER_BWRAP_POLICY=$FIX/policy.json'
	"bwrap info"    # Debian's /usr/bin/bwrap, the same argv
)

# Outcomes other than "blocked" that a gate wrapper is expected to show,
# with the reason (wrapper:probe -> reason). Each is still a PASS/FAIL line:
# if the outcome changes, the line goes red and this table must be updated.
# The bwrap front-end keeps bwrap's defaults (docs/bwrap.md), and Smithers'
# argv asks for no seccomp filter, no new session, no limits and (as root)
# keeps root: what Debian's bwrap allows with it, cloister's allows too.
declare -A EXPECT=()
expect() {  # WRAPPER REASON PROBE...
	local w=$1 why=$2 p; shift 2
	for p in "$@"; do EXPECT[$w:$p]=$why; done
}
expect cbwrap "bwrap mode shares the caller's terminal, as bwrap does, and Smithers' argv has no --new-session (Smithers itself spawns bwrap detached, in a new session with pipes, so no terminal reaches it there)" \
	tty_tiocsti tty_tiocsti_hibits tty_line_discipline tty_window_size tty_termios
expect cbwrap "no seccomp filter in Smithers' argv (bwrap applies none unless given --seccomp)" \
	abi_int80 add_key keyctl_user_keyring io_uring_setup perf_event_open userfaultfd \
	personality_no_aslr personality_read_implies_exec vsock_socket vsock_socket_hibits \
	ns_unshare_user ns_clone_newuser ns_clone3_newuser
expect cbwrap "bwrap has no limits; Smithers' argv sets none (its tmpfs /tmp has no size)" \
	res_fork_bomb res_memory_bomb res_tmpfs_fill
expect cbwrap "bwrap has no output limit; Smithers caps output itself (maxOutputBytes)" res_output_flood
expect cbwrap "bwrap passes the caller's open fds on (that is how --file/--args FD work); Smithers' spawn gives the sandbox only stdio" \
	files_leaked_fds
# No init_* entry: bwrap mode keeps init dumpable only when --info-fd or
# --json-status-fd publish its child-pid (Smithers' argv does neither), and
# then the supervisor still believes only init's own pid
# (tests/security/sync_forge.sh).
expect cbwrap_policy "bwrap passes the caller's open fds on; the policy does not change what the argv asks for (Smithers' spawn gives the sandbox only stdio)" \
	files_leaked_fds
if is_root; then
	expect cbwrap "root caller: bwrap maps the sandbox's uid 0 to host root, the owner of init's /proc/1/fd even with init non-dumpable: its fd numbers list, none of them opens (init_steal_fd, init_exe_handle)" init_fds
	expect cbwrap_policy "root caller: as for cbwrap, the sandbox's uid 0 owns init's /proc/1/fd: fd numbers list, none opens" init_fds
	expect cbwrap "root caller: bwrap maps root to root and keeps its capabilities inside the new user namespace (Debian's bwrap does the same with this argv); host root's powers over /proc/sys, raw sockets, mounts and setuid programs follow" \
		priv_capability_sets_zero priv_setuid_gains_nothing priv_proc_sys_write priv_core_pattern_write \
		mount_tmpfs mount_remount_root_rw mount_fsopen mount_open_tree mount_setattr_clear_ro mount_chroot \
		net_raw_socket net_packet_socket net_netlink_link_change ns_unshare_mount_net reboot
fi

# ---- fixture (one for the whole suite; removed on exit) ----
FIX=$(mktemp -d /tmp/cltest-esc.XXXXXX)
# The sandbox's ids must be able to read the request dir (a root caller's
# sandbox is an unprivileged host id).
chmod 755 "$FIX"
PROJECT=$FIX/project                          # Smithers' rootDir
SBX=$PROJECT/.smithers/sandboxes/run-1/sandbox-1
OTHER=$PROJECT/.smithers/sandboxes/other-run/other-sandbox
HOSTONLY=$FIX/hostonly                        # the caller's cwd, never bound
SECRET=$HOSTONLY/secret.txt
mkdir -p "$SBX/request" "$SBX/result" "$OTHER/result" "$HOSTONLY"
chmod -R a+rX "$PROJECT"
chmod 777 "$SBX/result"
: >"$PROJECT/.smithers/cloister.db"
echo "host secret" >"$SECRET"; chmod 600 "$SECRET"; chmod 700 "$HOSTONLY"
cp "$PROBE" "$SBX/request/escprobe"
# The runtime binary the overwrite probe aims at: a copy the caller owns
# (an installed cloister is often root's; a caller's own build is not).
mkdir -p "$FIX/bin"; cp "$CL" "$FIX/bin/cloister"
MARK="clmark-esc-$$"
# Host services the network probes aim at, in one process that is also the
# host pid the process probes aim at.
python3 - "$FIX" "$MARK" <<'PY' &
import os, socket, sys, time
fix, mark = sys.argv[1], sys.argv[2]
t = socket.socket(); t.bind(("127.0.0.1", 0)); t.listen(64)
a = socket.socket(socket.AF_UNIX); a.bind("\0" + mark); a.listen(64)
u = socket.socket(socket.AF_UNIX); u.bind(fix + "/host.sock"); u.listen(64)
open(fix + "/port.tmp", "w").write(str(t.getsockname()[1]))
os.rename(fix + "/port.tmp", fix + "/port")
time.sleep(3600)
PY
LISTENER=$!
cleanup() { kill "$LISTENER" 2>/dev/null; wait "$LISTENER" 2>/dev/null; rm -rf "$FIX"; }
trap cleanup EXIT
wait_until test -s "$FIX/port" || { echo "FAIL $TFILE: host listener did not start"; exit 1; }
PORT=$(cat "$FIX/port")
CTX=(pid=$LISTENER port=$PORT abs=$MARK upath=$FIX/host.sock secret=$SECRET
     exe=$FIX/bin/cloister statedir=$PROJECT/.smithers)

# ---- wrappers ----
argv_host() { ARGV=("$PROBE" "$@"); }
# Limits the resource probes run with under `cloister run` (the defaults
# bound tasks and /tmp; memory and output need an option), and what the
# suite expects when this host cannot apply them.
res_opts() {
	case $1 in
	res_memory_bomb) [ $MEM_OK = 1 ] && echo --memory 256m ;;
	res_output_flood) echo --output-limit 1m ;;
	esac
}
MEM_OK=0
"$CL" run --memory 256m -- true 2>/dev/null && MEM_OK=1
[ $MEM_OK = 1 ] || expect cbwrap_policy "OPEN: no cgroup this caller may use here (cloister check: --memory no), so the policy can set no memory or task limit (and Smithers' /tmp has no size)" \
	res_fork_bomb res_memory_bomb res_tmpfs_fill
[ $MEM_OK = 1 ] || EXPECT[run:res_memory_bomb]="OPEN: no cgroup this caller may use here (cloister check: --memory no), so no memory limit can be set"
argv_run() {
	ARGV=("$CL" run --ro "$SBX/request:/workspace" -w /workspace $(res_opts "$1") -- /workspace/escprobe "$@")
}
# Smithers' bubblewrapArgs (sandbox-0.32.0 src/effect/process-runner.js):
# no volumes, allowNetwork false, its default PATH; the command goes
# through `/bin/sh -lc`.
smithers_argv() {  # BWRAP-BINARY PROBE ARGS...
	local b=$1 p; shift
	ARGV=("$b" --die-with-parent --clearenv --unshare-user --unshare-pid --unshare-ipc
	      --unshare-uts --unshare-cgroup --proc /proc --dev /dev --tmpfs /tmp
	      --ro-bind "$SBX/request" /workspace --bind "$SBX/result" /result --chdir /workspace
	      --setenv PATH /usr/local/bin:/usr/bin:/bin --unshare-net)
	for p in /usr /bin /lib /lib64; do [ -e $p ] && ARGV+=(--ro-bind $p $p); done
	ARGV+=(/bin/sh -lc "exec /workspace/escprobe $*")
}
# The hardening policy an unchanged client gets from /etc/cloister/bwrap.json
# (here through CLOISTER_BWRAP_POLICY): cloister's seccomp profile, a new
# session, a pty of the sandbox's own for stdio on a terminal, no
# capabilities, the /proc masks, a timeout, an output cap, and the cgroup
# limits where this caller has a cgroup for them.
POLICY_LIMITS=""
[ $MEM_OK = 1 ] && POLICY_LIMITS='"memory":"256m","pids":256,'
printf '{%s"timeout":120,"output_limit":"1m","seccomp":"default","new_session":true,"own_tty":true,"drop_capabilities":true,"proc_masks":true}\n' \
	"$POLICY_LIMITS" >"$FIX/policy.json"
chmod 644 "$FIX/policy.json"
argv_cbwrap() { smithers_argv "$CL" "$@"; ARGV=("${ARGV[0]}" bwrap "${ARGV[@]:1}"); }
argv_bwrap() { smithers_argv /usr/bin/bwrap "$@"; }
# Derived wrappers (a BASE in WRAPPERS): BASE's argv under env VAR=VALUE...
for w in "${WRAPPERS[@]}"; do
	set -- $w
	[ $# -ge 3 ] || continue
	eval "argv_$1() { argv_$3 \"\$@\"; ARGV=(env ${*:4} \"\${ARGV[@]}\"); }"
done

# ---- running one probe ----
# attempt WRAPPER PROBE: runs it from the caller's directory with fd 7 open
# on the secret (the leaks the probes look for); sets VERDICT (blocked,
# escaped, broken) and LINE.
attempt() {
	local w=$1 p=$2 rc o
	"argv_$w" "$p" "${CTX[@]}"
	case $p in
	tty_*) attempt_tty; return ;;
	res_output_flood) attempt_flood; return ;;
	esac
	o=$(cd "$HOSTONLY" && "${ARGV[@]}" 7<"$SECRET" 2>&1); rc=$?
	LINE=$(printf '%s\n' "$o" | grep -E '^(blocked|ESCAPED|probe error): ' | tail -n 1)
	[ -n "$LINE" ] || LINE="exit $rc: $(printf '%s' "$o" | tail -n 2 | tr '\n' ' ')"
	case $rc in
	0) VERDICT=blocked ;;
	1) VERDICT=escaped ;;
	137) # a memory limit's OOM kill may take the whole sandbox (tmpfs
	     # pages are charged to the sandbox's memory cgroup too)
		case $p in
		res_memory_bomb|res_tmpfs_fill) VERDICT=blocked LINE="the sandbox was OOM-killed" ;;
		*) VERDICT=broken ;;
		esac ;;
	*) VERDICT=broken ;;
	esac
}
# Terminal attacks: on a fresh terminal, as the caller's shell sees it
# before and after, with every signal its foreground group gets trapped.
attempt_tty() {
	local o before after
	o=$(cd "$HOSTONLY" && "${TTYRUN[@]}" -- bash -c '
		p=$1; shift
		for s in WINCH INT QUIT TSTP HUP USR1 USR2 TTIN TTOU CONT; do trap "echo caught-$s" $s; done
		echo "before $("$p" ttystate)"
		"$@" 7<&-; echo "rc=$?"
		echo "after $("$p" ttystate)"' _ "$PROBE" "${ARGV[@]}" 2>&1 | tr -d '\r')
	before=$(printf '%s\n' "$o" | sed -n 's/^before //p')
	after=$(printf '%s\n' "$o" | sed -n 's/^after //p')
	LINE=$(printf '%s\n' "$o" | grep -E '^(TIOC|TCSETS|fd0 )' | tail -n 1)
	if [ -z "$before" ]; then
		VERDICT=broken LINE="no terminal state: $(printf '%s' "$o" | tail -n 2 | tr '\n' ' ')"
	elif ! printf '%s\n' "$o" | grep -q '^rc='; then
		VERDICT=escaped LINE="the caller's terminal died ($LINE)"
	elif [ "$before" != "$after" ]; then
		VERDICT=escaped LINE="caller's terminal changed: $before -> $after ($LINE)"
	elif printf '%s\n' "$o" | grep -q caught-; then
		VERDICT=escaped LINE="caller's group got $(printf '%s\n' "$o" | grep -o 'caught-[A-Z]*' | sort -u | tr '\n' ' ')($LINE)"
	else
		VERDICT=blocked LINE="caller's terminal untouched ($LINE)"
	fi
}
# Output flood: what reaches the caller (16 MiB written; 1 MiB allowed).
attempt_flood() {
	local n f
	f=$(mktemp "$FIX/flood.XXXXXX")
	(cd "$HOSTONLY" && "${ARGV[@]}" 7<&- >"$f" 2>/dev/null)
	n=$(stat -c %s "$f"); rm -f "$f"
	if [ "$n" -le $((1 << 20)) ]; then VERDICT=blocked LINE="$n bytes reached the caller"
	else VERDICT=escaped LINE="$n bytes reached the caller"; fi
}

record() {  # WRAPPER PROBE
	[ -n "${ESC_RESULTS:-}" ] || return 0
	printf '%s\t%s\t%s\t%s\t%s\n' "$IDENT" "$1" "$2" "$VERDICT" "$LINE" >>"$ESC_RESULTS"
}

# A gate test: blocked, or exactly the outcome EXPECT names.
check_gate() {  # WRAPPER PROBE
	local want=blocked why=${EXPECT[$1:$2]:-}
	[ -z "$why" ] || want=escaped
	attempt "$1" "$2"; record "$1" "$2"
	[ "$VERDICT" = "$want" ] && return 0
	[ "$VERDICT" = escaped ] && fail "ESCAPED under $1: $LINE"
	[ -n "$why" ] && fail "expected escaped ($why), got $VERDICT: $LINE (update EXPECT)"
	fail "$VERDICT under $1: $LINE"
}
# Controls whose outcome is the host kernel's choice (legacy_tiocsti=0
# refuses TIOCSTI; clone3 needs Linux >= 5.3 and user namespaces): run once
# before the tests, they decide whether the attack must work on the host and
# whether cbwrap (no filter, the kernel decides) is expected to let it through.
HOSTDEP=" tty_tiocsti tty_tiocsti_hibits ns_clone3_newuser "
declare -A HOSTL=()
# A control test: the attack works on the bare host (for a host-dependent
# probe: the test notes which case the host is, and the gates follow it).
check_control() {  # PROBE
	if [[ "$HOSTDEP" == *" $1 "* ]]; then
		VERDICT=${HOSTV[$1]:-}; LINE=${HOSTL[$1]:-}; record host "$1"
		case $VERDICT in
		escaped) note "host: the attack works ($LINE)" ;;
		blocked) note "host kernel refuses it ($LINE): every wrapper must block it" ;;
		*) fail "control: $VERDICT on the bare host: $LINE" ;;
		esac
		return
	fi
	attempt host "$1"; record host "$1"
	[ "$VERDICT" = escaped ] || fail "control: the attack does not work on the bare host ($VERDICT: $LINE); the probe is broken or this host stops it"
}
# Informational runs: one line each, never a test result.
declare -A HOSTV=()
info() {  # WRAPPER PROBE
	attempt "$1" "$2"; record "$1" "$2"
	[ "$1" = host ] && HOSTV[$2]=$VERDICT
	echo "info $IDENT $1/$2: $VERDICT: $LINE"
}

# ---- a setup race (CVE-2021-30465 class) ----
# A sandbox that can write a directory swaps, as fast as it can, entries
# in it between a directory and a symlink out of the sandbox (absolute and
# walking up) while the caller starts sandboxes that mount tmpfs below
# those entries. Every launch must either mount inside its own tree or fail
# cleanly (125), and nothing may appear in the host directory the links
# point to. (No host control: it is cloister's own setup that is raced.)
t_run__setup_symlink_swap_race() {
	local d=$T_TMP/shared out=$T_TMP/outside a i rc
	rw_id_probe
	mkdir -p "$d" "$out"; chmod 777 "$d" "$out"
	"$CL" run "${RW_ID[@]}" --ro "$SBX/request:/workspace" --rw "$d:/d" -- \
		/workspace/escprobe swap /d "$out" >"$T_TMP/a.out" 2>&1 &
	a=$!
	wait_until test -e "$d/ready" || fail "the swapping sandbox did not start: $(cat "$T_TMP/a.out")"
	for i in $(seq 60); do
		"$CL" run "${RW_ID[@]}" --rw "$d:/w" --tmpfs /w/x/m --tmpfs /w/y/m --tmpfs /w/z/m \
			--tmpfs /w/w/m -- true 2>"$T_TMP/b.err"; rc=$?
		case $rc in
		0) ;;
		125) [ "$(wc -l <"$T_TMP/b.err")" = 1 ] || fail "launch $i: not one line: $(cat "$T_TMP/b.err")" ;;
		*) fail "launch $i: exit $rc: $(cat "$T_TMP/b.err")" ;;
		esac
		[ -z "$(ls -A "$out")" ] || fail "launch $i created $(ls -A "$out") in the host directory the links point to"
	done
	touch "$d/stop"; wait "$a"
	grep -qF "$T_TMP" /proc/self/mountinfo && fail "a mount was left on the host: $(grep -F "$T_TMP" /proc/self/mountinfo)"
	assert_contains "$(cat "$T_TMP/a.out")" "swaps done" "the swapping sandbox"
}

# ---- the tests: one per probe and gate wrapper, one per meaningful control ----
declare -A CTL=()
while IFS=$'\t' read -r name family ctl note; do
	CTL[$name]=$ctl
	case $ctl in
	host) eval "t_host__$name() { check_control $name; }" ;;
	root) is_root && eval "t_host__$name() { check_control $name; }" ;;
	esac
	for w in "${WRAPPERS[@]}"; do
		set -- $w
		[ "$2" = gate ] && eval "t_${1}__$name() { check_gate $1 $name; }"
	done
done < <("$PROBE" list)

# Controls without a meaningful host result (the probe's note says why)
# and the informational wrappers, recorded before the tests; the
# host-dependent controls run here too (their tests read HOSTV).
while IFS=$'\t' read -r name family ctl note; do
	if [ "$ctl" = host ] && [[ "$HOSTDEP" == *" $name "* ]]; then
		attempt host "$name"; HOSTV[$name]=$VERDICT; HOSTL[$name]=$LINE
	fi
	case $ctl in
	info|none) info host "$name" ;;
	root) is_root || info host "$name" ;;
	esac
	for w in "${WRAPPERS[@]}"; do
		set -- $w
		[ "$2" = info ] && info "$1" "$name"
	done
done < <("$PROBE" list)

# Without a seccomp filter the bwrap front-end leaves the kernel to decide:
# where this host's kernel refuses a "depends on the host" attack itself
# (perf_event_paranoid, no vsock transport, ...), expect it refused there too.
for k in "${!EXPECT[@]}"; do
	p=${k#cbwrap:}
	[ "$k" != "$p" ] && { [ "${CTL[$p]:-}" = info ] || [[ "$HOSTDEP" == *" $p "* ]]; } &&
		[ "${HOSTV[$p]:-}" = blocked ] || continue
	echo "info $IDENT cbwrap/$p: the host refuses it, so expected blocked"
	unset "EXPECT[$k]"
done

run_tests
