#!/bin/bash
# Fault-injection soak (`make soak`): SOAK_RUNS launches of `cloister run`
# with a workspace bind, a --publish relay and (as root) cgroup limits,
# each one broken on purpose:
#   kill    SIGKILL of cloister after a random delay (before the clone,
#           during setup, while the command runs, while it is collected);
#   signal  strace delivers SIGKILL to whichever process of the run makes
#           the Nth call of a setup syscall (clone3, mount, pivot_root, ...);
#   error   strace fails the Nth call of a setup syscall with an errno.
# After every run: no process left with the run's marker, nothing listening
# on its port, no mount of the soak's paths on the host; an injected error
# either changed nothing (the call's failure is tolerated: exit 0) or made
# cloister print one line "cloister: ..." and exit 125 (126/127 when it is
# the command's execve). At the end, after `cloister gc` (the documented
# cleanup of a SIGKILLed run's cgroup): no cgroup of any soak run, and the
# temp/state dirs cloister was pointed at (TMPDIR, XDG_*) are empty.
# Prints one line per failure and a summary; exits 1 on any failure.
#   SOAK_RUNS=500 SOAK_SEED=N tests/soak/soak.sh
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
CL=${CLOISTER:-$TOP/${CLOISTER_BUILD:-build}/cloister}
RUNS=${SOAK_RUNS:-500}
SEED=${SOAK_SEED:-$$}
RANDOM=$SEED
command -v strace >/dev/null || { echo "FAIL soak: strace is not installed (tests/deps.sh)"; exit 1; }
[ -x "$CL" ] || { echo "FAIL soak: no $CL"; exit 1; }
D=$(mktemp -d /tmp/clsoak.XXXXXX)
chmod 755 "$D"
mkdir -p "$D/tmp" "$D/run" "$D/cache" "$D/state" "$D/config"
# Everything cloister might create for itself goes under $D.
export TMPDIR=$D/tmp XDG_RUNTIME_DIR=$D/run XDG_CACHE_HOME=$D/cache XDG_STATE_HOME=$D/state \
	XDG_CONFIG_HOME=$D/config
chmod 700 "$D/run"
fails=0 n_kill=0 n_signal=0 n_error=0 n_tolerated=0 n_125=0 n_loader=0 n_msglost=0
# The sandbox cgroup dirs (<pid>-<random>) that exist now: the soak's own
# are those that appear later.
cg_dirs() { ls -d /sys/fs/cgroup/*/cloister/[0-9]*-* /sys/fs/cgroup/cloister/[0-9]*-* 2>/dev/null; }
CG_BEFORE=$(cg_dirs)
LIMITS=()
[ "$(id -u)" = 0 ] && LIMITS=(--memory 64m --pids 64)
# As root --rw is idmapped, which some filesystems cannot do (tests/lib.sh).
RW_ID=()
if [ "$(id -u)" = 0 ] && ! "$CL" run --rw "$D/tmp" -- true 2>/dev/null; then RW_ID=(--host-root); fi

bad() { echo "FAIL soak run $i ($what): $*"; fails=$((fails + 1)); }
. "$TOP/tests/soak/soak_lib.sh"
not_listening() { ! ss -Hltn "sport = :$1" 2>/dev/null | grep -q .; }
free_port() { local p; while :; do p=$((20000 + RANDOM % 30000)); not_listening $p && { echo $p; return; }; done; }
# Setup syscalls to break, and errnos to break them with.
SYSCALLS=(clone3 unshare mount umount2 pivot_root mkdir mkdirat openat open_tree move_mount fsopen
          fsconfig fsmount mount_setattr socket bind listen connect setns prctl seccomp execve
          pipe2 socketpair write read close prlimit64 setgroups setresuid capset wait4 waitid
          pidfd_open ppoll epoll_wait sendmsg recvmsg dup3 fchdir chdir)
ERRNOS=(EPERM ENOMEM EIO EACCES ENOSPC EINVAL EBADF)
# Errors a call can really return: a waitpid(WNOHANG) after SIGCHLD fails
# only with ECHILD (init then stops reaping until the next SIGCHLD, which
# an injected EBADF makes never come): the wait calls only get SIGKILLs.
# The blocking waits get EINTR, the one failure they see in practice.
# An injected close(2) failure leaves the fd open, which a real one never
# does (Linux frees the fd even when close reports an error): close only
# gets SIGKILLs.
errno_for() {  # syscall
	case $1 in
	wait4|waitid|close) return 1 ;;
	ppoll|epoll_wait) echo EINTR ;;
	*) echo "${ERRNOS[RANDOM % ${#ERRNOS[@]}]}" ;;
	esac
}

# One run of cloister: $1 the command inside, the rest what goes in front
# of cloister (strace ...). Sets PID RC ERR.
launch() {
	local inner=$1; shift
	"$@" "$CL" run "${LIMITS[@]}" "${RW_ID[@]}" --rw "$ws:/w" --publish "127.0.0.1:$port:8080" \
		-- /bin/sh -c "$inner" "$m" >"$D/out" 2>"$D/err" &
	PID=$!
}

# Waits for the run; one that is not over in 60 s hangs (a failure):
# everything with its marker is killed then. Sets RC.
finish() {
	local end=$((SECONDS + 60))
	while kill -0 $PID 2>/dev/null; do
		if [ $SECONDS -ge $end ]; then
			bad "hung: still running after 60 s: $(head -3 "$D/err" | tr '\n' '|')"
			for p in $(procs_with "$m"); do kill -KILL "$p" 2>/dev/null; done
			break
		fi
		sleep 0.02
	done
	wait $PID 2>/dev/null; RC=$?
}

# Typical duration of a whole short run, for the kill delays.
t0=$(date +%s%N)
i=0 what=probe ws=$D/ws; mkdir -p "$ws"; port=$(free_port); m=clsoak-$$-probe
launch ": $m; echo ok"; finish
T=$(( ($(date +%s%N) - t0) / 1000000 ))
[ "$(cat "$D/out")" = ok ] || { echo "FAIL soak: a plain run does not work: $(cat "$D/err")"; exit 1; }
echo "soak: $RUNS runs, seed $SEED, a plain run takes ${T} ms, $CL"

for ((i = 1; i <= RUNS; i++)); do
	m=clsoak-$$-$i ws=$D/ws$i port=$(free_port)
	mkdir -p "$ws"
	case $((RANDOM % 3)) in
	0)  # SIGKILL of cloister at a random point; half the commands exit at once
		# (the kill then lands in setup or the collect), half keep running.
		n_kill=$((n_kill + 1))
		delay=$((RANDOM % (T * 3 / 2 + 20)))
		if [ $((RANDOM % 2)) = 0 ]; then cmd=": $m; echo x >/w/f"; what="kill after ${delay} ms, short command"
		else cmd=": $m; echo x >/w/f; exec sleep 600"; what="kill after ${delay} ms, long command"; fi
		launch "$cmd"
		sleep "$(printf '0.%03d' "$delay")"
		kill -KILL $PID 2>/dev/null; wait $PID 2>/dev/null; RC=$?
		;;
	1)  # strace SIGKILLs whichever process makes the Nth call
		n_signal=$((n_signal + 1))
		sc=${SYSCALLS[RANDOM % ${#SYSCALLS[@]}]} nth=$((1 + RANDOM % 4))
		what="SIGKILL at $sc #$nth"
		launch ": $m; echo x >/w/f" strace -f -qq -o /dev/null -e trace="$sc" -e inject="$sc:signal=KILL:when=$nth"
		finish
		case $RC in 134|139) bad "cloister crashed: exit $RC: $(head -3 "$D/err")" ;; esac
		;;
	2)  # strace fails the Nth call with an errno
		n_error=$((n_error + 1))
		until sc=${SYSCALLS[RANDOM % ${#SYSCALLS[@]}]} && en=$(errno_for "$sc"); do :; done
		nth=$((1 + RANDOM % 4))
		what="$sc #$nth fails with $en"
		launch ": $m; echo x >/w/f; echo ok" strace -f -qq -o /dev/null -e trace="$sc" -e inject="$sc:error=$en:when=$nth"
		finish
		lines=$(grep -c . "$D/err")
		case $RC in
		0)  n_tolerated=$((n_tolerated + 1))
			[ "$(cat "$D/out")" = ok ] || bad "exit 0 but the command's output is '$(head -c 200 "$D/out")'" ;;
		125) n_125=$((n_125 + 1))
			# A failed write(2) can be the one that prints the message.
			if [ "$lines" = 0 ] && [ "$sc" = write ]; then n_msglost=$((n_msglost + 1))
			elif [ "$lines" != 1 ] || ! grep -q '^cloister: ' "$D/err"; then
				bad "exit 125 without one 'cloister: ' line: $(head -3 "$D/err" | tr '\n' '|')"
			fi ;;
		126|127)
			# The command's exec, or the dynamic loader of cloister itself
			# (before main: not cloister's code), say so in their own words.
			if grep -q 'error while loading shared libraries' "$D/err"; then n_loader=$((n_loader + 1))
			elif [ "$sc" != execve ]; then bad "exit $RC from $sc: $(head -3 "$D/err" | tr '\n' '|')"; fi ;;
		*)  bad "exit $RC (expected 0 or 125): $(head -3 "$D/err" | tr '\n' '|')" ;;
		esac
		;;
	esac
	settle no_procs "$m" || bad "processes left:$(procs_with "$m") ($(for p in $(procs_with "$m"); do tr '\0' ' ' </proc/$p/cmdline; echo -n '; '; done))"
	settle not_listening "$port" || bad "port $port still listening"
	! grep -qF "$D" /proc/self/mountinfo || bad "host mounts left: $(grep -F "$D" /proc/self/mountinfo | head -2)"
	rm -rf "$ws"
done

# The cgroups of SIGKILLed runs are `cloister gc`'s to remove (docs/limits.md):
# after it, no dir that appeared during the soak may be left whose owner
# (the pid in its name) is gone. (Other users' live runs may add dirs.)
cg_new() { comm -13 <(echo "$CG_BEFORE" | sort) <(cg_dirs | sort); }
cg_orphans() {
	local d pid
	for d in $(cg_new); do
		pid=${d##*/}; pid=${pid%%-*}
		[ -d /proc/$pid ] || echo "$d"
	done
}
before_gc=$(cg_orphans | wc -l)
"$CL" gc >/dev/null 2>"$D/gc.err" || { i=end what=gc; bad "cloister gc failed: $(cat "$D/gc.err")"; }
left=$(cg_orphans)
[ -z "$left" ] || { i=end what=cgroups; bad "cgroups left after gc: $(echo $left | head -c 300)"; }
stray=$(find "$D/tmp" "$D/run" "$D/cache" "$D/state" "$D/config" -mindepth 1 2>/dev/null | head -5)
[ -z "$stray" ] || { i=end what=dirs; bad "temp/state files left: $stray"; }
# What a failed check left behind goes now (only this soak's markers).
for p in $(procs_with "clsoak-$$-"); do kill -KILL "$p" 2>/dev/null; done
echo "soak: $RUNS runs ($n_kill kill, $n_signal signal, $n_error error: $n_125 failed with one line and 125, $n_tolerated tolerated, $n_loader in the dynamic loader, $n_msglost whose message write was the failed call), $before_gc cgroup dirs of killed runs before gc, $fails failures"
rm -rf "$D"
[ $fails = 0 ]
