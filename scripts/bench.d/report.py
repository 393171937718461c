#!/usr/bin/python3
# scripts/bench's report: reads DIR/results.csv (written from the guest's
# "@@," lines), prints the tables of ratios and the targets, writes
# DIR/report.txt and DIR/bench.png (gnuplot).
#   report.py DIR
import csv
import os
import subprocess
import sys

out_dir = sys.argv[1]
rows = list(csv.DictReader(open(os.path.join(out_dir, "results.csv"))))
lines = []


def say(s=""):
    print(s)
    lines.append(s)


def num(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def get(section, path, tool, size, metric):
    for r in rows:
        if (r["section"], r["path"], r["tool"], r["size"], r["metric"]) == \
                (section, path, tool, str(size), metric):
            return num(r["value"])
    return None


def pkts(section, path, tool, size):
    for r in rows:
        if (r["section"], r["path"], r["tool"], r["size"]) == (section, path, tool, str(size)):
            return int(r["rxe_pkts"] or 0)
    return None


def sizes(section):
    return sorted({int(r["size"]) for r in rows if r["section"] == section
                   and r["size"].isdigit()})


def fmt(v, prec=1):
    if v is None:
        return "-"
    if abs(v) >= 1000:
        return "%.0f" % v
    return "%.*f" % (prec, v)


def ratio(a, b):
    return None if a is None or b is None or b == 0 else a / b


def best(vals, low=True):
    vals = [v for v in vals if v is not None]
    if not vals:
        return None
    return min(vals) if low else max(vals)


def human(size):
    size = int(size)
    for unit, n in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= n and size % n == 0:
            return "%d %s" % (size // n, unit)
    return "%d B" % size


def table(head, body):
    widths = [max(len(str(r[i])) for r in [head] + body) for i in range(len(head))]
    for r in [head] + body:
        say("  " + "  ".join(str(c).rjust(w) if i else str(c).ljust(w)
                             for i, (c, w) in enumerate(zip(r, widths))))


SB, RSP = "sdp_bench", "rspreload+sdp_bench"

try:
    say("Tree: %s" % open(os.path.join(out_dir, "revision.txt")).read().strip())
except OSError:
    pass

# ---- was the host busy with other VMs? (scripts/bench samples every 5 s)
load = []
try:
    for ln in open(os.path.join(out_dir, "host-load.txt")):
        f = ln.split()
        if len(f) == 2:
            load.append((int(f[0]), float(f[1])))
except OSError:
    pass
if load:
    busy = sum(1 for n, _ in load if n > 1)
    if busy:
        say("WARNING: another VM ran on this host during %d%% of the bench (load average up to"
            % (100 * busy // len(load)))
        say("%.1f on %d cores): all paths are slowed unevenly; rerun on an idle host before"
            % (max(l for _, l in load), os.cpu_count()))
        say("trusting any ratio below.")
    else:
        say("Host: no other VM ran during the bench (load average up to %.1f on %d cores)."
            % (max(l for _, l in load), os.cpu_count()))
    say()

# ---- latency
say("Ping-pong round trip, µs: median / p99 (rstream and qperf give a mean only).")
say("Ratios use each path's best tool: SDP/rs = SDP over rsockets, SDP/TCP likewise.")
head = ["size", "verbs", "rs rstream", "rs preload", "TCP", "SDP", "SDP/rs", "SDP/TCP"]
body = []
for s in sizes("lat"):
    mp = lambda p, t: "%s / %s" % (fmt(get("lat", p, t, s, "rtt_median_us")),
                                   fmt(get("lat", p, t, s, "rtt_p99_us")))
    sdp = get("lat", "SDP", SB, s, "rtt_median_us")
    rs = best([get("lat", "rsockets", "rstream", s, "rtt_mean_us"),
               get("lat", "rsockets", RSP, s, "rtt_median_us")])
    tcp = get("lat", "TCP", SB, s, "rtt_median_us")
    body.append([human(s), mp("verbs", "ib_send_lat"),
                 fmt(get("lat", "rsockets", "rstream", s, "rtt_mean_us")),
                 mp("rsockets", RSP), mp("TCP", SB), mp("SDP", SB),
                 fmt(ratio(sdp, rs), 2), fmt(ratio(sdp, tcp), 2)])
table(head, body)
q_tcp, q_sdp = get("lat", "TCP", "qperf", 64, "rtt_mean_us"), get("lat", "SDP", "qperf", 64, "rtt_mean_us")
say("  qperf at 64 B (mean round trip): tcp_lat %s, sdp_lat %s, SDP/TCP %s"
    % (fmt(q_tcp), fmt(q_sdp), fmt(ratio(q_sdp, q_tcp), 2)))

# ---- bandwidth
say()
say("Streaming bandwidth, MB/s (10^6 B/s), one stream; verbs = ib_send_bw -R,")
say("rsockets = rstream, TCP and SDP = qperf tcp_bw / sdp_bw.")
head = ["size", "verbs", "rsockets", "TCP", "SDP", "SDP/verbs", "SDP/rs", "SDP/TCP"]
body = []
for s in sizes("bw"):
    v = get("bw", "verbs", "ib_send_bw", s, "mbytes_per_s")
    r = get("bw", "rsockets", "rstream", s, "mbytes_per_s")
    t = get("bw", "TCP", "qperf", s, "mbytes_per_s")
    d = get("bw", "SDP", "qperf", s, "mbytes_per_s")
    body.append([human(s), fmt(v), fmt(r), fmt(t), fmt(d), fmt(ratio(d, v), 2),
                 fmt(ratio(d, r), 2), fmt(ratio(d, t), 2)])
table(head, body)
say("  the limit at 64 KiB: ib_send_bw %s, ib_write_bw %s, ib_read_bw %s MB/s" % (
    fmt(get("bw", "verbs", "ib_send_bw", 65536, "mbytes_per_s")),
    fmt(get("limit", "verbs", "ib_write_bw", 65536, "mbytes_per_s")),
    fmt(get("limit", "verbs", "ib_read_bw", 65536, "mbytes_per_s"))))

# ---- streams
say()
say("64 KiB streams, MB/s summed over streams (bidir: both directions); sockets")
say("through sdp_bench (rsockets under librspreload), verbs = ib_send_bw -q N / -b.")
head = ["streams", "verbs", "rsockets", "TCP", "SDP", "SDP/verbs", "SDP/rs", "SDP/TCP"]
body = []
for q in ("1", "4", "16", "bidir"):
    v = get("streams", "verbs", "ib_send_bw", q, "mbytes_per_s")
    r = get("streams", "rsockets", RSP, q, "mbytes_per_s")
    t = get("streams", "TCP", SB, q, "mbytes_per_s")
    d = get("streams", "SDP", SB, q, "mbytes_per_s")
    body.append([q, fmt(v), fmt(r), fmt(t), fmt(d), fmt(ratio(d, v), 2),
                 fmt(ratio(d, r), 2), fmt(ratio(d, t), 2)])
table(head, body)
say("  iperf3 (unmodified; SDP via sdp_run): " + ", ".join(
    "%s: TCP %s SDP %s (SDP/TCP %s)" % (q, fmt(get("streams", "TCP", "iperf3", q, "mbytes_per_s")),
                                       fmt(get("streams", "SDP", "iperf3", q, "mbytes_per_s")),
                                       fmt(ratio(get("streams", "SDP", "iperf3", q, "mbytes_per_s"),
                                                 get("streams", "TCP", "iperf3", q, "mbytes_per_s")), 2))
    for q in ("1", "4", "bidir")))
say("  CPU seconds per GB moved (whole VM, both ends, one 64 KiB stream): TCP %s, rsockets %s, SDP %s"
    % tuple(fmt(get("cpu", p, t, 65536, "cpu_s_per_gb"))
            for p, t in (("TCP", SB), ("rsockets", RSP), ("SDP", SB))))

# ---- copy against zero-copy
if sizes("zc"):
    say()
    say("SDP's sends copied (zcopy_thresh 0) against zero-copy (SrcAvail, RDMA Read),")
    say("one sdp_bench stream; MB/s and CPU s per GB (whole VM, both ends); the")
    say("limit is ib_read_bw -R.")
    head = ["size", "copy", "zcopy", "zcopy/copy", "CPU copy", "CPU zcopy", "ib_read_bw"]
    body = []
    for s_ in sizes("zc"):
        c = get("zc", "SDP copy", SB, s_, "mbytes_per_s")
        z = get("zc", "SDP zcopy", SB, s_, "mbytes_per_s")
        body.append([human(s_), fmt(c), fmt(z), fmt(ratio(z, c), 2),
                     fmt(get("zc", "SDP copy", SB, s_, "cpu_s_per_gb")),
                     fmt(get("zc", "SDP zcopy", SB, s_, "cpu_s_per_gb")),
                     fmt(get("zc", "verbs", "ib_read_bw", s_, "mbytes_per_s"))])
    table(head, body)

# ---- setup and memory
say()
say("Connection setup (sdp_connbench: connect+accept+close) and idle memory")
say("(per end: the VM holds both ends of each connection).")
head = ["path", "conn/s", "median µs", "MemFree KiB", "Slab KiB", "Vmalloc KiB", "VmPin KiB"]
body = []
for p, t in (("TCP", SB), ("rsockets", RSP), ("SDP", SB)):
    body.append([p, fmt(get("conn", p, "sdp_connbench", 0, "connects_per_s")),
                 fmt(get("conn", p, "sdp_connbench", 0, "median_us")),
                 fmt(get("mem", p, t, 0, "memfree_kib_per_end")),
                 fmt(get("mem", p, t, 0, "slab_kib_per_end")),
                 fmt(get("mem", p, t, 0, "vmalloc_kib_per_end")),
                 fmt(get("mem", p, t, 0, "vmpin_kib_per_end"))])
table(head, body)

# ---- did each path use the transport it claims?
say()
bad = []
for r in rows:
    if r["section"] in ("lat", "bw", "streams", "conn") and r["value"] not in ("", None):
        n = int(r["rxe_pkts"] or 0)
        if r["path"] in ("SDP", "rsockets", "verbs") and n == 0:
            bad.append("%s %s %s %s: no rxe packets" % (r["section"], r["path"], r["tool"], r["size"]))
        if r["path"] == "TCP" and n > 50:
            bad.append("%s TCP %s %s: %d rxe packets" % (r["section"], r["tool"], r["size"], n))
bad = sorted(set(bad))
say("RDMA check (rxe packet counters around each run): " +
    ("every SDP, rsockets and verbs run moved rxe packets; TCP runs none" if not bad
     else "; ".join(bad)))

# ---- targets
say()
say("Targets (goals, not test assertions; values from this run):")
sdp64k = best([get("bw", "SDP", "qperf", 65536, "mbytes_per_s"),
               get("streams", "SDP", SB, "1", "mbytes_per_s"),
               get("streams", "SDP", "iperf3", "1", "mbytes_per_s")], low=False)
verbs64k = get("bw", "verbs", "ib_send_bw", 65536, "mbytes_per_s")
rs64k = best([get("bw", "rsockets", "rstream", 65536, "mbytes_per_s"),
              get("streams", "rsockets", RSP, "1", "mbytes_per_s")], low=False)
sdp64 = best([get("lat", "SDP", SB, 64, "rtt_median_us"), q_sdp])
rs64 = best([get("lat", "rsockets", RSP, 64, "rtt_median_us"),
             get("lat", "rsockets", "rstream", 64, "rtt_mean_us")])
tcp64 = best([get("lat", "TCP", SB, 64, "rtt_median_us"), q_tcp])
conn_sdp = get("conn", "SDP", "sdp_connbench", 0, "connects_per_s")
conn_tcp = get("conn", "TCP", "sdp_connbench", 0, "connects_per_s")
mem_sdp = get("mem", "SDP", SB, 0, "memfree_kib_per_end")


def target(name, ok, detail):
    verdict = "----" if ok is None else ("PASS" if ok else "MISS")
    say("  %s  %-44s %s" % (verdict, name, detail))


def cmp(a, b, k, le):
    if a is None or b is None:
        return None
    return a <= k * b if le else a >= k * b


target("SDP 64 KiB stream >= 90% of ib_send_bw -R", cmp(sdp64k, verbs64k, 0.9, False),
       "%s vs %s MB/s (%s%%)" % (fmt(sdp64k), fmt(verbs64k), fmt(ratio(sdp64k, verbs64k) and 100 * ratio(sdp64k, verbs64k), 0)))
target("SDP 64 KiB stream >= rsockets", cmp(sdp64k, rs64k, 1.0, False),
       "%s vs %s MB/s" % (fmt(sdp64k), fmt(rs64k)))
target("SDP 64 B ping-pong <= 1.1 x rsockets", cmp(sdp64, rs64, 1.1, True),
       "%s vs %s µs (x%s)" % (fmt(sdp64), fmt(rs64), fmt(ratio(sdp64, rs64), 2)))
target("SDP 64 B ping-pong <= 0.8 x TCP", cmp(sdp64, tcp64, 0.8, True),
       "%s vs %s µs (x%s)" % (fmt(sdp64), fmt(tcp64), fmt(ratio(sdp64, tcp64), 2)))
target("connection setup rate >= 50% of TCP's", cmp(conn_sdp, conn_tcp, 0.5, False),
       "%s vs %s per s (%s%%)" % (fmt(conn_sdp), fmt(conn_tcp), fmt(ratio(conn_sdp, conn_tcp) and 100 * ratio(conn_sdp, conn_tcp), 0)))
target("idle connection <= 256 KiB kernel memory", None if mem_sdp is None else mem_sdp <= 256,
       "%s KiB per end (MemFree)" % fmt(mem_sdp))
say("  (each path's best tool: SDP = best of qperf, sdp_bench and iperf3 over sdp_run;")
say("   rsockets = of rstream and librspreload; TCP = of qperf and sdp_bench)")

# ---- SMC and fallback
say()
for r in rows:
    if r["section"] == "smc":
        say("SMC-R: " + r["value"])
fb = os.path.join(out_dir, "fallback.txt")
if os.path.exists(fb):
    say()
    say("SDP fallback to TCP (scripts/bench.d/fallback-connect):")
    for ln in open(fb):
        say("  " + ln.rstrip())

open(os.path.join(out_dir, "report.txt"), "w").write("\n".join(lines) + "\n")

# ---- plot
series = {
    "lat": [("verbs (ib\\_send\\_lat)", "verbs", "ib_send_lat", "rtt_median_us"),
            ("rsockets (rstream, mean)", "rsockets", "rstream", "rtt_mean_us"),
            ("rsockets (librspreload)", "rsockets", RSP, "rtt_median_us"),
            ("TCP", "TCP", SB, "rtt_median_us"),
            ("SDP", "SDP", SB, "rtt_median_us")],
    "bw": [("verbs (ib\\_send\\_bw)", "verbs", "ib_send_bw", "mbytes_per_s"),
           ("rsockets (rstream)", "rsockets", "rstream", "mbytes_per_s"),
           ("TCP (qperf)", "TCP", "qperf", "mbytes_per_s"),
           ("SDP (qperf)", "SDP", "qperf", "mbytes_per_s")],
}
styles = {"verbs": "lc rgb '#555555' lw 2 dt 2", "rsockets": "lc rgb '#1f77b4' lw 2",
          "TCP": "lc rgb '#2ca02c' lw 2", "SDP": "lc rgb '#d62728' lw 3"}
plots = {}
for sec, lst in series.items():
    parts = []
    for i, (title, p, t, m) in enumerate(lst):
        dat = os.path.join(out_dir, "%s-%d.dat" % (sec, i))
        with open(dat, "w") as f:
            for s in sizes(sec):
                v = get(sec, p, t, s, m)
                if v is not None and v > 0:
                    f.write("%d %g\n" % (s, v))
        dash = " dt 3" if "preload" in title else ""
        parts.append("'%s' using 1:2 with linespoints pt 7 ps 0.8 %s%s title '%s'"
                     % (dat, styles[p], dash, title))
    plots[sec] = ", ".join(parts)
gp = """set terminal pngcairo size 1400,560 font ',11'
set output '%s'
set multiplot layout 1,2 title "make bench %s: SDP vs verbs, rsockets, TCP on one rxe link in one VM (compare paths, not absolute numbers)"
set logscale x 2
set xtics ("1" 1, "64" 64, "1K" 1024, "16K" 16384, "64K" 65536, "256K" 262144, "1M" 1048576, "4M" 4194304)
set grid
set key top left
set xlabel 'message size'
set logscale y
set ylabel 'ping-pong round trip, median (µs), log scale'
set title 'Latency (lower is better)'
plot %s
set ylabel 'MB/s (10^6 B/s), log scale'
set title 'Streaming bandwidth, one stream (higher is better)'
set key top left
plot %s
unset multiplot
""" % (os.path.join(out_dir, "bench.png"), os.path.basename(os.path.abspath(out_dir)),
       plots["lat"], plots["bw"])
open(os.path.join(out_dir, "bench.gp"), "w").write(gp)
try:
    subprocess.run(["gnuplot", os.path.join(out_dir, "bench.gp")], check=True)
    print()
    print("plot: " + os.path.join(out_dir, "bench.png"))
except (OSError, subprocess.CalledProcessError) as e:
    print("plot: gnuplot failed (%s); data and script are in %s" % (e, out_dir))
