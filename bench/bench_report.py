# SPDX-License-Identifier: BSD-3-Clause
"""What the guest benchmarks (vsw-oneway.py, vsw-loopback.py) share: the
window context (steal time, which CPU each thread ran on, involuntary
switches), the repetition summary (min, median, fast/slow state), the
markdown table, the CSV and the gnuplot plot."""
import csv
import math
import os
import statistics
import subprocess

SLOW = 1.5  # a repetition above SLOW x the point's minimum is "slow"


def cpu_ticks():
    """(total, steal) jiffies of all CPUs (/proc/stat)."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return sum(v[:8]), v[7]


def thread_info(pid, tid):
    """(last CPU, involuntary context switches) of a thread, or (-1, 0)."""
    try:
        with open("/proc/%d/task/%d/stat" % (pid, tid)) as f:
            cpu = int(f.read().rsplit(")", 1)[1].split()[36])
        with open("/proc/%d/task/%d/status" % (pid, tid)) as f:
            nv = next(int(line.split()[1]) for line in f
                      if line.startswith("nonvoluntary_ctxt_switches"))
        return cpu, nv
    except (OSError, ValueError, StopIteration, IndexError, TypeError):
        return -1, 0


def loadavg():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


class Window:
    """Context of one measurement window: steal share of all CPU time,
    the CPUs the named threads were on at start and end, their
    involuntary switches, the 1-min load."""

    def __init__(self, threads):
        self.threads = {k: v for k, v in threads.items() if v[1]}
        self.t0 = cpu_ticks()
        self.i0 = {k: thread_info(*v) for k, v in self.threads.items()}

    def end(self):
        t1 = cpu_ticks()
        i1 = {k: thread_info(*v) for k, v in self.threads.items()}
        tot = t1[0] - self.t0[0]
        r = {"steal": 100.0 * (t1[1] - self.t0[1]) / tot if tot else 0.0,
             "load": loadavg()}
        for k in self.threads:
            a, b = self.i0[k], i1[k]
            r["cpu_" + k] = "%d>%d" % (a[0], b[0]) if a[0] != b[0] else \
                str(b[0])
            r["nvcsw_" + k] = b[1] - a[1]
        return r


def c2c(build):
    """{c2c, c2c_p90, work}: TSC cycles of a cache-line round trip between
    CPUs 0 and 1 (median, p90 of 50 blocks) and of a fixed work loop on
    CPU 0, now (bench/vsw-bench-c2c); {} if it is not built."""
    exe = os.path.join(build, "bench", "vsw-bench-c2c")
    try:
        out = subprocess.run([exe, "0", "1", "100000"], capture_output=True,
                             text=True, timeout=30).stdout
        d = dict(kv.split("=") for kv in out.split()[1:])
        return {"c2c": int(d["rtt_cycles"]), "c2c_p90": int(d["p90"]),
                "work": int(d["work_cycles"])}
    except (OSError, subprocess.SubprocessError, ValueError, KeyError):
        return {}


def nan_last(x):
    return x if x == x else float("inf")


def summary(reps, key="cpp"):
    """{min, med, n, slow: [bool per rep]} of one point's repetitions."""
    vals = [r[key] for r in reps if r[key] == r[key]]
    if not vals:
        return {"min": float("nan"), "med": float("nan"), "n": 0,
                "slow": [False] * len(reps)}
    lo = min(vals)
    return {"min": lo, "med": statistics.median(vals), "n": len(vals),
            "slow": [nan_last(r[key]) > SLOW * lo for r in reps]}


def states(reps, key="cpp"):
    """'F'/'S' per repetition (fast/slow), in run order."""
    return "".join("S" if s else "F" for s in summary(reps, key)["slow"])


def write_csv(path, rows, fields):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow({k: ("%.4g" % v if isinstance(v, float) else v)
                        for k, v in r.items()})


def md_table(header, rows):
    """A markdown table; rows are lists of cells (str or float)."""
    def cell(c):
        if isinstance(c, float):
            return "-" if math.isnan(c) else ("%.3f" % c if c < 10 else
                                              "%.0f" % c)
        return str(c)
    out = ["| " + " | ".join(header) + " |",
           "|" + "|".join("---" if i < 2 else "---:"
                          for i in range(len(header))) + "|"]
    out += ["| " + " | ".join(cell(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def plot(path, title, panels, ylabel):
    """panels: [(panel title, {series: [(x, y)]})]: one gnuplot panel
    each, log x (sizes), lines per series. Returns an error or None."""
    if not panels:
        return "nothing to plot"
    # noenhanced: labels such as in_port are plain text, not subscripts
    lines = ["set terminal pngcairo size %d,520 font ',9' noenhanced" %
             (460 * len(panels)),
             "set output '%s'" % path,
             "set multiplot layout 1,%d title '%s'" % (len(panels), title),
             "set logscale x 2", "set grid", "set key top left",
             "set xlabel 'frame size (B)'", "set ylabel '%s'" % ylabel,
             "set yrange [0:*]"]
    for ptitle, series in panels:
        names = sorted(series)
        for i, n in enumerate(names):
            lines.append("$d%d << EOD" % i)
            lines += ["%d %g" % xy for xy in sorted(series[n])
                      if xy[1] == xy[1]]
            lines.append("EOD")
        lines.append("set title '%s'" % ptitle)
        lines.append("plot " + ", ".join(
            "$d%d using 1:2 with linespoints title '%s'" % (i, n)
            for i, n in enumerate(names)))
    lines.append("unset multiplot")
    try:
        r = subprocess.run(["gnuplot"], input="\n".join(lines) + "\n",
                           text=True, capture_output=True, timeout=60)
    except OSError as e:
        return "gnuplot: %s (apt-get install gnuplot-nox)" % e
    if r.returncode != 0 or not os.path.exists(path):
        return "gnuplot failed: %s" % r.stderr.strip()[-300:]
    return None
