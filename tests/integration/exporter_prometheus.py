#!/usr/bin/env python3
"""Integration test: `fabscope exporter` scraped by a real Prometheus on loopback.

Usage: exporter_prometheus.py FABSCOPE PROMETHEUS FIXTURE_TTAR RULES_YML DASHBOARD_JSON

Unpacks the real procfs capture, starts the exporter on it and a Prometheus (temporary TSDB,
1 s scrape interval, our rules loaded), waits for a scrape, then asserts series and values through
the HTTP API; every query of the Grafana dashboard must evaluate. Bounded: every wait has a deadline; both processes are killed at the end.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import ttar  # noqa: E402
from prom import free_port, get, query, wait_for  # noqa: E402

DEADLINE_S = 60


def main():
    fabscope, prometheus, archive, rules, dashboard = sys.argv[1:6]
    deadline = time.monotonic() + DEADLINE_S
    work = tempfile.mkdtemp(prefix="fabscope-it-")
    procs = []
    failures = []

    def check(cond, what):
        print(("ok   " if cond else "FAIL ") + what)
        if not cond:
            failures.append(what)

    try:
        root = os.path.join(work, "root")
        ttar.unpack(archive, root)
        # The capture's mlx5_0 phys_state "4: ACTIVE" is not a name the kernel writes for code 4
        # (the exporter counts it as a read error); give it the value a LinkUp mlx5 port shows.
        with open(os.path.join(root, "sys/class/infiniband/mlx5_0/ports/1/phys_state"), "w") as f:
            f.write("5: LinkUp\n")
        exp_port, prom_port = free_port(), free_port()
        exp_log = open(os.path.join(work, "exporter.log"), "w")
        procs.append(subprocess.Popen([fabscope, "exporter", "--listen", f"127.0.0.1:{exp_port}", "--root", root,
                                       "--checks-interval", "3600"], stdout=exp_log, stderr=subprocess.STDOUT))
        wait_for("exporter /healthz", lambda: get(f"http://127.0.0.1:{exp_port}/healthz")[0] == 200, deadline)

        shutil.copy(rules, os.path.join(work, "fabscope-rules.yml"))
        with open(os.path.join(work, "prometheus.yml"), "w") as f:
            f.write(f"""global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files: [fabscope-rules.yml]
scrape_configs:
  - job_name: fabscope
    static_configs:
      - targets: ['127.0.0.1:{exp_port}']
""")
        prom_log = open(os.path.join(work, "prometheus.log"), "w")
        procs.append(subprocess.Popen([prometheus, f"--config.file={work}/prometheus.yml",
                                       f"--storage.tsdb.path={work}/tsdb", f"--web.listen-address=127.0.0.1:{prom_port}"],
                                      stdout=prom_log, stderr=subprocess.STDOUT, cwd=work))
        wait_for("a successful scrape", lambda: query(prom_port, 'up{job="fabscope"} == 1'), deadline)

        tx = query(prom_port, 'fabscope_port_data_transmitted_bytes_total{device="mlx5_0",port="1"}')
        # counters/port_xmit_data of mlx5_0 port 1 in the capture: 2880761508848 words of 4 bytes.
        check(len(tx) == 1 and float(tx[0]["value"][1]) == 2880761508848 * 4, f"mlx5_0:1 bytes transmitted: {tx}")
        active = query(prom_port, "fabscope_port_state == 4")
        check(len(active) == 4, f"4 ACTIVE ports (hfi1_0:1, mlx4_0:1, mlx4_0:2, mlx5_0:1): {len(active)}")
        rate = query(prom_port, 'fabscope_port_rate_bytes_per_second{device="mlx4_0",port="2"}')
        check(len(rate) == 1 and float(rate[0]["value"][1]) == 40e9 / 8, f"mlx4_0:2 at 40 Gb/s: {rate}")
        info = query(prom_port, 'fabscope_port_info{device="mlx4_0",hca_type="MT4099"}')
        check(len(info) == 2, f"info of both mlx4_0 ports labelled with hca_type MT4099: {len(info)}")
        hw = query(prom_port, 'fabscope_port_hw_events_total{device="mlx5_0",counter="out_of_sequence"}')
        check(len(hw) == 1 and float(hw[0]["value"][1]) == 1, f"mlx5_0 hw counter out_of_sequence = 1: {hw}")
        errors = query(prom_port, "sum(fabscope_scrape_errors_total)")
        check(len(errors) == 1 and float(errors[0]["value"][1]) == 0, f"no scrape errors on the clean capture: {errors}")
        # Check verdicts: the exporter ran the full probe and every check once at start.
        status = query(prom_port, "fabscope_check_status")
        ids = {s["metric"].get("check") for s in status}
        check({"link.port_down", "link.rate_degraded", "link.symbol_errors", "link.link_downed",
               "gdr.peermem_missing"} <= ids, f"a check status for every id the alert rules name: {sorted(ids)}")
        # Every id of the registry (`check --json` lists it under "checks"), every family included.
        listed = json.loads(subprocess.run([fabscope, "check", "--json", "--root", root], capture_output=True,
                                           text=True, timeout=60).stdout)["checks"]
        registry = {c["id"] if isinstance(c, dict) else c for c in listed}
        check(registry <= ids and any(i.startswith("firewall.") for i in registry),
              f"a check status for every registry id: missing {sorted(registry - ids)}")
        down = query(prom_port, 'fabscope_check_status{check="link.port_down"}')
        check(len(down) == 1 and float(down[0]["value"][1]) == 0, f"link.port_down ok on the capture: {down}")
        # mlx4_0:2 runs at 40 Gb/s beside 100 Gb/s ports of the same link layer: a warn verdict.
        slow = query(prom_port, 'fabscope_check_status{check="link.rate_degraded"}')
        check(len(slow) == 1 and float(slow[0]["value"][1]) == 1, f"link.rate_degraded warns: {slow}")
        # The recording rules evaluate against real series (utilisation needs two scrapes).
        wait_for("the utilisation recording rule",
                 lambda: query(prom_port, "fabscope:port_transmit_utilisation:ratio_rate5m"), deadline)
        util = query(prom_port, "fabscope:port_transmit_utilisation:ratio_rate5m")
        check(len(util) == 4 and all(float(u["value"][1]) == 0 for u in util),
              f"utilisation recorded for 4 ports, 0 on a static capture: {len(util)}")
        _, rules_body = get(f"http://127.0.0.1:{prom_port}/api/v1/rules")
        groups = json.loads(rules_body)["data"]["groups"]
        bad = [r["name"] for g in groups for r in g["rules"] if r.get("health") not in ("ok", "unknown")]
        check(not bad, f"every rule evaluates without error: {bad}")
        exprs = [t["expr"] for p in json.load(open(dashboard))["panels"] for t in p.get("targets", [])]
        empty = []
        for e in exprs:
            result = query(prom_port, e.replace("$instance", ".*").replace("$device", ".*"))  # asserts success
            # Empty is right where the capture has nothing to show: no check or port in trouble,
            # no traffic on a static tree (loss ratio divides by a zero packet rate), no GPU (the
            # NVLink row: this capture is of a node without GPUs, so NVML is never opened).
            may_be_empty = ("> 0", "!= 4", "hw_events", "packet_loss", "fabscope_gpu_")
            if not result and not any(m in e for m in may_be_empty):
                empty.append(e)
        check(not empty, f"all {len(exprs)} dashboard queries evaluate; those that must have data do: {empty}")
    finally:
        for p in procs:
            p.kill()
            p.wait(timeout=10)
        if failures:
            for log in ("exporter.log", "prometheus.log"):
                path = os.path.join(work, log)
                if os.path.exists(path):
                    print(f"--- {log} (tail)")
                    print("".join(open(path).readlines()[-20:]))
        shutil.rmtree(work, ignore_errors=True)
    if failures:
        sys.exit(f"{len(failures)} assertion(s) failed")


if __name__ == "__main__":
    main()
