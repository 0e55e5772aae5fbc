#!/usr/bin/env python3
# Turns one bench/run.sh run (rows.tsv, compare.tsv, hyperfine JSON) into
# latest.md, latest.json and a gnuplot script for latest.svg.
#   report.py OUTDIR PREFIX MODE
import glob
import json
import os
import platform
import re
import subprocess
import sys
import time

out_dir, prefix, mode = sys.argv[1], sys.argv[2], sys.argv[3]

# Baseline of each row: first matching id prefix wins.
BASELINES = [
    ("p1min.", "p1min.bwrap"), ("p1.", "p1.bwrap"),
    ("p2.", "p2.floor"), ("p3.", "p3.bwrap"), ("p4.", "p4.bwrap"),
    ("p5.ppid", "p5.ppidu"), ("p5.docker", "p5.dockerbpf"),
    ("p5.", "p5.unconfined"),
    ("net.floor", "net.floor"), ("net.", "net.host"),
    ("relay.lat", "relay.latdirect"), ("relay.", "relay.direct"),
]


def pct(xs, q):
    xs = sorted(xs)
    if not xs:
        return None
    k = (len(xs) - 1) * q
    lo = int(k)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


def sh(cmd):
    try:
        return subprocess.run(cmd, shell=True, capture_output=True, text=True,
                              timeout=10).stdout.strip()
    except Exception:
        return ""


# hyperfine results, merged over rounds (times in seconds -> ms)
times = {}
for f in sorted(glob.glob(os.path.join(out_dir, "*.r*.json"))):
    with open(f) as fh:
        for r in json.load(fh)["results"]:
            times.setdefault(r["command"], []).extend(t * 1e3 for t in r["times"])

rows = []
with open(os.path.join(out_dir, "rows.tsv")) as fh:
    for line in fh:
        g, rid, label, who, kind, status, data = line.rstrip("\n").split("\t", 6)
        row = {"group": g, "id": rid, "label": label, "as": who, "kind": kind}
        if status == "na":
            row.update(status="n/a", reason=data)
        elif status == "timeout":
            # Past its deadline: the command and what it printed.
            row.update(status="timeout", reason=data)
        elif kind.startswith("value:"):
            xs = [float(x) for x in data.split()]
            row.update(status="ok", unit=kind.split(":", 1)[1], samples=xs,
                       median=pct(xs, 0.5), p90=pct(xs, 0.9), min=min(xs))
        else:
            xs = times.get(rid, [])
            if not xs:
                row.update(status="n/a", reason="hyperfine produced no samples (see run output)")
            else:
                row.update(status="ok", unit="ms", command=data, n=len(xs),
                           median=pct(xs, 0.5), p90=pct(xs, 0.9), min=min(xs))
                if kind.startswith("batch:"):
                    row["launches_per_s"] = int(kind[6:]) / (row["median"] / 1e3)
        rows.append(row)

by_id = {r["id"]: r for r in rows}
for r in rows:
    base_id = None
    for pre, b in BASELINES:
        if r["id"].startswith(pre):
            base_id = b + "." + r["as"]
            break
    r["baseline"] = base_id
    b = by_id.get(base_id)
    if r["status"] == "ok" and b and b["status"] == "ok" and b["median"]:
        r["ratio"] = r["median"] / b["median"]


def check(value, target):
    m = re.match(r"([≤≥])\s*([\d.]+)", target)
    if not m or value is None:
        return None
    lim = float(m.group(2))
    return value <= lim if m.group(1) == "≤" else value >= lim


comps = []
with open(os.path.join(out_dir, "compare.tsv")) as fh:
    for line in fh:
        label, a, b, kind, target = line.rstrip("\n").split("\t")
        ra, rb = by_id.get(a), by_id.get(b) if b else None
        c = {"label": label, "a": a, "b": b or None, "kind": kind, "target": target,
             "value": None}
        ok_a = ra and ra["status"] == "ok"
        ok_b = rb and rb["status"] == "ok"
        if kind == "value" and ok_a:
            c["value"], c["unit"] = ra["median"], ra["unit"]
        elif ok_a and ok_b:
            if kind == "ratio":
                c["value"], c["unit"] = ra["median"] / rb["median"], "×"
                if ra.get("min") and rb.get("min"):
                    # Minima are far steadier than medians on a shared host.
                    c["min_ratio"] = ra["min"] / rb["min"]
            elif kind == "rate":   # same batch size: rate ratio is the inverse time ratio
                c["value"], c["unit"] = rb["median"] / ra["median"], "×"
            elif kind == "diff":
                c["value"], c["unit"] = ra["median"] - rb["median"], "ms"
        if c["value"] is None:
            miss = [x for x in (ra, rb) if x is not None and x["status"] != "ok"]
            c["reason"] = "; ".join(x["id"] + (" timeout" if x["status"] == "timeout" else " n/a")
                                    for x in miss) or "row missing"
        c["met"] = check(c["value"], target)
        comps.append(c)

machine = {
    "date_utc": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    "mode": mode,
    "kernel": platform.release(),
    "os": sh(". /etc/os-release && echo $PRETTY_NAME"),
    "cpu": sh("grep -m1 'model name' /proc/cpuinfo | cut -d: -f2").strip(),
    "cpus": os.cpu_count(),
    "loadavg_at_report": sh("cut -d' ' -f1-3 /proc/loadavg"),
    "cloister_commit": sh("git rev-parse --short HEAD") + (" (dirty)" if sh("git status --porcelain -uno") else ""),
    "hyperfine": sh("hyperfine --version"),
    "bwrap": sh("bwrap --version"),
    "cgroups": "v2" if sh("stat -fc %T /sys/fs/cgroup") == "cgroup2fs" else "v1 hybrid",
}


def fmt(r, key):
    v = r.get(key)
    if v is None:
        return "n/a"
    if r.get("unit") == "ms":
        return f"{v:.2f} ms" if v < 100 else f"{v:.0f} ms"
    return f"{v:.0f} {r['unit']}"


def fmt_cmp(c):
    v = c["value"]
    if v is None:
        return "n/a"
    if c["unit"] == "×":
        return f"{v:.2f}×" + (f" (minima: {c['min_ratio']:.2f}×)" if "min_ratio" in c else "")
    return f"{v:+.2f} ms" if c["unit"] == "ms" else f"{v:.0f} {c['unit']}"


md = []
md.append(f"# cloister bench ({mode}), {machine['date_utc']}\n")
md.append(f"Machine: {machine['cpu']}, {machine['cpus']} CPUs, {machine['os']}, kernel "
          f"{machine['kernel']}, cgroups {machine['cgroups']}; load average at the end "
          f"{machine['loadavg_at_report']}. cloister {machine['cloister_commit']}, "
          f"{machine['hyperfine']}, {machine['bwrap']}.\n")
md.append("`as`: `user` = unprivileged (cloister-test when the bench runs as root), `root` = root. Times are wall "
          "clock per launch from hyperfine (-N, no shell), all rows of a group measured "
          "in the same run, rounds interleaved. `× base` is the median over the "
          "baseline row's median. Targets are judged on medians; the ratio of the "
          "minima is shown too, as it moves much less when other work shares the CPUs.\n")
md.append("## Targets\n")
md.append("| comparison | value | target | met |")
md.append("|---|---|---|---|")
for c in comps:
    met = {True: "yes", False: "**no**", None: "—"}[c["met"]]
    val = fmt_cmp(c) if c["value"] is not None else f"n/a ({c['reason']})"
    md.append(f"| {c['label']} | {val} | {c['target']} | {met} |")
md.append("\n## Rows\n")
md.append("| row | what runs | as | median | p90 | min | × base | base |")
md.append("|---|---|---|---|---|---|---|---|")
for r in rows:
    if r["status"] != "ok":
        st = "timeout" if r["status"] == "timeout" else "n/a"
        md.append(f"| {r['id']} | {r['label']} | {r['as']} | {st} | n/a | n/a | n/a | "
                  f"{r['reason'].replace('|', '/')} |")
        continue
    med = fmt(r, "median")
    if "launches_per_s" in r:
        med += f" per batch ({r['launches_per_s']:.0f} launches/s)"
    ratio = f"{r['ratio']:.2f}×" if "ratio" in r else "—"
    md.append(f"| {r['id']} | {r['label']} | {r['as']} | {med} | {fmt(r, 'p90')} | "
              f"{fmt(r, 'min')} | {ratio} | {r['baseline'] or '—'} |")
md.append(f"\n![launch latency]({os.path.basename(prefix)}.svg)\n")
with open(prefix + ".md", "w") as fh:
    fh.write("\n".join(md))
with open(prefix + ".json", "w") as fh:
    json.dump({"machine": machine, "targets": comps, "rows": rows}, fh, indent=1)

# Plot: per-launch latency rows only (throughput, memory and the getppid
# loop have other units; they are in the table).
plot = [r for r in rows if r["status"] == "ok" and r["kind"] == "lat"
        and not r["id"].startswith("p5.ppid")]
with open(prefix + ".dat", "w") as fh:
    for r in plot:
        fh.write(f"\"{r['id']}\" {r['median']:.4f} {r['p90']:.4f}\n")
svg = os.path.basename(prefix) + ".svg"
dat = os.path.basename(prefix) + ".dat"
with open(prefix + ".gp", "w") as fh:
    fh.write(f"""set terminal svg size {max(640, 60 * len(plot) + 160)},480 dynamic font 'sans,11'
cd '{os.path.dirname(os.path.abspath(prefix))}'
set output '{svg}'
set title "cloister bench ({mode}) {machine['date_utc']}: wall time per launch, median and p90"
set ylabel 'ms'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set xtics rotate by -40 nomirror
set grid ytics
set key top right
set yrange [0:*]
plot '{dat}' using 2:xtic(1) title 'median', '' using 3 title 'p90'
""")
