#!/bin/bash
# NET rows of `make bench`: --publish relay throughput and connection setup
# against a direct loopback connection, same tool, same run.
#   relay.sh SAMPLES BYTES CONNS CLOISTER BLAST
# Prints rows.tsv lines for bench/report.py (values: MB/s and us).
set -u
n=$1 bytes=$2 conns=$3 CL=$4 BLAST=$5
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
row() { printf 'RELAY\t%s.user\t%s\tuser\tvalue:%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "$5"; }

direct="" relay="" ldirect="" lrelay=""
for _ in $(seq "$n"); do
	p=$(port); "$BLAST" sink "$p" 1 & s=$!
	direct="$direct $("$BLAST" send "$p" "$bytes")"; wait $s
	p=$(port); "$CL" run --ro "$BLAST:/blast" --publish "$p:9000" -- /blast sink 9000 1 & s=$!
	relay="$relay $("$BLAST" send "$p" "$bytes")"; wait $s
	p=$(port); "$BLAST" echo "$p" $((conns + 1)) & s=$!
	ldirect="$ldirect $("$BLAST" connlat "$p" "$conns")"; wait $s
	p=$(port); "$CL" run --ro "$BLAST:/blast" --publish "$p:9000" -- /blast echo 9000 $((conns + 1)) & s=$!
	lrelay="$lrelay $("$BLAST" connlat "$p" "$conns")"; wait $s
done
mb=$((bytes / 1048576))
row relay.direct "direct loopback, $mb MiB (MB/s)" MB/s ok "${direct# }"
row relay.publish "through --publish relay, $mb MiB (MB/s)" MB/s ok "${relay# }"
row relay.latdirect "direct loopback connect + 1-byte round trip (us)" us ok "${ldirect# }"
row relay.latrelay "through --publish: connect + 1-byte round trip (us)" us ok "${lrelay# }"
