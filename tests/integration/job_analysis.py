#!/usr/bin/env python3
"""Integration test: `fabscope job` names the straggler, the hang and the slow connection of
synthetic jobs, through the real exporters and a real Prometheus.

Usage: job_analysis.py FABSCOPE DRIVER PLUGIN PROMETHEUS RULES_YML

Jobs (tests/plugin/profiler_driver.cpp: processes that load libnccl-profiler-fabscope.so and
drive it as NCCL 2.28 does):
  train-7   4 ranks over two "hosts" (two drivers, two segment directories, two exporters), the
            second host's GPU clock 7.3 s ahead; rank 3 enters every all-reduce 5 ms after the
            others; a collective every 50 ms.
  stuck-9   4 ranks on hostC; ranks 0, 2, 3 wait in an all-reduce that rank 1 never started.
  links-5   4 ranks on hostD with network steps; rank 1's steps to rank 2 take 20x the others'.
  stop-13   4 ranks on hostE, all inside the same all-reduce; rank 2's process is stopped (SIGSTOP).
Asserted: `fabscope job status` over the exporters' /jobs (--nodes), from a saved read (--from),
from the local directory (--dir) and from Prometheus (--prometheus) names rank 3 on hostB, the
hang of rank 1 (and --drain drains its host through scontrol), the connection 1 -> 2, the stopped
rank 2 of stop-13 (at once, and first in the hang once the hang time passed); Prometheus (1 s scrapes, the job rules with the straggler's
`for` shortened) fires FabscopeJobStraggler for rank 3 on hostB, FabscopeJobHang for rank 1 on
hostC only, and FabscopeJobProcessStopped for rank 2 on hostE only. Every wait has a deadline; every process is killed at the end.
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from prom import free_port, get, query, wait_for  # noqa: E402

DEADLINE_S = 150


def main():
    fabscope, driver, plugin, prometheus, rules = sys.argv[1:6]
    deadline = time.monotonic() + DEADLINE_S
    work = tempfile.mkdtemp(prefix="fabscope-job-analysis-")
    procs = []
    stopped = []  # processes this test stopped: continued before the end, or they outlive it
    failures = []

    def check(cond, what):
        print(("ok   " if cond else "FAIL ") + what, flush=True)
        if not cond:
            failures.append(what)

    def start_driver(d, args):
        os.makedirs(d, exist_ok=True)
        p = subprocess.Popen([driver, plugin, d] + args, stdout=subprocess.PIPE, text=True)
        procs.append(p)
        line = p.stdout.readline().split()
        check(line[:1] == ["ready"], f"driver {' '.join(args[:6])}...: ready: {line}")
        return [int(x) for x in line[1:]]

    def job(*args):
        r = subprocess.run([fabscope, "job"] + list(args), capture_output=True, text=True, timeout=60)
        return r.returncode, r.stdout, r.stderr

    try:
        dA, dB, dC, dD, dE = (os.path.join(work, n) for n in ("a", "b", "c", "d", "e"))
        common = ["--nranks", "4", "--ranks", "2", "--comms", "1", "--ops", "64", "--sizes", "2", "--job", "train-7",
                  "--straggler", "3", "--delay-us", "5000", "--jitter-us", "300", "--period-ms", "50"]
        start_driver(dA, common + ["--first-rank", "0", "--host", "hostA"])
        start_driver(dB, common + ["--first-rank", "2", "--host", "hostB", "--gpu-offset-ns", "7300000000"])
        start_driver(dC, ["--ranks", "4", "--comms", "1", "--ops", "30", "--sizes", "2", "--job", "stuck-9",
                          "--host", "hostC", "--in-flight", "--behind", "1"])
        start_driver(dD, ["--ranks", "4", "--comms", "1", "--ops", "20", "--sizes", "1", "--job", "links-5",
                          "--host", "hostD", "--proxy-steps", "40", "--link-us", "50", "--slow-link", "1:2",
                          "--slow-link-us", "1000"])
        pidsE = start_driver(dE, ["--ranks", "4", "--comms", "1", "--ops", "30", "--sizes", "2", "--job", "stop-13",
                                  "--host", "hostE", "--in-flight"])
        check(len(pidsE) == 4, f"driver of stop-13: 4 rank pids ({pidsE})")
        os.kill(pidsE[2], signal.SIGSTOP)
        stopped.append(pidsE[2])

        t_started = time.monotonic()
        ports = {}
        for name, d in (("a", dA), ("b", dB), ("c", dC), ("e", dE)):
            ports[name] = free_port()
            log = open(os.path.join(work, f"exporter-{name}.log"), "w")
            procs.append(subprocess.Popen([fabscope, "exporter", "--listen", f"127.0.0.1:{ports[name]}",
                                           "--checks-interval", "0", "--jobs", "--jobs-dir", d],
                                          stdout=log, stderr=subprocess.STDOUT))
        for name in ports:
            wait_for(f"exporter {name} /healthz", lambda: get(f"http://127.0.0.1:{ports[name]}/healthz")[0] == 200,
                     deadline)

        # /jobs serves the records
        code, body = get(f"http://127.0.0.1:{ports['b']}/jobs")
        doc = json.loads(body)
        check(code == 200 and doc["schema"] == "fabscope.job-records" and
              sorted(r["rank"] for r in doc["ranks"]) == [2, 3] and all(r["host"] == "hostB" for r in doc["ranks"]),
              f"/jobs of host B: ranks 2 and 3 of hostB ({code})")

        nodes = f"127.0.0.1:{ports['a']},127.0.0.1:{ports['b']}"
        rc, out, err = job("status", "--nodes", nodes, "--json")
        j = json.loads(out) if out.strip() else {}
        comms = [c for c in j.get("comms", []) if c["job_id"] == "train-7"]
        check(rc == 1 and len(comms) == 1 and comms[0]["straggler"] == 3 and comms[0]["ranks_read"] == 4 and
              comms[0]["compared"] >= 16, f"--nodes: straggler rank 3 of 4 read, exit 1 (rc {rc}, {err.strip()}, "
              f"{[(c['straggler'], c['compared'], c['verdict']) for c in comms]})")
        strag = [f for f in j.get("findings", []) if f["id"] == "job.straggler"]
        check(len(strag) == 1 and "rank 3 (host hostB" in strag[0]["message"], f"job.straggler names rank 3 on hostB: "
              f"{strag[0]['message'] if strag else None}")
        skew = {r["rank"]: r["gpu_start_skew_seconds"] for r in comms[0]["ranks"]} if comms else {}
        check(skew.get(3) is not None and 0.004 < skew[3] < 0.006 and abs(skew.get(0) or 1) < 0.001,
              f"GPU start skew on hostB: rank 3 +5 ms against rank 2, whatever hostB's clock: {skew}")

        save = os.path.join(work, "job.json")
        rc, out, err = job("status", "--nodes", nodes + ",127.0.0.1:1", "--save", save)
        width = max(len(line) for line in out.splitlines()) if out else 0
        long_lines = [line for line in out.splitlines() if len(line) > 100]
        check(rc == 1 and "STRAGGLER: rank 3 (host hostB" in out and "job.source_error" in out and width <= 100,
              f"human view over 3 nodes, one down: named, the dead node said, {width} columns (rc {rc}) {long_lines}")
        rc, out, err = job("status", "--from", save, "--json")
        check(rc == 1 and json.loads(out)["comms"][0]["straggler"] == 3, f"--from the saved read: the same verdict ({rc})")

        time.sleep(max(0.0, t_started + 2.0 - time.monotonic()))  # in flight for more than --hang-after
        rc, out, err = job("status", "--dir", dC, "--hang-after", "1", "--json")
        j = json.loads(out) if out.strip() else {}
        hang = [f for f in j.get("findings", []) if f["id"] == "job.hang"]
        check(rc == 2 and len(hang) == 1 and "behind: rank 1 (host hostC" in hang[0]["message"],
              f"--dir: the hang names rank 1 behind, exit 2 (rc {rc}, {hang[0]['message'] if hang else err})")
        # --drain runs Slurm's scontrol for the host of the rank behind (a recording stand-in on PATH)
        bindir = os.path.join(work, "bin")
        os.makedirs(bindir)
        calls = os.path.join(work, "scontrol.calls")
        with open(os.path.join(bindir, "scontrol"), "w") as f:
            f.write(f"#!/bin/sh\nprintf '%s|' \"$@\" >> {calls}\necho >> {calls}\n")
        os.chmod(os.path.join(bindir, "scontrol"), 0o755)
        env = dict(os.environ, PATH=bindir + os.pathsep + os.environ.get("PATH", ""))
        r = subprocess.run([fabscope, "job", "status", "--dir", dC, "--hang-after", "1", "--drain"], capture_output=True,
                           text=True, timeout=60, env=env)
        drained = open(calls).read().splitlines() if os.path.exists(calls) else []
        check(r.returncode == 2 and drained == ["update|NodeName=hostC|State=DRAIN|Reason=fabscope job: job.hang|"],
              f"--drain: scontrol drains hostC once for the hang ({r.returncode}, {drained}, {r.stderr.strip()})")
        rc, out, err = job("status", "--dir", dD, "--json")
        j = json.loads(out) if out.strip() else {}
        sl = [f for f in j.get("findings", []) if f["id"] == "job.slow_link"]
        check(rc == 1 and len(sl) == 1 and re.search(r"rank 1 \(host hostD.*-> rank 2 \(host hostD", sl[0]["message"]),
              f"--dir: the slow connection 1 -> 2 (rc {rc}, {sl[0]['message'] if sl else err})")

        # stop-13: every rank inside the same all-reduce, rank 2 stopped: named at once by its state
        rc, out, err = job("status", "--dir", dE, "--hang-after", "60", "--json")
        j = json.loads(out) if out.strip() else {}
        st = [f for f in j.get("findings", []) if f["id"] == "job.process_stopped"]
        comms = j.get("comms", [])
        check(rc == 2 and len(st) == 1 and "rank 2 (host hostE" in st[0]["message"] and
              f"pid {pidsE[2]}" in st[0]["message"] and comms and comms[0]["stopped"] == [2] and
              comms[0]["verdict"].startswith("STOPPED: rank 2 (host hostE"),
              f"--dir: the stopped rank 2 named before the hang time (rc {rc}, {st[0]['message'] if st else err}, "
              f"{[c['verdict'] for c in comms]})")
        rc, out, err = job("status", "--dir", dE, "--hang-after", "1", "--json")
        j = json.loads(out) if out.strip() else {}
        comms = j.get("comms", [])
        check(rc == 2 and comms and comms[0]["hung"] and comms[0]["behind"] == [2] and
              comms[0]["verdict"].startswith("HANG: rank 2 (host hostE") and "is stopped" in comms[0]["verdict"],
              f"--dir: past the hang time the hang waits for the stopped rank 2 ({rc}, {[c['verdict'] for c in comms]})")
        code, body = get(f"http://127.0.0.1:{ports['e']}/metrics")
        check(code == 200 and re.search(r'fabscope_job_process_info\{[^}]*pid="%d"[^}]*state="stopped"' % pidsE[2], body)
              and len(re.findall(r'fabscope_job_process_info\{[^}]*state="running"', body)) == 3,
              f"exporter E: the stopped process's state label is stopped, the three others running ({code})")

        # Prometheus, the straggler's `for` shortened
        with open(rules) as f:
            text = f.read()
        text = text.replace("        for: 2m\n", "        for: 0s\n").replace("        for: 15s\n", "        for: 0s\n")
        with open(os.path.join(work, "fabscope-job-rules.yml"), "w") as f:
            f.write(text)
        prom_port = free_port()
        targets = ", ".join(f"'127.0.0.1:{p}'" for p in ports.values())
        with open(os.path.join(work, "prometheus.yml"), "w") as f:
            f.write(f"""global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files: [fabscope-job-rules.yml]
scrape_configs:
  - job_name: fabscope
    static_configs:
      - targets: [{targets}]
""")
        prom_log = open(os.path.join(work, "prometheus.log"), "w")
        procs.append(subprocess.Popen([prometheus, f"--config.file={work}/prometheus.yml",
                                       f"--storage.tsdb.path={work}/tsdb", f"--web.listen-address=127.0.0.1:{prom_port}"],
                                      stdout=prom_log, stderr=subprocess.STDOUT))
        prom = f"http://127.0.0.1:{prom_port}"
        wait_for("prometheus ready", lambda: get(prom + "/-/ready")[0] == 200, deadline)

        def firing(name):
            return query(prom_port, f'ALERTS{{alertname="{name}",alertstate="firing"}}')

        wait_for("FabscopeJobStraggler firing", lambda: firing("FabscopeJobStraggler"), deadline)
        time.sleep(3)
        got = [(a["metric"].get("rank"), a["metric"].get("host"), a["metric"].get("job_id")) for a in firing("FabscopeJobStraggler")]
        check(got == [("3", "hostB", "train-7")], f"FabscopeJobStraggler: rank 3 on hostB only: {got}")
        rc, out, err = job("status", "--prometheus", prom, "--prometheus-window", "10s", "--json")
        j = json.loads(out) if out.strip() else {}
        comms = [c for c in j.get("comms", []) if c["job_id"] == "train-7"]
        check(rc >= 1 and len(comms) == 1 and comms[0]["straggler"] == 3 and comms[0]["ranks_read"] == 4,
              f"--prometheus: straggler rank 3 (rc {rc}, {err.strip()}, {[(c['straggler'], c['verdict']) for c in comms]})")
        wait_for("FabscopeJobHang firing", lambda: firing("FabscopeJobHang"), deadline)
        time.sleep(2)
        got = [(a["metric"].get("rank"), a["metric"].get("host"), a["metric"].get("job_id")) for a in firing("FabscopeJobHang")]
        check(got == [("1", "hostC", "stuck-9")], f"FabscopeJobHang: rank 1 on hostC only: {got}")
        rc, out, err = job("status", "--prometheus", prom, "--job", "stuck-9", "--json")
        j = json.loads(out) if out.strip() else {}
        hang = [f for f in j.get("findings", []) if f["id"] == "job.hang"]
        check(rc == 2 and len(hang) == 1 and "behind: rank 1 (host hostC" in hang[0]["message"],
              f"--prometheus --job stuck-9: the hang, rank 1 behind (rc {rc})")
        wait_for("FabscopeJobProcessStopped firing", lambda: firing("FabscopeJobProcessStopped"), deadline)
        got = [(a["metric"].get("rank"), a["metric"].get("host"), a["metric"].get("job_id"), a["metric"].get("pid"))
               for a in firing("FabscopeJobProcessStopped")]
        check(got == [("2", "hostE", "stop-13", str(pidsE[2]))], f"FabscopeJobProcessStopped: rank 2 on hostE only: {got}")
        rc, out, err = job("status", "--prometheus", prom, "--job", "stop-13", "--json")
        j = json.loads(out) if out.strip() else {}
        st = [f for f in j.get("findings", []) if f["id"] == "job.process_stopped"]
        check(rc == 2 and len(st) == 1 and "rank 2 (host hostE" in st[0]["message"],
              f"--prometheus --job stop-13: the stopped rank 2 (rc {rc}, {st[0]['message'] if st else err})")
        rc, out, err = job("status", "--prometheus", "https://x:9090")
        check(rc == 3 and "job: --prometheus" in err and "https is not supported" in err, f"--prometheus https: a usage error ({rc}: {err.strip()})")
    except Exception as e:  # noqa: BLE001
        failures.append(f"exception: {e!r}")
        print(f"FAIL exception: {e!r}")
    finally:
        for pid in stopped:
            try:
                os.kill(pid, signal.SIGCONT)
            except OSError:
                pass
        for p in procs:
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
        if failures:
            for name in os.listdir(work):
                if name.endswith(".log"):
                    print(f"--- {name}\n" + open(os.path.join(work, name)).read()[-3000:])
        shutil.rmtree(work, ignore_errors=True)
    print(f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
