#!/usr/bin/env python3
"""Straggler and hang trials for `fabscope job` on one GPU node (bench/RESULTS.md, "Running job").

One PyTorch DDP job of N ranks (torchrun) runs training steps with the fabscope profiler plugin
loaded, while `fabscope job watch --dir ... --json` reads the node's segments once a second. A
schedule of phases, fixed before the phases start, makes one rank slow for a while at a time:

  healthy   nothing injected (the false-name test)
  cpu L     the rank sleeps L x the step time before each forward pass (CPU straggler)
  gpu L     the rank's GPU spins L x the step time before each forward pass (torch.cuda._sleep)
  hang      the controller stops the rank's process (SIGSTOP) until fabscope names it, or 60 s

Each straggler phase is followed by a short healthy gap. Every watcher line is kept with the
controller's clock (one host: the same clock as the schedule). Per phase: was the injected rank
named, when first (seconds after the phase began), were other ranks named (wrong), and for healthy
phases was anyone named.

    python3 bench/job-trials.py --fabscope build/src/cli/fabscope \
        --plugin build/plugins/nccl-profiler/libnccl-profiler-fabscope.so --out /tmp/trials \
        --levels 0.05,0.10,0.25,0.50 --per-level 20 --healthy 10 --hangs 5

Roles: without --worker it is the controller (launches torchrun and the watcher); torchrun runs
this file again with --worker. Output: OUT/phases.json (the schedule), OUT/watch.jsonl (every
watcher line with its time), OUT/results.json and a summary on stdout.
"""
import argparse
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import threading
import time


# ---------------------------------------------------------------------------------------------
# worker: one rank of the DDP job


def worker(a):
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP

    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl", device_id=torch.device("cuda", local_rank))
    rank = dist.get_rank()
    torch.manual_seed(0)
    model = torch.nn.Sequential(*[torch.nn.Linear(a.width, a.width, bias=False) for _ in range(a.layers)]).cuda()
    ddp = DDP(model, device_ids=[local_rank], bucket_cap_mb=25)
    opt = torch.optim.SGD(ddp.parameters(), lr=1e-9)
    x = torch.randn(a.batch, a.width, device="cuda")

    def step():
        opt.zero_grad(set_to_none=True)
        loss = ddp(x).float().pow(2).mean()
        loss.backward()
        opt.step()
        return loss.item()  # a training loop's per-step sync (its loss logged)

    # GPU spin calibration: cycles per second of torch.cuda._sleep
    torch.cuda.synchronize()
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    e0.record()
    torch.cuda._sleep(100_000_000)
    e1.record()
    torch.cuda.synchronize()
    cycles_per_s = 100_000_000 / (e0.elapsed_time(e1) / 1e3)

    times = []
    for i in range(a.warmup):
        t0 = time.perf_counter()
        step()
        times.append(time.perf_counter() - t0)
    base = torch.tensor([statistics.median(times[len(times) // 2:])], device="cuda")
    dist.all_reduce(base, op=dist.ReduceOp.MAX)
    base = float(base.item())
    if rank == 0:
        with open(os.path.join(a.out, "ready.json"), "w") as f:
            json.dump({"base_step_s": base, "world": dist.get_world_size(), "cycles_per_s": cycles_per_s,
                       "nccl": ".".join(map(str, torch.cuda.nccl.version())), "torch": torch.__version__}, f)
    sched_path = os.path.join(a.out, "phases.json")
    stop_path = os.path.join(a.out, "stop")

    def agreed(cond):  # every rank leaves a loop at the same step (the ranks' collectives must match)
        t = torch.tensor([1.0 if cond else 0.0], device="cuda")
        dist.all_reduce(t, op=dist.ReduceOp.MAX)
        return t.item() > 0

    while not agreed(os.path.exists(sched_path)):
        step()
    with open(sched_path) as f:
        sched = json.load(f)
    phases = [p for p in sched["phases"] if p["kind"] in ("cpu", "gpu") and p["rank"] == rank]
    end = sched["end"]
    steps = 0
    while not agreed(time.time() >= end or os.path.exists(stop_path)):
        now = time.time()
        for p in phases:
            if p["t0"] <= now < p["t1"]:
                d = p["level"] * base
                if p["kind"] == "cpu":
                    time.sleep(d)
                else:
                    torch.cuda._sleep(int(d * cycles_per_s))
                break
        step()
        steps += 1
    dist.barrier()
    if rank == 0:
        print("worker: steps %d base %.4f s" % (steps, base), flush=True)
    dist.destroy_process_group()


# ---------------------------------------------------------------------------------------------
# controller


def make_schedule(a, t0, world, rng):
    kinds = []
    for _ in range(a.healthy):
        kinds.append(("healthy", 0.0))
    for lvl in [float(x) for x in a.levels.split(",") if x]:
        for i in range(a.per_level):
            kinds.append(("cpu" if i % 2 == 0 else "gpu", lvl))
    rng.shuffle(kinds)
    hangs = [("hang", 0.0)] * a.hangs
    phases = []
    t = t0
    for kind, lvl in kinds + hangs:
        r = rng.randrange(world)
        if kind == "hang":
            # run by the controller one after the other from here; the workers run until told to stop
            phases.append({"kind": kind, "rank": r, "level": 0, "t0": t, "t1": None})
            t += a.gap_hang
        else:
            phases.append({"kind": kind, "rank": r if kind != "healthy" else -1, "level": lvl, "t0": t, "t1": t + a.phase})
            t += a.phase + a.gap
    return phases, t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--worker", action="store_true")
    ap.add_argument("--fabscope", default="build/src/cli/fabscope")
    ap.add_argument("--plugin", default="build/plugins/nccl-profiler/libnccl-profiler-fabscope.so")
    ap.add_argument("--out", required=True)
    ap.add_argument("--nproc", type=int, default=4)
    ap.add_argument("--levels", default="0.05,0.10,0.25,0.50")
    ap.add_argument("--per-level", type=int, default=20)
    ap.add_argument("--healthy", type=int, default=10)
    ap.add_argument("--hangs", type=int, default=0)
    ap.add_argument("--phase", type=float, default=3.0, help="seconds of each straggler or healthy phase")
    ap.add_argument("--gap", type=float, default=1.5, help="healthy seconds after each phase")
    ap.add_argument("--hang-max", type=float, default=60.0)
    ap.add_argument("--gap-hang", type=float, default=6.0)
    ap.add_argument("--interval", type=float, default=1.0, help="fabscope job watch --interval")
    ap.add_argument("--watch-args", default="", help="more flags for fabscope job watch")
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--width", type=int, default=4096)
    ap.add_argument("--batch", type=int, default=4096)
    ap.add_argument("--warmup", type=int, default=30)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--ras-capture", default="", help="script to run against NCCL's RAS port during the first hang")
    a = ap.parse_args()
    if a.worker:
        return worker(a)

    os.makedirs(a.out, exist_ok=True)
    for f in ("ready.json", "phases.json", "stop"):
        if os.path.exists(os.path.join(a.out, f)):
            os.remove(os.path.join(a.out, f))
    shm = os.path.join(a.out, "shm")
    os.makedirs(shm, exist_ok=True)
    env = dict(os.environ, NCCL_PROFILER_PLUGIN=os.path.abspath(a.plugin), FABSCOPE_PROFILER_DIR=shm,
               NCCL_NVLS_ENABLE="0")
    me = os.path.abspath(__file__)
    cmd = ["torchrun", "--nproc_per_node=%d" % a.nproc, me, "--worker", "--out", a.out, "--layers", str(a.layers),
           "--width", str(a.width), "--batch", str(a.batch), "--warmup", str(a.warmup)]
    tr_log = open(os.path.join(a.out, "torchrun.log"), "w")
    tr = subprocess.Popen(cmd, env=env, stdout=tr_log, stderr=subprocess.STDOUT, start_new_session=True)
    wcmd = [a.fabscope, "job", "watch", "--dir", shm, "--json", "--interval", str(a.interval)] + a.watch_args.split()
    w = subprocess.Popen(wcmd, stdout=subprocess.PIPE, stderr=open(os.path.join(a.out, "watch.err"), "w"), text=True)
    lines = []  # (time, doc)
    lock = threading.Lock()

    def reader():
        with open(os.path.join(a.out, "watch.jsonl"), "w") as f:
            for line in w.stdout:
                t = time.time()
                f.write(json.dumps({"t": t, "doc": json.loads(line)}) + "\n")
                with lock:
                    lines.append((t, json.loads(line)))

    th = threading.Thread(target=reader, daemon=True)
    th.start()
    ready = os.path.join(a.out, "ready.json")
    t_wait = time.time()
    while not os.path.exists(ready):
        if tr.poll() is not None or time.time() - t_wait > 300:
            print("job-trials: the job did not get ready (rc %s); see torchrun.log" % tr.poll())
            w.terminate()
            return 1
        time.sleep(0.2)
    time.sleep(0.2)
    info = json.load(open(ready))
    rng = random.Random(a.seed)
    t0 = time.time() + 2.0
    phases, end = make_schedule(a, t0, info["world"], rng)
    # hang phases are run by the controller; the workers stop at "end"
    end = end + 5 if not a.hangs else end + 3600  # with hangs, the workers run until told to stop
    sched = {"phases": phases, "end": end, "info": info, "args": vars(a)}
    tmp = os.path.join(a.out, "phases.tmp")
    json.dump(sched, open(tmp, "w"))
    os.rename(tmp, os.path.join(a.out, "phases.json"))

    def latest_after(t):
        with lock:
            return [(tt, d) for tt, d in lines if tt >= t]

    def pids():
        with lock:
            for tt, d in reversed(lines):
                out = {}
                for c in d.get("comms", []):
                    for r in c.get("ranks", []):
                        out[r["rank"]] = r["pid"]
                if len(out) == info["world"]:
                    return out
        return {}

    # run the hang phases at their time; straggler phases run by themselves in the workers
    for p in phases:
        if p["kind"] != "hang":
            continue
        while time.time() < p["t0"]:
            time.sleep(0.05)
        pid = pids().get(p["rank"])
        if not pid:
            p["error"] = "no pid for rank %d" % p["rank"]
            continue
        p["pid"] = pid
        start = time.time()
        p["t0"] = start
        os.kill(pid, signal.SIGSTOP)
        named = None
        stopped_named = None  # the rank named by its process state (STOPPED: ...), before the hang time
        ras_done = False
        while time.time() - start < a.hang_max:
            for tt, d in latest_after(start):
                for c in d.get("comms", []):
                    v = c.get("verdict", "")
                    if c.get("hung") and v.startswith("HANG: rank %d " % p["rank"]):
                        named = tt if named is None else min(named, tt)
                    if v.startswith("STOPPED: rank %d " % p["rank"]) or (
                            c.get("hung") and v.startswith("HANG: rank %d " % p["rank"]) and "is stopped" in v):
                        stopped_named = tt if stopped_named is None else min(stopped_named, tt)
            if named:
                break
            time.sleep(0.1)
        p["stopped_after_s"] = None if stopped_named is None else stopped_named - start
        if a.ras_capture and not ras_done:
            subprocess.run([sys.executable, a.ras_capture, "--addr", "localhost:28028", "--out",
                            os.path.join(a.out, "ras"), "--tag", "hang-rank%d" % p["rank"]], timeout=60)
            ras_done = True
        os.kill(pid, signal.SIGCONT)
        p["t1"] = time.time()
        p["named_after_s"] = None if named is None else named - start
        time.sleep(a.gap_hang)  # the job recovers before the next
    if not a.hangs:
        while time.time() < end:
            time.sleep(0.1)
    open(os.path.join(a.out, "stop"), "w").close()
    # let the workers finish
    try:
        tr.wait(timeout=max(60, end - time.time() + 120))
    except subprocess.TimeoutExpired:
        os.killpg(tr.pid, signal.SIGKILL)
    time.sleep(a.interval * 2 + 0.5)
    w.terminate()
    w.wait()
    th.join(timeout=5)
    json.dump(sched, open(os.path.join(a.out, "phases.json"), "w"))
    return score(a, phases, lines, info)


def score(a, phases, lines, info):
    """Per phase: the straggler names seen while it ran (and in its gap)."""
    res = []
    prev_rank = None
    for i, p in enumerate(phases):
        if p["kind"] == "hang":
            res.append({"kind": "hang", "rank": p["rank"], "named_after_s": p.get("named_after_s"),
                        "stopped_after_s": p.get("stopped_after_s"), "error": p.get("error")})
            continue
        t0, t1 = p["t0"], p["t1"]
        t_end = t1 + a.gap
        names = []  # (t, rank) of every straggler named in the window
        for tt, d in lines:
            if t0 <= tt < t_end:
                for c in d.get("comms", []):
                    if c.get("straggler") is not None:
                        names.append((tt, c["straggler"]))
        stale = 2.0  # the previous phase's rank may still be named this long after a new phase begins
        if p["kind"] == "healthy":
            wrong = [n for n in names if not (n[1] == prev_rank and n[0] < t0 + stale)]
            res.append({"kind": "healthy", "wrong": len(wrong), "wrong_ranks": sorted({r for _, r in wrong})})
        else:
            right = [tt for tt, r in names if r == p["rank"] and tt < t1 + 0.5]
            wrong = [(tt, r) for tt, r in names if r != p["rank"] and not (r == prev_rank and tt < t0 + stale)]
            res.append({"kind": p["kind"], "level": p["level"], "rank": p["rank"], "named": bool(right),
                        "named_after_s": (min(right) - t0) if right else None, "wrong": len(wrong),
                        "wrong_ranks": sorted({r for _, r in wrong})})
        prev_rank = p["rank"] if p["kind"] != "healthy" else None
    summary = {}
    for r in res:
        k = "hang" if r["kind"] == "hang" else ("healthy" if r["kind"] == "healthy" else "level %.2f" % r["level"])
        s = summary.setdefault(k, {"trials": 0, "named": 0, "wrong_trials": 0, "times": []})
        s["trials"] += 1
        if r["kind"] == "healthy":
            s["wrong_trials"] += 1 if r["wrong"] else 0
        else:
            if r.get("named_after_s") is not None:
                s["named"] += 1
                s["times"].append(r["named_after_s"])
            s["wrong_trials"] += 1 if r.get("wrong") else 0
    out = {"info": info, "args": vars(a), "phases": res, "summary": {}}
    print("job-trials: world %d, base step %.1f ms, NCCL %s, torch %s, watch interval %.1f s" %
          (info["world"], 1e3 * info["base_step_s"], info["nccl"], info["torch"], a.interval))
    print("%-12s %7s %7s %8s %12s %12s" % ("phase", "trials", "named", "wrong", "median s", "max s"))
    for k in sorted(summary):
        s = summary[k]
        med = statistics.median(s["times"]) if s["times"] else None
        mx = max(s["times"]) if s["times"] else None
        out["summary"][k] = {"trials": s["trials"], "named": s["named"], "wrong_trials": s["wrong_trials"],
                             "median_s": med, "max_s": mx}
        print("%-12s %7d %7s %8d %12s %12s" % (k, s["trials"], "-" if k == "healthy" else s["named"],
                                                  s["wrong_trials"], "-" if med is None else "%.2f" % med,
                                                  "-" if mx is None else "%.2f" % mx))
    st = [r["stopped_after_s"] for r in res if r["kind"] == "hang" and r.get("stopped_after_s") is not None]
    if any(r["kind"] == "hang" for r in res):
        print("hang: the stopped rank named by its state in %d of %d, after %s s" %
              (len(st), sum(1 for r in res if r["kind"] == "hang"), ", ".join("%.1f" % x for x in st) or "-"))
    json.dump(out, open(os.path.join(a.out, "results.json"), "w"), indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
