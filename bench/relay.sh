#!/bin/bash
# NET rows of `make bench`: --publish relay throughput and connection setup
# against a direct loopback connection, same tool, same run.
#   relay.sh SAMPLES BYTES CONNS CLOISTER BLAST SCRATCH
# Prints rows.tsv lines for bench/report.py (values: MB/s and us); a failed
# or timed-out sample goes to stderr with its command and output.
# Each sample starts its client only after the server (sandboxed or not)
# printed blast's readiness line "listening PORT", so the client cannot
# reach the --publish port before the server inside listens. A sample that
# fails anyway is tried again, RETRIES times in all, then reported.
set -u
n=$1 bytes=$2 conns=$3 CL=$4 BLAST=$5 SCRATCH=$6
READY_S=${CLOISTER_BENCH_READY_S:-20} SAMPLE_S=${CLOISTER_BENCH_SAMPLE_S:-120} RETRIES=3
mkdir -p "$SCRATCH"
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
row() { printf 'RELAY\t%s.user\t%s\tuser\tvalue:%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "$5"; }

# sample SERVER-CMD... :: CLIENT-CMD...: prints the client's figure.
# The port is substituted for @P. Returns non-zero (message on stderr) when
# the server never got ready, the client failed, or either ran past its
# deadline.
sample() {
	local p log s out rc=0 t why
	local -a srv=() cli=()
	p=$(port); log=$(mktemp "$SCRATCH/srv.XXXXXX")
	while [ "$1" != :: ]; do srv+=("${1//@P/$p}"); shift; done; shift
	for a in "$@"; do cli+=("${a//@P/$p}"); done
	timeout -k 5 "$SAMPLE_S" "${srv[@]}" >"$log" 2>&1 & s=$!
	for ((t = 0; t < READY_S * 100; t++)); do
		grep -q "^listening " "$log" && break
		kill -0 $s 2>/dev/null || break
		sleep 0.01
	done
	if ! grep -q "^listening " "$log"; then
		kill -0 $s 2>/dev/null && why="not ready after ${READY_S}s" || why="exited before it was ready"
		kill $s 2>/dev/null; wait $s
		echo "server $why: ${srv[*]}: $(tr '\n' ' ' <"$log")" >&2
		return 1
	fi
	out=$(timeout -k 5 "$SAMPLE_S" "${cli[@]}" 2>&1) || rc=$?
	[ $rc = 0 ] || kill $s 2>/dev/null
	wait $s || [ $rc != 0 ] || rc=$?
	if [ $rc != 0 ]; then
		[ $rc = 124 ] && out="timeout after ${SAMPLE_S}s: $out"
		echo "sample failed (exit $rc): ${cli[*]} against ${srv[*]}: $(printf '%s' "$out" | tr '\n' ' ') $(tr '\n' ' ' <"$log")" >&2
		return 1
	fi
	printf '%s\n' "$out" | tail -1
}
# tries NAME ARGS...: sample, again up to RETRIES times; appends to $NAME.
tries() {
	local var=$1 v i; shift
	for ((i = 1; i <= RETRIES; i++)); do
		v=$(sample "$@") && { printf -v "$var" '%s %s' "${!var}" "$v"; return 0; }
		echo "  (try $i of $RETRIES)" >&2
	done
	printf -v "${var}_fail" '%s' "failed $RETRIES tries (see bench output)"
}

direct="" relay="" ldirect="" lrelay="" direct_fail="" relay_fail="" ldirect_fail="" lrelay_fail=""
PUB=("$CL" run --ro "$BLAST:/blast" --publish "@P:9000" --)
for _ in $(seq "$n"); do
	tries direct "$BLAST" sink @P 1 :: "$BLAST" send @P "$bytes"
	tries relay "${PUB[@]}" /blast sink 9000 1 :: "$BLAST" send @P "$bytes"
	tries ldirect "$BLAST" echo @P $((conns + 1)) :: "$BLAST" connlat @P "$conns"
	tries lrelay "${PUB[@]}" /blast echo 9000 $((conns + 1)) :: "$BLAST" connlat @P "$conns"
done
mb=$((bytes / 1048576))
emit() {  # id label unit var
	local v=$4 f=${4}_fail
	if [ -n "${!v}" ]; then row "$1" "$2" "$3" ok "${!v# }"
	else printf 'RELAY\t%s.user\t%s\tuser\tvalue:%s\tna\t%s\n' "$1" "$2" "$3" "${!f:-no sample}"; fi
}
emit relay.direct "direct loopback, $mb MiB (MB/s)" MB/s direct
emit relay.publish "through --publish relay, $mb MiB (MB/s)" MB/s relay
emit relay.latdirect "direct loopback connect + 1-byte round trip (us)" us ldirect
emit relay.latrelay "through --publish: connect + 1-byte round trip (us)" us lrelay
