#!/usr/bin/env python3
"""A PyTorch job that issues a known number of NCCL collectives of known sizes, for checking what
libnccl-profiler-fabscope.so recorded against what the program issued. Run under torchrun, one
process per GPU, with NCCL_PROFILER_PLUGIN pointing at the plugin:

    torchrun --nproc_per_node=4 bench/profiler-job.py --scrape http://127.0.0.1:9517/metrics --out DIR

Per size (1 KiB to 256 MiB, powers of 4): --count all-reduces, --count all-gathers and
--count reduce-scatters of float32 (message sizes as nccl-tests counts them: the all-gather's
output, the reduce-scatter's input). Then, while every rank is still alive, rank 0 fetches the
exporter's /metrics (--scrape) into DIR/live.prom; each rank writes DIR/rank<R>.json with what it
issued and the resident memory of the plugin's mappings (its code and pools, and its segment).
"""
import argparse
import json
import os
import urllib.request

import torch
import torch.distributed as dist


def plugin_rss_kib() -> dict:
    """Rss of the plugin's file mappings, of the anonymous mapping right after them (its .bss: the
    fixed event pools) and of the shared segment, from /proc/self/smaps."""
    out = {"plugin_file": 0, "plugin_bss": 0, "segment": 0}
    prev_was_plugin = False
    current = None
    with open("/proc/self/smaps") as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 5 and "-" in parts[0] and ":" in parts[3]:  # a mapping's header line
                path = parts[5] if len(parts) >= 6 else ""
                if "nccl-profiler-fabscope" in path:
                    current = "plugin_file"
                    prev_was_plugin = True
                elif "fabscope-job." in path:
                    current = "segment"
                    prev_was_plugin = False
                elif path == "" and prev_was_plugin:
                    current = "plugin_bss"
                    prev_was_plugin = False
                else:
                    current = None
                    prev_was_plugin = False
            elif parts and parts[0] == "Rss:" and current:
                out[current] += int(parts[1])
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--count", type=int, default=30)
    ap.add_argument("--scrape", default="")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl", device_id=torch.device("cuda", local_rank))
    rank, world = dist.get_rank(), dist.get_world_size()
    issued = {}
    sizes = [1024 * 4 ** k for k in range(10)]  # 1 KiB .. 256 MiB
    for size in sizes:
        n = size // 4
        x = torch.ones(n, device="cuda")
        for _ in range(a.count):
            dist.all_reduce(x)
        issued[f"AllReduce/{size}"] = a.count
        if n % world == 0:
            part = torch.ones(n // world, device="cuda")
            full = torch.empty(n, device="cuda")
            for _ in range(a.count):
                dist.all_gather_into_tensor(full, part)
            issued[f"AllGather/{size}"] = a.count
            for _ in range(a.count):
                dist.reduce_scatter_tensor(part, full)
            issued[f"ReduceScatter/{size}"] = a.count
    torch.cuda.synchronize()
    # every rank done issuing: a barrier would be one more all-reduce, so rendezvous over the store
    store = dist.distributed_c10d._get_default_store()
    store.add("profiler-job-done", 1)
    store.wait(["profiler-job-done"])
    while int(store.add("profiler-job-done", 0)) < world:
        pass
    if rank == 0 and a.scrape:
        body = urllib.request.urlopen(a.scrape, timeout=10).read()
        with open(os.path.join(a.out, "live.prom"), "wb") as f:
            f.write(body)
    with open(os.path.join(a.out, f"rank{rank}.json"), "w") as f:
        json.dump({"rank": rank, "world": world, "issued": issued, "rss_kib": plugin_rss_kib(),
                   "nccl": ".".join(map(str, torch.cuda.nccl.version()))}, f)
    store.add("profiler-job-scraped", 1)
    while int(store.add("profiler-job-scraped", 0)) < world:
        pass
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
