#!/bin/bash
# `make bench-record`: copies the last full `make bench` report (under
# build/bench/results, machine line included) into the committed
# bench/results/latest.{md,json,svg} and the block in docs/performance.md.
# Only this target writes tracked files; `make bench` never does.
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
cd "$TOP"
RES=${CLOISTER_BENCH_RESULTS:-$TOP/build/bench/results}
for f in latest.md latest.json latest.svg; do
	[ -f "$RES/$f" ] || { echo "bench-record: no $RES/$f; run make bench first" >&2; exit 125; }
done
mkdir -p bench/results
cp "$RES/latest.md" "$RES/latest.json" "$RES/latest.svg" bench/results/
python3 - docs/performance.md bench/results/latest.md <<'PY' || exit 1
import re, sys
doc, table = sys.argv[1], open(sys.argv[2]).read()
s = open(doc).read()
a, b = "<!-- bench:latest:begin -->", "<!-- bench:latest:end -->"
if a not in s or b not in s:
    sys.exit("bench-record: docs/performance.md has no bench:latest block")
table = table.replace("](latest.svg)", "](../bench/results/latest.svg)")
table = re.sub(r"^(#+) ", lambda m: "#" * (len(m.group(1)) + 2) + " ", table, flags=re.M)
s = s[:s.index(a) + len(a)] + "\n" + table.strip() + "\n" + s[s.index(b):]
open(doc, "w").write(s)
PY
echo "recorded $RES/latest.* into bench/results/ and docs/performance.md"
