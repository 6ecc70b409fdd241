#!/usr/bin/env python3
"""tti_sass_scoreboards — which loads a stalled instruction waits for (sm_70 and later).

Nsight Compute's source page names the instruction a warp stalls on, not the loads it
waits for.  A Volta-or-later instruction carries its dependency barriers in its control
bits (bits 105-125 of the 128-bit word: stall count, yield, write barrier, read barrier,
wait mask, reuse), which nvdisasm does not print; this reads them from a cubin's text
section (readelf, binutils) and lists, for instruction TARGET, the earlier instructions
from FROM on that set a barrier TARGET waits on.  No disassembler is needed: the
mnemonics come from an Nsight Compute source export (`ncu -i R --page source --csv
--print-source sass`) of the same binary, matched by position (same nvcc, same flags).

    nvcc -std=c++17 -gencode arch=compute_90,code=sm_90 -O3 -lineinfo -I. -cubin \\
         -o k.cubin kernels/tti_cols2.cu
    tools/tti_sass_scoreboards.py k.cubin SECTION sass.csv TARGET FROM

SECTION: the kernel's text section, e.g. .text._Z11k_tti_cols2ILi4ELi32ELi16ELb0EEv5TArgs3Boxiiiii
(readelf -S -W k.cubin).  Used for docs/tti.md's "The plane's last loads off the
scoreboard" (tuning.pipe 8).  Written here because no Debian package decodes these bits.
"""
import csv
import re
import struct
import subprocess
import sys


def text_section(cubin, name):
    out = subprocess.run(["readelf", "-S", "-W", cubin], capture_output=True, text=True).stdout
    for line in out.splitlines():
        if re.search(r"\] " + re.escape(name) + " ", line):
            f = line.split("]")[1].split()
            off, size = int(f[3], 16), int(f[4], 16)
            with open(cubin, "rb") as fh:
                fh.seek(off)
                return fh.read(size)
    sys.exit(f"{cubin}: no section {name}")


def control(words):
    """(opcode, write barrier, read barrier, wait mask) per instruction; 7: no barrier"""
    out = []
    for i in range(0, len(words), 16):
        lo, hi = struct.unpack("<QQ", words[i:i + 16])
        c = hi >> 41
        out.append((lo & 0xFFF, (c >> 5) & 7, (c >> 8) & 7, (c >> 11) & 0x3F))
    return out


def main():
    if len(sys.argv) != 6:
        sys.exit(__doc__)
    cubin, sec, sass, target, start = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
    ins = control(text_section(cubin, sec))
    with open(sass) as fh:
        rows = list(csv.reader(fh))
    head = rows[1]
    rows = [r for r in rows[2:] if len(r) == len(head)]
    if len(rows) < len(ins):
        sys.exit(f"{sass}: {len(rows)} instructions, the cubin's section {len(ins)}: not the same binary")
    col = head.index("Warp Stall Sampling (All Samples)")
    wait = ins[target][3]
    print(f"{target}: {rows[target][1].strip()}  waits on barriers {[b for b in range(6) if wait >> b & 1]}, "
          f"{rows[target][col]} stall samples")
    for i in range(start, target):
        _, wb, rb, _ = ins[i]
        if (wb != 7 and wait >> wb & 1) or (rb != 7 and wait >> rb & 1):
            print(f"{i}: sets {'write' if wb != 7 and wait >> wb & 1 else 'read'} barrier "
                  f"{wb if wb != 7 and wait >> wb & 1 else rb}: {rows[i][1].strip()}")


if __name__ == "__main__":
    main()
