#!/usr/bin/env python3
"""One PyTorch DDP training step whose gradient all-reduce matters: a stack of bias-free linear
layers (default 4 x 8192 x 8192 fp32, 268M parameters, 1.07 GB of gradients) on a small batch, so
the step is mostly communication. Run under torchrun, one process per GPU:

    torchrun --nproc_per_node=2 bench/ddp-step.py --bucket-cap-mb 25 --iters 8 --warmup 3

Rank 0 prints one line, `ddp-step: {json}`: the bucket size, every timed iteration (seconds, from
the start of the forward pass to the end of the optimizer step, CUDA-synchronised) and their
median, the gradient bytes, and the NCCL version PyTorch runs. The NCCL environment (plugin,
table, NCCL_* variables) is whatever the process was started with: the comparison script
alternates fresh processes (bench/RESULTS.md says how).
"""
import argparse
import json
import os
import statistics
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--bucket-cap-mb", type=float, default=25.0, help="DDP bucket_cap_mb (PyTorch's default: 25)")
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--width", type=int, default=8192)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--iters", type=int, default=8, help="timed iterations (median reported)")
    ap.add_argument("--warmup", type=int, default=3)
    a = ap.parse_args()

    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl", device_id=torch.device("cuda", local_rank))
    torch.manual_seed(0)
    model = torch.nn.Sequential(*[torch.nn.Linear(a.width, a.width, bias=False) for _ in range(a.layers)]).cuda()
    ddp = DDP(model, device_ids=[local_rank], bucket_cap_mb=a.bucket_cap_mb)
    opt = torch.optim.SGD(ddp.parameters(), lr=1e-6)
    x = torch.randn(a.batch, a.width, device="cuda")
    grad_bytes = sum(p.numel() * p.element_size() for p in model.parameters())

    times = []
    for i in range(a.warmup + a.iters):
        torch.cuda.synchronize()
        dist.barrier()
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        loss = ddp(x).float().pow(2).mean()
        loss.backward()
        opt.step()
        torch.cuda.synchronize()
        if i >= a.warmup:
            times.append(time.perf_counter() - t0)

    if dist.get_rank() == 0:
        v = torch.cuda.nccl.version()
        print("ddp-step: " + json.dumps({
            "bucket_cap_mb": a.bucket_cap_mb, "grad_bytes": grad_bytes, "world": dist.get_world_size(),
            "iters_s": [round(t, 6) for t in times], "median_s": round(statistics.median(times), 6),
            "nccl": ".".join(map(str, v)) if isinstance(v, tuple) else str(v),
            "torch": torch.__version__,
            "env": {k: os.environ[k] for k in sorted(os.environ) if k.startswith("NCCL_")},
        }), flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
