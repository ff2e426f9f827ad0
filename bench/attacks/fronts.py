#!/usr/bin/python3
"""Every HTTP/2 attack of h2_attacks.py directly against posenc and through
each shipped front reduced to one replica (issue 21, item 4: the proxies are
defence in depth; where one cannot hold an attack, the docs give the figure).

Targets (--target, repeatable; default all three, in this order):
  direct   posenc_server on 127.0.0.1
  haproxy  deploy/haproxy/haproxy.cfg run by /usr/sbin/haproxy on 127.0.0.1,
           POSENC_1..3 all naming the one replica (as tests/affinity and
           bench/proxy_ab.py run it)
  nginx    deploy/nginx/posenc.conf run by /usr/sbin/nginx on 127.0.0.1: a
           copy with `listen` on a free loopback port, the pid file in a
           temporary directory, posenc-1 pointed at the replica and the
           posenc-2/3 server lines dropped (so per-server limits such as
           max_conns apply once, as for one replica)

For each target and each attack (--attack, repeatable; default every attack
of h2_attacks.py) it starts a fresh posenc_server (default flags plus
--server-arg; RLIMIT_NOFILE 65536 capped at the hard limit, 256 for
connection_storm, as h2_attacks.py --server-binary does), then the front in
front of it, then runs

  h2_attacks.py --target FRONT --server-pid POSENC --attack NAME --seconds S

(the victim bench/client_load alone for S seconds, then during the attack;
posenc's RSS/CPU sampled by h2_attacks.py), and meanwhile samples the front's
processes (HAProxy; nginx's master and workers) every 50 ms: CPU seconds
while the victim runs alone and while the attack runs (the phases are told
apart by h2_attacks.py's child processes: the first bench/client_load is the
victim alone, the Python children are the attackers), RSS before the attack
and its peak during it, the front's log bytes, and whether it is alive:
the process (and for nginx every worker: a worker that dies is respawned by
the master, and counted). Afterwards posenc itself is asked the probe
GetRows directly (posenc alive), and h2_attacks.py's answer through the
front says whether the front still serves. Then everything it started is
stopped (SIGTERM, SIGKILL after 10 s; leftover nginx workers by pid).

Two victims through a front. h2_attacks.py's victim connects from
127.0.0.1, the attacker's address, so it shares every per-address limit of
the front with the attacker (a client behind the attacker's NAT). A second
victim, the same bench/client_load, connects to the front's [::1] listener
(HAProxy: POSENC_PROXY_BIND lists both addresses; nginx: a second `listen`
line), i.e. from another client address, alone and during the attack at the
same moments as the first (started when h2_attacks.py starts its victims);
--no-other-victim leaves it out. "held" judges the first victim, the issue's
definition; the second is in its own column and in the reason.

One table per target: victim ratio (calls/s during over alone), posenc peak
RSS and CPU, posenc alive, and for a front its CPU (cores during the attack),
RSS before->peak, alive, log bytes; "held" is victim >= 0.5 (--min-ratio),
posenc alive, answering and within --cache_bytes + --max_inflight_bytes +
64 MiB (its defaults 512 + 256 MiB unless --server-arg sets them), the front
alive, answering, no worker lost, and its peak RSS <= --front-rss-bytes
(512 MiB). Loopback only; every wait bounded: each attack run ends within
3 x --seconds + --recover-seconds + 120 s or is killed. The whole run is
about (3 x S + 10 s) per attack and target: 10 attacks x 3 targets at 10 s,
~20 min. Run it under `nice` on a shared machine.

Usage (from the repo root, a Release build in build/):
  nice bench/attacks/fronts.py [--target direct|haproxy|nginx ...]
      [--attack NAME ...] [--seconds 10] [--build build]
      [--server-arg=--flag=value ...] [--h2-arg=--rr-cold-request=none ...]
      [--json FILE] [--keep-logs]
Exit status: 0 when every run completed (whether or not it held; the tables
say), 1 if --check and some attack was not held, 2 on bad arguments.
"""

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path[:0] = [HERE, os.path.join(ROOT, "tests", "affinity")]
import h2_attacks as h2a  # noqa: E402  (bench/attacks, beside this file)
from affinity_test import Process, free_port, wait_for_port  # noqa: E402

TARGETS = ("direct", "haproxy", "nginx")
MiB = h2a.MiB


# ----------------------------------------------------------------------------
# The fronts, from the shipped configs.

def nginx_conf(text, replica_port, listen_port, tmp):
    """deploy/nginx/posenc.conf reduced to one replica on 127.0.0.1."""
    lines = []
    for line in text.splitlines(keepends=True):
        if re.match(r"\s*server\s+posenc-[23]:50051\b", line):
            continue  # one replica: the other server lines go
        lines.append(line.replace("posenc-1:50051",
                                  f"127.0.0.1:{replica_port}"))
    text = "".join(lines)
    if f"127.0.0.1:{replica_port}" not in text:
        raise RuntimeError("nginx config: no `server posenc-1:50051` line")
    # The same listener on 127.0.0.1 and on [::1] (the other-address victim).
    text, n = re.subn(r"^(\s*)listen\s+50051\b(.*)$",
                      rf"\1listen 127.0.0.1:{listen_port}\2\n"
                      rf"\1listen [::1]:{listen_port}\2", text, flags=re.M)
    if n != 1:
        raise RuntimeError("nginx config: no single `listen 50051`")
    text = re.sub(r"^pid .*;", f"pid {tmp}/nginx.pid;", text, flags=re.M)
    return text


class Front:
    """HAProxy or nginx in front of one replica; None for direct."""

    def __init__(self, kind, args, replica_port, tmp):
        self.kind = kind
        self.port = free_port()
        self.target = f"127.0.0.1:{self.port}"
        self.other_target = f"[::1]:{self.port}"
        self.log_path = os.path.join(tmp, f"{kind}.log")
        if kind == "haproxy":
            env = dict(os.environ, POSENC_PROXY_BIND=f"{self.target},"
                       f"{self.other_target}")
            for r in (1, 2, 3):
                env[f"POSENC_{r}"] = f"127.0.0.1:{replica_port}"
            self.proc = Process([args.haproxy, "-db", "-f", args.haproxy_cfg],
                                self.log_path, env=env)
        else:
            with open(args.nginx_conf) as f:
                text = nginx_conf(f.read(), replica_port, self.port, tmp)
            conf = os.path.join(tmp, "nginx.conf")
            with open(conf, "w") as f:
                f.write(text)
            self.proc = Process([args.nginx, "-c", conf, "-p", tmp, "-e",
                                 "stderr", "-g", "daemon off;"], self.log_path)
        self.pid = self.proc.process.pid
        self.seen = {self.pid}  # every process of the front ever sampled
        try:
            wait_for_port(self.target, self.proc, 10)
            if kind == "haproxy":
                time.sleep(1.5)  # health checks: inter 500ms, rise 2
            else:
                time.sleep(0.3)  # the workers
        except Exception:
            self.stop()
            raise

    def stop(self):
        self.proc.stop(signal.SIGTERM, timeout=10)
        # nginx workers outlive a killed master: end the ones we saw, by pid.
        for pid in self.seen - {self.pid}:
            if h2a.pid_exists(pid) and proc_exe(pid).startswith("nginx"):
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass


# ----------------------------------------------------------------------------
# Sampling the front while h2_attacks.py runs.

def children(pid):
    out = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for t in tasks:
        try:
            with open(f"/proc/{pid}/task/{t}/children") as f:
                out += [int(c) for c in f.read().split()]
        except OSError:
            pass
    return out


def proc_exe(pid):
    try:
        return os.path.basename(os.readlink(f"/proc/{pid}/exe"))
    except OSError:
        try:
            with open(f"/proc/{pid}/comm") as f:
                return f.read().strip()
        except OSError:
            return ""


class FrontSampler(threading.Thread):
    """The front's process tree every 50 ms, with h2_attacks.py's phases."""

    def __init__(self, front, runner_pid, on_phase=lambda phase: None):
        super().__init__(daemon=True)
        self.front, self.runner = front, runner_pid
        self.on_phase = on_phase  # called with "alone", then "during"
        self.during_seen = False
        self.stop_event = threading.Event()
        self.cpu_by_pid = {}
        self.workers0 = None
        self.lost = set()  # workers that died while the master lived
        self.alone_pid = None
        self.victim_pids = set()
        # front CPU when the lone victim started/ended
        self.alone = [None, None]
        self.attack = [None, None]  # when the attackers started/ended
        self.attack_t = [None, None]
        self.rss_before = None
        self.rss_peak = 0
        self.rss_peak_all = 0
        self.log0 = self.log_size()

    def log_size(self):
        try:
            return os.path.getsize(self.front.log_path)
        except OSError:
            return 0

    def tree(self):
        out, todo = [], [self.front.pid]
        while todo and len(out) < 256:
            p = todo.pop()
            if not h2a.pid_exists(p):
                continue
            out.append(p)
            todo += children(p)
        return out

    def sample(self):
        procs = self.tree()
        rss = 0
        for p in procs:
            self.front.seen.add(p)
            r, _ = h2a.rss_hwm(p)
            rss += r or 0
            c = h2a.cpu_seconds(p)
            if c is not None:
                self.cpu_by_pid[p] = c
        workers = set(procs) - {self.front.pid}
        if self.workers0 is None:
            self.workers0 = workers
        elif self.front.pid in procs:
            self.lost |= (self.front.seen - set(procs) - {self.front.pid})
        cpu = sum(self.cpu_by_pid.values())
        self.rss_peak_all = max(self.rss_peak_all, rss)
        kids = children(self.runner)
        exes = {k: proc_exe(k) for k in kids}
        victims = [k for k, e in exes.items() if e == "client_load"]
        self.victim_pids.update(victims)
        # A child is python between its fork and its exec: a victim for a
        # moment. The attackers are forked after the second victim (the one
        # during the attack) is running.
        attackers = [k for k, e in exes.items() if e.startswith("python")
                     and k not in self.victim_pids] \
            if len(self.victim_pids) >= 2 else []
        if self.alone_pid is None and victims:
            self.alone_pid = min(victims)
            self.alone[0] = cpu
            self.on_phase("alone")
        if len(self.victim_pids) >= 2 and not self.during_seen:
            self.during_seen = True
            self.on_phase("during")
        if self.alone_pid is not None and self.alone[1] is None \
                and self.alone_pid not in kids:
            self.alone[1] = cpu
        if attackers and self.attack[0] is None:
            self.attack[0], self.attack_t[0] = cpu, time.monotonic()
            self.rss_before = rss
        if self.attack[0] is not None and self.attack[1] is None:
            self.rss_peak = max(self.rss_peak, rss)
            if not attackers:
                self.attack[1], self.attack_t[1] = cpu, time.monotonic()
        self.cpu = cpu

    def run(self):
        while not self.stop_event.wait(0.05):
            self.sample()

    def finish(self):
        self.stop_event.set()
        self.join(timeout=5)
        self.sample()
        if self.attack[0] is not None and self.attack[1] is None:
            self.attack[1], self.attack_t[1] = self.cpu, time.monotonic()
        def span(a):
            return round(a[1] - a[0], 2) if None not in a else None
        attack_s = span(self.attack)
        wall = span(self.attack_t)
        return {
            "cpu_alone_s": span(self.alone),
            "cpu_attack_s": attack_s,
            "cores_attack": round(attack_s / wall, 2) if attack_s is not None
            and wall else None,
            "rss_before_bytes": self.rss_before,
            "rss_peak_bytes": self.rss_peak or self.rss_peak_all,
            "processes_seen": len(self.front.seen),
            "workers_lost": sorted(self.lost),
            "log_bytes": self.log_size() - self.log0,
        }


# ----------------------------------------------------------------------------
# One attack on one target.

def run_one(args, kind, name, tmp):
    d = os.path.join(tmp, f"{kind}.{name}")
    os.makedirs(d)
    nofile = 256 if name == "connection_storm" else 65536
    server = h2a.Server(args.server_binary, args.server_arg, nofile, d,
                        "posenc")
    front = None
    r = {"target": kind, "attack": name, "server_nofile": nofile,
         "loadavg_before": open("/proc/loadavg").read().split()[:3]}
    try:
        direct = f"127.0.0.1:{server.port}"
        target = direct
        if kind != "direct":
            front = Front(kind, args, server.port, d)
            target = front.target
        out_json = os.path.join(d, "attack.json")
        argv = [sys.executable, os.path.join(HERE, "h2_attacks.py"),
                "--target", target, "--server-pid", str(server.pid),
                "--attack", name, "--seconds", str(args.seconds),
                "--recover-seconds", str(args.recover_seconds),
                "--victim-binary", args.victim_binary, "--json", out_json,
                *args.h2_arg]
        log = open(os.path.join(d, "h2_attacks.log"), "wb")
        runner = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT,
                                  stdin=subprocess.DEVNULL,
                                  start_new_session=True,
                                  preexec_fn=h2a.die_with_parent())
        sampler, other = None, {}
        if front is not None:
            def on_phase(phase):
                # The other-address victim: the same client, from [::1],
                # alone and during the attack at the same times as
                # h2_attacks.py's (which shares 127.0.0.1 with the attacker).
                if not args.no_other_victim:
                    other[phase] = h2a.Victim(args.victim_binary,
                                              front.other_target, args.seconds)
            sampler = FrontSampler(front, runner.pid, on_phase)
            sampler.start()
        limit = 3 * args.seconds + args.recover_seconds + 120
        try:
            runner.wait(timeout=limit)
        except subprocess.TimeoutExpired:
            os.killpg(runner.pid, signal.SIGKILL)
            runner.wait(timeout=10)
            r["note"] = f"h2_attacks.py overran {limit:.0f} s: killed"
        log.close()
        # The other-address victims first: they were started by the
        # sampler's thread, and PR_SET_PDEATHSIG ends a child when the
        # thread that forked it exits, so finishing the sampler first killed
        # a victim that had not yet printed its result (it then showed as
        # 0.00 in the table at 6d132b6).
        if other:
            vo = {}
            for phase, v in other.items():
                rate, failed, err = v.result()
                vo[f"{phase}_calls_per_s"] = rate
                vo[f"{phase}_failed_calls"] = failed
                if err:
                    vo[f"{phase}_error"] = err
            # No result is no figure (n/a), never a ratio of 0.
            if vo.get("alone_calls_per_s") and \
                    vo.get("during_calls_per_s") is not None:
                vo["ratio"] = round(vo["during_calls_per_s"]
                                    / vo["alone_calls_per_s"], 3)
            r["victim_other_address"] = vo
        if sampler is not None:
            r["front"] = sampler.finish()
            r["front"]["process"] = front.proc.alive()
        try:
            with open(out_json) as f:
                res = json.load(f)["results"][0]
        except (OSError, ValueError, KeyError, IndexError) as e:
            res = {"skipped": f"no result from h2_attacks.py ({e}): "
                   + open(os.path.join(d, "h2_attacks.log"), "rb")
                   .read()[-500:].decode(errors="replace")}
        r.update({k: v for k, v in res.items() if k not in ("target",)})
        # posenc itself, asked directly (through a front the probe above
        # went through the front).
        ok, after, err = h2a.probe_until(direct, 5.0, server.alive)
        r["posenc"] = {"process": server.alive(), "exit": server.exit_text(),
                       "answers_directly": ok, "error": err}
        r["posenc_log_bytes"] = os.path.getsize(server.log_path)
    finally:
        if front is not None:
            front.stop()
        server.stop()
    return r


def rss_bound(server_args):
    return (h2a.flag_value(server_args, "cache_bytes",
                           h2a.SERVER_DEFAULT_CACHE_BYTES)
            + h2a.flag_value(server_args, "max_inflight_bytes",
                             h2a.SERVER_DEFAULT_INFLIGHT_BYTES)
            + h2a.RSS_MARGIN)


def verdict(r, bound, args):
    """[] if the attack was held, else why not."""
    bad = []
    if r.get("skipped"):
        return [r["skipped"][:120]]
    ratio = r.get("victim", {}).get("ratio")
    if ratio is None or ratio < args.min_ratio:
        other = r.get("victim_other_address", {}).get("ratio")
        bad.append(f"victim {ratio}" + (f" (from [::1]: {other})"
                                         if other is not None else ""))
    p = r["posenc"]
    if not p["process"]:
        bad.append(f"posenc dead ({p['exit']})")
    elif not p["answers_directly"]:
        bad.append("posenc not answering")
    s = r.get("server")
    if s and s["peak_rss_bytes"] > bound:
        bad.append(f"posenc RSS {h2a.fmt_bytes(s['peak_rss_bytes'])} > "
                   f"{h2a.fmt_bytes(bound)}")
    fr = r.get("front")
    if fr is not None:
        if not fr["process"]:
            bad.append("front dead")
        if fr["workers_lost"]:
            bad.append(f"{len(fr['workers_lost'])} front worker(s) died")
        if not r["alive"]["answers"]:
            bad.append("front not answering")
        if fr["rss_peak_bytes"] > args.front_rss_bytes:
            bad.append(f"front RSS {h2a.fmt_bytes(fr['rss_peak_bytes'])}")
    return bad


def print_table(kind, results, bound, args):
    head = ["attack", "victim alone->during (ratio)", "posenc peak RSS",
            "posenc CPU s alone/attack", "posenc alive"]
    if kind != "direct":
        head[2:2] = ["victim from [::1]"]
        head += [f"{kind} CPU s alone/attack (cores)", f"{kind} RSS",
                 f"{kind} alive", f"{kind} log"]
    head += ["held"]
    rows = []
    for r in results:
        v = r.get("victim", {})
        if v.get("alone_calls_per_s") is not None:
            victim = (f"{v['alone_calls_per_s']:.0f}->"
                      f"{v.get('during_calls_per_s') or 0:.0f} "
                      f"({v.get('ratio') or 0:.2f})")
        else:
            victim = "n/a"
        s = r.get("server")
        rss = h2a.fmt_bytes(s["peak_rss_bytes"]) if s else "n/a"
        cpu = (f"{r.get('server_cpu_alone_s', 'n/a')}/{s['cpu_attack_s']}"
               if s else "n/a")
        p = r.get("posenc", {})
        if not p:
            alive = "n/a"
        elif not p["process"]:
            alive = f"DEAD ({p['exit']})"
        else:
            alive = "yes" if p["answers_directly"] else "NO ANSWER"
        row = [r["attack"], victim, rss, cpu, alive]
        fr = r.get("front")
        if kind != "direct":
            vo = r.get("victim_other_address", {})
            row[2:2] = [f"{vo['alone_calls_per_s']:.0f}->"
                        f"{vo.get('during_calls_per_s') or 0:.0f} "
                        f"({vo['ratio']:.2f})" if vo.get("ratio") is not None
                        else "n/a"]
            if fr:
                cores = fr["cores_attack"]
                if not fr["process"]:
                    front_alive = "DEAD"
                elif fr["workers_lost"]:
                    front_alive = f"{len(fr['workers_lost'])} worker(s) died"
                else:
                    front_alive = ("yes" if r.get("alive", {}).get("answers")
                                   else "NO ANSWER")
                row += [f"{fr['cpu_alone_s']}/{fr['cpu_attack_s']} "
                        f"({cores if cores is not None else 'n/a'})",
                        f"{h2a.fmt_bytes(fr['rss_before_bytes'])}->"
                        f"{h2a.fmt_bytes(fr['rss_peak_bytes'])}",
                        front_alive, h2a.fmt_bytes(fr["log_bytes"])]
            else:
                row += ["n/a"] * 4
        bad = r.get("not_held", [])
        row.append("yes" if not bad else "NO: " + "; ".join(bad))
        rows.append(row)
    widths = [max(len(str(x[i])) for x in rows + [head])
              for i in range(len(head) - 1)]
    line = lambda row: " | ".join(  # noqa: E731
        [str(c).ljust(w) for c, w in zip(row[:-1], widths)] + [row[-1]])
    print(f"\n{kind}: " + {
        "direct": "posenc_server on 127.0.0.1",
        "haproxy": f"{args.haproxy_cfg} (POSENC_1..3 = the one replica)",
        "nginx": f"{args.nginx_conf} (one server line)"}[kind]
        + f"; {args.seconds:g} s per attack; posenc RSS bound "
        f"{h2a.fmt_bytes(bound)}")
    print(line(head))
    print("-+-".join("-" * w for w in widths) + "-+-----")
    for row in rows:
        print(line(row))
    for r in results:
        if r.get("answered"):
            print(f"  {r['attack']}: answered the attacker: {r['answered']}")
    # One line per attack in the form bench/report_verdicts.py collects into
    # the report's verdict table (one 10 s run: no interval, so "met" or
    # "MISSED", never "within noise").
    for r in results:
        ratio = r.get("victim", {}).get("ratio")
        bad = r.get("not_held", [])
        print(f"{kind} {r['attack']}: victim {ratio if ratio is None else f'{ratio:.2f}'}"
              f" (target >= {args.min_ratio:g}), posenc alive and within "
              f"{h2a.fmt_bytes(bound)}"
              + ("" if kind == "direct" else f", {kind} alive and answering")
              + (": met" if not bad else ": MISSED (" + "; ".join(bad) + ")"))
    sys.stdout.flush()


def main():
    ap = argparse.ArgumentParser(
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--target", action="append", choices=TARGETS)
    ap.add_argument("--attack", action="append", choices=h2a.ATTACKS)
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--recover-seconds", type=float, default=10.0)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--server-binary")
    ap.add_argument("--victim-binary")
    ap.add_argument("--server-arg", action="append", default=[])
    ap.add_argument("--h2-arg", action="append", default=[],
                    help="extra h2_attacks.py argument (repeatable)")
    ap.add_argument("--haproxy", default="/usr/sbin/haproxy")
    ap.add_argument("--haproxy-cfg",
                    default=os.path.join(ROOT, "deploy", "haproxy",
                                         "haproxy.cfg"))
    ap.add_argument("--nginx", default="/usr/sbin/nginx")
    ap.add_argument("--nginx-conf",
                    default=os.path.join(ROOT, "deploy", "nginx",
                                         "posenc.conf"))
    ap.add_argument("--min-ratio", type=float, default=0.5)
    ap.add_argument("--no-other-victim", action="store_true",
                    help="no second victim from [::1] through the fronts")
    ap.add_argument("--front-rss-bytes", type=int, default=512 * MiB)
    ap.add_argument("--json")
    ap.add_argument("--keep-logs", action="store_true")
    ap.add_argument("--check", action="store_true",
                    help="exit 1 if some attack was not held")
    args = ap.parse_args()
    if not 0 < args.seconds <= 120:
        ap.error("--seconds in (0, 120]")
    if not 0 < args.recover_seconds <= 120:
        ap.error("--recover-seconds in (0, 120]")
    args.server_binary = args.server_binary or os.path.join(
        args.build, "server", "posenc_server")
    args.victim_binary = args.victim_binary or os.path.join(
        args.build, "bench", "client_load")
    for path in (args.server_binary, args.victim_binary):
        if not os.access(path, os.X_OK):
            ap.error(f"{path}: not found (build it, or give --build)")
    targets = args.target or list(TARGETS)
    for kind, binary in (("haproxy", args.haproxy), ("nginx", args.nginx)):
        if kind in targets and not os.access(binary, os.X_OK):
            ap.error(f"{binary} not installed")
    attacks = args.attack or h2a.ATTACKS
    bound = rss_bound(args.server_arg)

    tmp = tempfile.mkdtemp(prefix="posenc-fronts.")
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short",
                             "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", ROOT, "status", "--short", "--",
                            "deploy"], capture_output=True, text=True).stdout
    print(f"fronts.py at {commit or '?'}"
          + (" (deploy/ modified)" if dirty.strip() else "")
          + f"; {args.server_binary}; logs {tmp}", flush=True)
    everything, not_held = [], 0
    try:
        for kind in targets:
            results = []
            for name in attacks:
                print(f"== {kind}: {name} ({args.seconds:g} s)",
                      file=sys.stderr, flush=True)
                r = run_one(args, kind, name, tmp)
                r["not_held"] = verdict(r, bound, args)
                not_held += bool(r["not_held"])
                bad = r["not_held"]
                print("   " + ("NOT held: " + "; ".join(bad) if bad
                               else "held"), file=sys.stderr, flush=True)
                results.append(r)
            print_table(kind, results, bound, args)
            everything += results
    finally:
        if args.json:
            with open(args.json, "w") as f:
                json.dump({"commit": commit, "seconds": args.seconds,
                           "server_args": args.server_arg,
                           "rss_bound_bytes": bound, "results": everything},
                          f, indent=1)
        if args.keep_logs:
            print(f"logs kept in {tmp}", file=sys.stderr)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    print(f"loadavg after: {open('/proc/loadavg').read().strip()}")
    return 1 if args.check and not_held else 0


if __name__ == "__main__":
    sys.exit(main())
