#!/usr/bin/python3
# scripts/bench's report: reads DIR/results.csv (written from the guest's
# "@@," lines), prints the tables of ratios and the targets, writes
# DIR/report.txt, DIR/ratios.csv (every ratio and target of the tables, one
# a line) and DIR/bench.png and DIR/scale.png (gnuplot).
#   report.py DIR
import csv
import math
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
        v = float(v)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None    # perftest's "inf" is no measurement


def get(section, path, tool, size, metric):
    for r in rows:
        if (r["section"], r["path"], r["tool"], r["size"], r["metric"]) == \
                (section, path, tool, str(size), metric):
            return num(r["value"])
    return None


def text(section, path, tool, size, metric):
    for r in rows:
        if (r["section"], r["path"], r["tool"], r["size"], r["metric"]) == \
                (section, path, tool, str(size), metric):
            return r["value"]
    return None


def pkts(section, path, tool, size):
    for r in rows:
        if (r["section"], r["path"], r["tool"], r["size"]) == (section, path, tool, str(size)):
            return int(num(r["rxe_pkts"]) or 0)
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
SBE, RSPP = SB + " -w epoll", RSP + " -w poll"
CB, CBE = "sdp_connbench", "sdp_connbench -e"

# ratios.csv: each ratio the tables print, and each target with its verdict
ratio_rows = []


def g4(v):
    return "" if v is None else "%.4g" % v


def record(measure, size, unit, sdp, tcp=None, rs=None, verbs=None):
    ratio_rows.append([measure, size, unit] + [
        g4(v) for v in (sdp, tcp, rs, verbs, ratio(sdp, tcp), ratio(sdp, rs), ratio(sdp, verbs))
    ] + ["", "", "", ""])

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
    record("pingpong_median", s, "us", sdp, tcp, rs,
           get("lat", "verbs", "ib_send_lat", s, "rtt_median_us"))
table(head, body)
q_tcp, q_sdp = get("lat", "TCP", "qperf", 64, "rtt_mean_us"), get("lat", "SDP", "qperf", 64, "rtt_mean_us")
say("  qperf at 64 B (mean round trip): tcp_lat %s, sdp_lat %s, SDP/TCP %s"
    % (fmt(q_tcp), fmt(q_sdp), fmt(ratio(q_sdp, q_tcp), 2)))

# ---- blocking against event-driven, at the sizes run both ways
ev_sizes = sizes("lat_ev")
PP_NAME = {"blocking": "blocking", "event": "epoll", "busy": "epoll_busy"}
pp = {}     # (size, wait) -> (sdp, tcp, rsockets' best, verbs)
if ev_sizes:
    say()
    say("Ping-pong round trip by how the ends wait, µs: median / p99 (rstream: mean).")
    say("blocking: blocking calls (rstream -T b); event: non-blocking sockets and")
    say("epoll_wait() before each read, rsockets poll() (its rpoll(): rsockets has")
    say("no epoll; rstream -T a -T b: a blocking rpoll()); busy: the same with epoll")
    say("busy polling (net.core.busy_poll as long as net.sdp.recv_poll_us, the spin of")
    say("a blocking receive), as rsockets' poll spins by itself.")
    say("SDP/rs against rsockets' best tool of that kind.")
    head = ["size", "wait", "verbs", "rstream", "rs preload", "TCP", "SDP", "SDP/rs", "SDP/TCP",
            "SDP/verbs"]
    body = []
    for s in ev_sizes:
        verbs = get("lat", "verbs", "ib_send_lat", s, "rtt_median_us")
        for wait, sec, rsec, rst, rsp, sb in (
                ("blocking", "lat", "lat", "rstream -T b", RSP, SB),
                ("event", "lat_ev", "lat_ev", "rstream -T a", RSPP, SBE),
                ("busy", "lat_evbp", "lat_ev", "rstream -T a", RSPP, SBE)):
            mp = lambda sec, p, t: "%s / %s" % (fmt(get(sec, p, t, s, "rtt_median_us")),
                                                fmt(get(sec, p, t, s, "rtt_p99_us")))
            sdp = get(sec, "SDP", sb, s, "rtt_median_us")
            tcp = get(sec, "TCP", sb, s, "rtt_median_us")
            rs = best([get(rsec, "rsockets", rst, s, "rtt_mean_us"),
                       get(rsec, "rsockets", rsp, s, "rtt_median_us")])
            pp[(s, wait)] = (sdp, tcp, rs, verbs)
            body.append([human(s), wait + ("" if wait == "blocking" else " (epoll; rs poll)"),
                         fmt(verbs) if wait == "blocking" else "",
                         fmt(get(rsec, "rsockets", rst, s, "rtt_mean_us")),
                         mp(rsec, "rsockets", rsp), mp(sec, "TCP", sb), mp(sec, "SDP", sb),
                         fmt(ratio(sdp, rs), 2), fmt(ratio(sdp, tcp), 2), fmt(ratio(sdp, verbs), 2)])
            record("pingpong_%s_median" % PP_NAME[wait], s, "us", sdp, tcp, rs, verbs)
    table(head, body)
    say("  (rstream spinning, its default, is in the table above; verbs: ib_send_lat median)")

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
    record("bw_one_stream", s, "MB/s", d, t, r, v)
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
    record("streams_64k", q, "MB/s", d, t, r, v)
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

# ---- copy against zero-copy, and the overlap experiment: in one VM, and
# between two hosts (scripts/wire: sections wire_*, the reader on the peer,
# CPU of the sender's host alone)
def zc_tables(pre, where, cpu_of):
    if sizes(pre + "zc"):
        say()
        say("SDP's sends and reads copied (SDP_ZCOPY_THRESH 0 both ends) against zero-copy")
        say("sends (SrcAvail, RDMA Read): blocking (zcopy) and MSG_ZEROCOPY's (async: a ring")
        say("of 8 buffers, each reused once notified); reads in place (inplace: the sender")
        say("copies, the reader's SinkAvail is RDMA Written); both; one sdp_bench stream %s;" % where)
        say("MB/s and CPU s per GB (%s); the limit is ib_read_bw -R." % cpu_of)
        modes = ("copy", "zcopy", "async", "inplace", "both")
        head = ["size"] + list(modes) + ["%s/copy" % m for m in modes[1:]] + \
               ["CPU %s" % m for m in modes] + ["ib_read_bw"]
        body = []
        for s_ in sizes(pre + "zc"):
            v = [get(pre + "zc", "SDP " + m, SB, s_, "mbytes_per_s") for m in modes]
            body.append([human(s_)] + [fmt(x) for x in v] +
                        [fmt(ratio(x, v[0]), 2) for x in v[1:]] +
                        [fmt(get(pre + "zc", "SDP " + m, SB, s_, "cpu_s_per_gb")) for m in modes] +
                        [fmt(get(pre + "zc", "verbs", "ib_read_bw", s_, "mbytes_per_s"))])
        table(head, body)
    if sizes(pre + "zc_overlap"):
        say()
        say("Send, compute, send (the AZ-SDP paper's overlap experiment) %s: the sender" % where)
        say("spins between sends for 200 µs, and for one message's time at the copy rate;")
        say("MB/s, and kept: of the same mode's rate without computation (1.00: overlapped).")
        modes = ("copy", "zcopy", "async")
        head = ["size", "compute µs"] + list(modes) + ["kept %s" % m for m in modes] + \
               ["async/zcopy"]
        body = []
        for s_ in sizes(pre + "zc_overlap"):
            for name in ("none", "200us", "msg"):
                v = [get(pre + "zc_overlap", "SDP " + m, SB, s_, "mbytes_per_s_" + name)
                     for m in modes]
                b = [get(pre + "zc_overlap", "SDP " + m, SB, s_, "mbytes_per_s_none")
                     for m in modes]
                us = get(pre + "zc_overlap", "SDP copy", SB, s_, "compute_us_" + name)
                body.append([human(s_), fmt(us, 0)] + [fmt(x) for x in v] +
                            [fmt(ratio(x, y), 2) for x, y in zip(v, b)] +
                            [fmt(ratio(v[2], v[1]), 2)])
        table(head, body)


zc_tables("", "in one VM", "whole VM, both ends")
zc_tables("wire_", "between two hosts", "the sender's host")

# ---- issue 37's scale measures between two hosts (scripts/bench.d/scale: the
# servers on the peer, one vCPU a host; SMC-R where it ran over RDMA)
WPATHS = ("TCP", "rsockets", "SMC", "SDP")
wire = {}   # measure -> {path: value}


def wire_get(sec, tools, size, metric):
    out = {}
    for p in WPATHS:
        for t in tools:
            v = get("wire_" + sec, p, t, size, metric)
            if v is not None:
                out[p] = v
                break
    return out


wire_rows = [("setup /s", "conn", (CB,), 0, "connects_per_s", "up"),
             ("setup+echo /s", "conn", (CBE,), 0, "connects_per_s", "up"),
             ("64 B pp blocking µs", "lat", (SB,), 64, "rtt_median_us", "down"),
             ("64 B pp epoll µs (rs poll)", "lat_ev", (SBE, SB + " -w poll"), 64, "rtt_median_us", "down"),
             ("64 B pp epoll busy µs", "lat_evbp", (SBE,), 64, "rtt_median_us", "down")]
wire_rows += [("%d streams MB/s" % n, "many", (SBE, SB + " -w poll"), n, "mbytes_per_s", "up")
              for n in sorted({int(r["size"]) for r in rows if r["section"] == "wire_many"})]
wire_rows += [("idle KiB/end at %d" % n, "mem", (SB,), n, "memfree_kib_per_end", "down")
              for n in sorted({int(r["size"]) for r in rows if r["section"] == "wire_mem"})]
if any(r["section"].startswith("wire_") and not r["section"].startswith("wire_zc") for r in rows):
    say()
    say("Scale between two hosts (scripts/bench.d/scale; servers on the peer, one vCPU a")
    say("host, memory counted on the dialling host, which holds one end of each")
    say("connection): setup per second, 64 B ping-pong median, many streams summed,")
    say("idle memory (MemFree drop over N).")
    head = ["measure"] + list(WPATHS) + ["SDP/TCP", "SDP/rs", "SDP/SMC"]
    body = []
    for name, sec, tools, size, metric, better in wire_rows:
        v = wire_get(sec, tools, size, metric)
        wire[name] = v
        body.append([name] + [fmt(v.get(p)) for p in WPATHS] +
                    [fmt(ratio(v.get("SDP"), v.get(p)), 2) for p in ("TCP", "rsockets", "SMC")])
    table(head, body)
    say("  references: ib_send_lat -R 64 B %s µs, rstream -T b %s µs, rstream -T a -T b %s µs"
        % (fmt(get("wire_lat", "verbs", "ib_send_lat", 64, "rtt_median_us")),
           fmt(get("wire_lat", "rsockets", "rstream -T b", 64, "rtt_mean_us")),
           fmt(get("wire_lat_ev", "rsockets", "rstream -T a", 64, "rtt_mean_us"))))
    rd = get("wire_mem", "SDP", SB, max([n for _, s, _, n, _, _ in wire_rows if s == "mem"] or [0]),
             "rdma_conns")
    if rd is not None:
        say("  SDP's largest idle count: %d connections over RDMA" % rd)
    for r in rows:
        if r["section"] == "wire_smc":
            say("  SMC-R: " + r["value"])

# ---- setup
say()
say("Connection setup per second (sdp_connbench, one after another): connect+accept+close,")
say("and with a 1-byte echo before the close (the connection moved data both ways).")
head = ["cycle", "TCP", "rsockets", "SDP", "SDP/TCP", "SDP/rs", "TCP med µs", "rs med µs",
        "SDP med µs"]
body = []
conn = {}
for name, t in (("connect+accept+close", CB), ("... + 1 B echo", CBE)):
    c = [get("conn", p, t, 0, "connects_per_s") for p in ("TCP", "rsockets", "SDP")]
    m = [get("conn", p, t, 0, "median_us") for p in ("TCP", "rsockets", "SDP")]
    conn[t] = c
    body.append([name, fmt(c[0]), fmt(c[1]), fmt(c[2]), fmt(ratio(c[2], c[0]), 2),
                 fmt(ratio(c[2], c[1]), 2), fmt(m[0]), fmt(m[1]), fmt(m[2])])
    record("setup_per_s" + ("_echo" if t == CBE else ""), 0, "1/s", c[2], c[0], c[1])
table(head, body)

# ---- memory
mem_tool = {"TCP": SB, "rsockets": RSP, "SDP": SB}
counts = sorted({int(r["size"]) for r in rows if r["section"] == "mem" and r["size"].isdigit()})


def mem_cell(p, n, metric="memfree_kib_per_end"):
    v = get("mem", p, mem_tool[p], n, metric)
    if v is not None:
        return fmt(v)
    note = text("mem", p, mem_tool[p], n, "note")
    if note and (note.startswith("does not fit") or note.startswith("not run")):
        return note.split(":")[0]
    return "-"


say()
say("Memory per idle connection end, KiB: the drop of MemFree over 2N (both ends of the")
say("N connections, held open by sdp_bench hold, are in this VM), after drop_caches;")
say("'drift' is MemFree's own move in one idle second, over 2N (the noise of that count).")
head = ["conns", "TCP", "rsockets", "SDP", "SDP/TCP", "SDP/rs", "drift TCP/rs/SDP", "SDP over RDMA"]
body = []
mem = {}
for n in counts:
    v = [get("mem", p, mem_tool[p], n, "memfree_kib_per_end") for p in ("TCP", "rsockets", "SDP")]
    mem[n] = v
    rd = get("mem", "SDP", SB, n, "rdma_conns")
    body.append([str(n), mem_cell("TCP", n), mem_cell("rsockets", n), mem_cell("SDP", n),
                 fmt(ratio(v[2], v[0]), 2), fmt(ratio(v[2], v[1]), 2),
                 "/".join(fmt(get("mem", p, mem_tool[p], n, "drift_kib_per_end"))
                          for p in ("TCP", "rsockets", "SDP")),
                 "-" if rd is None else "%d of %d" % (rd, n)])
    record("idle_mem_kib_per_end", n, "KiB", v[2], v[0], v[1])
table(head, body)
say("  by kind (KiB per end: MemFree drop, Slab and VmallocUsed growth, pinned user pages;")
say("  seconds to open all N):")
head = ["path", "conns", "MemFree", "Slab", "Vmalloc", "VmPin", "open s"]
body = []
for p in ("TCP", "rsockets", "SDP"):
    for n in counts:
        if get("mem", p, mem_tool[p], n, "memfree_kib_per_end") is None:
            continue
        body.append([p, str(n)] + [fmt(get("mem", p, mem_tool[p], n, m)) for m in
                                   ("memfree_kib_per_end", "slab_kib_per_end",
                                    "vmalloc_kib_per_end", "vmpin_kib_per_end", "open_secs")])
table(head, body)
for p in ("TCP", "rsockets", "SDP"):
    for n in counts:
        note = text("mem", p, mem_tool[p], n, "note")
        if note:
            say("  %s at %d: %s" % (p, n, note))

# ---- where an idle connection's memory goes (the target: 16 KiB an end)
for p in ("SDP", "TCP"):
    owners = [r for r in rows if r["section"] == "budget" and r["path"] == p
              and r["size"].isdigit()]
    for n in sorted({int(r["size"]) for r in owners}):
        if n < 100:
            continue    # a count of 1 is noise at this grain
        parts = [(r["metric"], num(r["value"])) for r in owners if int(r["size"]) == n]
        total = get("mem", p, mem_tool[p], n, "memfree_kib_per_end")
        say("  %s's budget at %d connections, KiB per end (of %s; the target is 16):"
            % (p, n, fmt(total)))
        say("    " + ", ".join("%s %s" % (o, fmt(v)) for o, v in parts))

# ---- many connections at once
many_n = sorted({int(r["size"]) for r in rows if r["section"] == "many" and r["size"].isdigit()})
many = {}
for n in many_n:
    say()
    say("%d connections streaming at once (64 KiB writes, one thread an end waiting in" % n)
    say("epoll_wait(), rsockets in poll()), MB/s summed; KiB each connection moved.")
    tools = {"TCP": SBE, "rsockets": RSPP, "SDP": SBE}
    head = ["path", "MB/s", "moved", "min KiB", "median KiB", "max KiB", "SDP/this"]
    body = []
    v = {p: get("many", p, tools[p], n, "mbytes_per_s") for p in tools}
    many[n] = v
    for p in ("TCP", "rsockets", "SDP"):
        note = text("many", p, tools[p], n, "note")
        mv = get("many", p, tools[p], n, "moved")
        body.append([p, fmt(v[p]) if not note else note.split(":")[0],
                     "-" if mv is None else "%d of %d" % (mv, n)] +
                    [fmt(get("many", p, tools[p], n, m)) for m in ("min_kib", "median_kib", "max_kib")] +
                    ["" if p == "SDP" else fmt(ratio(v["SDP"], v[p]), 2)])
    table(head, body)
    rd = get("many", "SDP", SBE, n, "rdma")
    if rd is not None:
        say("  SDP: %d of %d connections over RDMA" % (rd, n))
    for p in tools:
        note = text("many", p, tools[p], n, "note")
        if note:
            say("  %s: %s" % (p, note))
    record("many_streams_mb_per_s", n, "MB/s", v["SDP"], v["TCP"], v["rsockets"])

# ---- did each path use the transport it claims?
say()
bad = []
checked = {"lat": None, "lat_ev": None, "bw": None, "streams": None, "conn": None,
           "mem": "memfree_kib_per_end", "many": "mbytes_per_s"}
for r in rows:
    if r["section"] in checked and checked[r["section"]] in (None, r["metric"]) and \
            num(r["value"]) is not None:
        n = int(num(r["rxe_pkts"]) or 0)
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


def cmp(a, b, k, le):
    if a is None or b is None:
        return None
    return a <= k * b if le else a >= k * b


def target(name, a, b, k, le, detail, measure, size=0, unit="", absolute=False):
    """PASS when a <= k x b (le) or a >= k x b; absolute: a against k alone.
    Without its reference (b None) a relative target is not judged."""
    ok = (None if a is None else (a <= k if le else a >= k)) if absolute else cmp(a, b, k, le)
    verdict = "----" if ok is None else ("PASS" if ok else "MISS")
    say("  %s  %-50s %s" % (verdict, name, detail))
    ratio_rows.append([measure, size, unit, g4(a), "", "", "", "", "", "", name,
                       g4(b if b is not None else k), g4(ratio(a, b if b is not None else k)), verdict])


say(" Issue 37 (scale: shared CQs and SRQ, fast setup, latency at rsockets' level):")
c_sdp, c_tcp = conn[CBE][2], conn[CBE][0]
target("setup, connect+accept+1 B echo+close >= 1.0 x TCP", c_sdp, c_tcp, 1.0, False,
       "%s vs %s per s (x%s)" % (fmt(c_sdp), fmt(c_tcp), fmt(ratio(c_sdp, c_tcp), 2)),
       "setup_per_s_echo", 0, "1/s")
for s in (64,):
    for wait in ("blocking", "event", "busy"):
        sdp, tcp, rs, verbs = pp.get((s, wait), (None, None, None, None))
        w = PP_NAME[wait].replace("_", " ")
        target("%s ping-pong %s <= 1.0 x rsockets" % (human(s), w), sdp, rs, 1.0, True,
               "%s vs %s µs (x%s)" % (fmt(sdp), fmt(rs), fmt(ratio(sdp, rs), 2)),
               "pingpong_%s_median" % PP_NAME[wait], s, "us")
        target("%s ping-pong %s <= 1.5 x ib_send_lat" % (human(s), w), sdp, verbs, 1.5, True,
               "%s vs %s µs (x%s)" % (fmt(sdp), fmt(verbs), fmt(ratio(sdp, verbs), 2)),
               "pingpong_%s_median" % PP_NAME[wait], s, "us")
# only a count whose every SDP connection ran over RDMA speaks for SDP
big = max([n for n in counts if mem[n][2] is not None
           and get("mem", "SDP", SB, n, "rdma_conns") == n] or [0])
mem_sdp = mem[big][2] if big else None
target("idle connection <= 16 KiB an end%s" % (" at %d" % big if big else ""), mem_sdp, None, 16,
       True, "%s KiB per end (MemFree)%s" % (fmt(mem_sdp), "" if big == max(counts or [0]) else
                                            ", the largest count measured"),
       "idle_mem_kib_per_end", big, "KiB", absolute=True)
say(" Earlier ones, not superseded:")
target("SDP 64 KiB stream >= 90% of ib_send_bw -R", sdp64k, verbs64k, 0.9, False,
       "%s vs %s MB/s (%s%%)" % (fmt(sdp64k), fmt(verbs64k), fmt(ratio(sdp64k, verbs64k) and 100 * ratio(sdp64k, verbs64k), 0)),
       "stream_64k_best", 65536, "MB/s")
target("SDP 64 KiB stream >= rsockets", sdp64k, rs64k, 1.0, False,
       "%s vs %s MB/s" % (fmt(sdp64k), fmt(rs64k)), "stream_64k_best", 65536, "MB/s")
target("SDP 64 B ping-pong <= 0.8 x TCP", sdp64, tcp64, 0.8, True,
       "%s vs %s µs (x%s)" % (fmt(sdp64), fmt(tcp64), fmt(ratio(sdp64, tcp64), 2)),
       "pingpong_64_best", 64, "us")
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
for name, what in (("setup", "connect, 1 B echo, close"), ("pingpong", "64 B epoll ping-pong")):
    pf = os.path.join(out_dir, "profile-%s.txt" % name)
    if os.path.exists(pf) and os.path.getsize(pf):
        say()
        say("Where SDP's time goes: %s, every CPU, self time (perf, cpu-clock; profile-%s.txt)"
            % (what, name))
        for ln in list(open(pf))[:20]:
            say("  " + ln.rstrip())

open(os.path.join(out_dir, "report.txt"), "w").write("\n".join(lines) + "\n")
with open(os.path.join(out_dir, "ratios.csv"), "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["measure", "size", "unit", "sdp", "tcp", "rsockets", "verbs", "sdp_tcp",
                "sdp_rsockets", "sdp_verbs", "target", "reference", "ratio", "verdict"])
    w.writerows(ratio_rows)

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

# ---- the scale plot: idle memory against the number of connections, and
# every ratio of the tables above that compares whole paths
mem_parts = []
for i, p in enumerate(("TCP", "rsockets", "SDP")):
    dat = os.path.join(out_dir, "mem-%d.dat" % i)
    with open(dat, "w") as f:
        for n in counts:
            v = get("mem", p, mem_tool[p], n, "memfree_kib_per_end")
            if v is not None and v > 0:
                f.write("%d %g\n" % (n, v))
    mem_parts.append("'%s' using 1:2 with linespoints pt 7 ps 1 %s title '%s'" % (dat, styles[p], p))
bars = [("setup", conn[CB][2], conn[CB][0], conn[CB][1], "up"),
        ("setup+echo", conn[CBE][2], conn[CBE][0], conn[CBE][1], "up")]
for s_ in ev_sizes:
    for wait in ("blocking", "event", "busy"):
        sdp, tcp, rs, verbs = pp.get((s_, wait), (None, None, None, None))
        bars.append(("pp %s %s" % (human(s_).replace(" ", ""),
                                   {"blocking": "block", "event": "epoll", "busy": "epoll bp"}[wait]),
                     sdp, tcp, rs, "down"))
for n in counts:
    bars.append(("idle mem %d" % n, mem[n][2], mem[n][0], mem[n][1], "down"))
for n in many_n:
    bars.append(("%d streams" % n, many[n]["SDP"], many[n]["TCP"], many[n]["rsockets"], "up"))
with open(os.path.join(out_dir, "ratios.dat"), "w") as f:
    for name, sdp, tcp, rs, better in bars:
        f.write('"%s (%s)" %s %s\n' % (name, "\u2191" if better == "up" else "\u2193",
                                      g4(ratio(sdp, tcp)) or "-", g4(ratio(sdp, rs)) or "-"))
gp2 = """set terminal pngcairo size 1400,560 font ',11'
set output '%s'
set multiplot layout 1,2 title "make bench %s: scale (compare paths, not absolute numbers)"
set grid
set logscale xy
set key top left
set xlabel 'idle connections held open'
set ylabel 'KiB per connection end (MemFree), log scale'
set title 'Memory per idle connection end (lower is better)'
set xrange [0.5:20000]
set arrow 1 from 0.5, 16 to 20000, 16 nohead dt 2 lc rgb '#d62728'
set label 1 'target: 16 KiB' at 1.5, 20 tc rgb '#d62728'
plot %s
unset arrow 1
unset label 1
unset logscale x
unset xrange
set xlabel ''
set logscale y
set yrange [0.01:100]
set ylabel 'SDP / other path, log scale'
set title 'SDP against TCP and rsockets (arrow: which way is better for SDP)'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set datafile missing '-'
set xtics rotate by -35 left
set arrow from graph 0, first 1 to graph 1, first 1 nohead lc rgb '#000000' lw 1
plot '%s' using 2:xtic(1) lc rgb '#2ca02c' title 'SDP/TCP', '' using 3 lc rgb '#1f77b4' title 'SDP/rsockets'
unset multiplot
""" % (os.path.join(out_dir, "scale.png"), os.path.basename(os.path.abspath(out_dir)),
       ", ".join(mem_parts) if counts else "NaN notitle", os.path.join(out_dir, "ratios.dat"))
open(os.path.join(out_dir, "scale.gp"), "w").write(gp2)
try:
    for g in ("bench.gp", "scale.gp"):
        subprocess.run(["gnuplot", os.path.join(out_dir, g)], check=True)
    print()
    print("plot: %s, %s" % (os.path.join(out_dir, "bench.png"), os.path.join(out_dir, "scale.png")))
except (OSError, subprocess.CalledProcessError) as e:
    print("plot: gnuplot failed (%s); data and script are in %s" % (e, out_dir))
