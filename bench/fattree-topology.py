#!/usr/bin/env python3
"""Writes a two-tier fat tree in ibnetdiscover's topology format, for the InfiniBand simulator
(ibsim) that bench/fabric-sweep.sh runs: LEAVES leaf switches with HCAS_PER_LEAF HCAs and one
uplink to each of SPINES spine switches. The defaults are the 2,144-node fabric of the benchmark:
64 leaves of 64 ports (32 HCAs + 32 uplinks), 32 spines of 64 ports, 2,048 HCAs, 96 switches.

usage: fattree-topology.py [LEAVES [SPINES [HCAS_PER_LEAF]]] > fattree.net
"""
import sys


def main():
    leaves = int(sys.argv[1]) if len(sys.argv) > 1 else 64
    spines = int(sys.argv[2]) if len(sys.argv) > 2 else 32
    hcas = int(sys.argv[3]) if len(sys.argv) > 3 else 32
    leaf_ports = hcas + spines
    out = []
    # The first node in the file is where the simulator attaches a client by default: an HCA
    # comes first so a tool run without SIM_HOST starts at the edge, like on a compute node.
    for l in range(leaves):
        for h in range(hcas):
            out.append(f'Hca\t1 "H-l{l:02d}-{h:02d}"')
            out.append(f'[1]\t"S-leaf{l:02d}"[{h + 1}]\t\t# 4xHDR')
            out.append("")
    for l in range(leaves):
        out.append(f'Switch\t{leaf_ports} "S-leaf{l:02d}"')
        for h in range(hcas):
            out.append(f'[{h + 1}]\t"H-l{l:02d}-{h:02d}"[1]\t\t# 4xHDR')
        for s in range(spines):
            out.append(f'[{hcas + s + 1}]\t"S-spine{s:02d}"[{l + 1}]\t\t# 4xHDR')
        out.append("")
    for s in range(spines):
        out.append(f'Switch\t{max(leaves, 1)} "S-spine{s:02d}"')
        for l in range(leaves):
            out.append(f'[{l + 1}]\t"S-leaf{l:02d}"[{hcas + s + 1}]\t\t# 4xHDR')
        out.append("")
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
