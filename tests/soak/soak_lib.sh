# Helpers shared by the soaks (tests/soak/soak.sh, soak_sandbox.sh).

# marker -> pids of processes whose command line has it. (Markers are
# [a-z0-9-]: "c[l]soak-..." matches them but not this grep's own command
# line.)
procs_with() {
	local f out=""
	for f in $(grep -ls -- "${1:0:1}[${1:1:1}]${1:2}" /proc/[0-9]*/cmdline); do
		f=${f#/proc/}; f=${f%/cmdline}
		[ "$f" = $$ ] || [ "$f" = "$BASHPID" ] || out="$out $f"
	done
	echo "$out"
}
# Polls (up to 30 s: a killed run is reaped asynchronously) until "$@" holds.
settle() { local end=$((SECONDS + 30)); until "$@"; do [ $SECONDS -lt $end ] || return 1; sleep 0.02; done; }
no_procs() { [ -z "$(procs_with "$1" | tr -d ' ')" ]; }
