#!/usr/bin/env python3
"""Generate and build a large firmware ELF for the symbol benchmark: CUS compilation units of
FUNCS functions each, every function calling static inline helpers that -O2 inlines.
    gen_large_elf.py OUTDIR [CUS FUNCS]"""
import concurrent.futures
import os
import subprocess
import sys

out = sys.argv[1]
cus = int(sys.argv[2]) if len(sys.argv) > 2 else 120
funcs = int(sys.argv[3]) if len(sys.argv) > 3 else 180
os.makedirs(out, exist_ok=True)
CFLAGS = ["-O2", "-g", "-mcpu=cortex-m4", "-mthumb", "-std=c11", "-ffunction-sections", "-Wall", "-Werror"]


def source(cu):
    lines = ["#include <stdint.h>", "extern volatile uint32_t sink_%d;" % cu]
    for h in range(4):  # helpers, inlined into every caller
        lines.append("static inline __attribute__((always_inline)) uint32_t mix%d_%d(uint32_t x)" % (cu, h))
        lines.append("{")
        lines.append("    for (uint32_t i = 0; i < (x & 7u); i++)")
        lines.append("        x = x * %du + (x >> %d);" % (2654435761 % (97 + h), 3 + h))
        lines.append("    return x ^ %du;" % (cu * 31 + h))
        lines.append("}")
    for h in range(4):
        lines.append("static inline __attribute__((always_inline)) uint32_t step%d_%d(uint32_t x)" % (cu, h))
        lines.append("{")
        lines.append("    return mix%d_%d(x + %du) + mix%d_%d(x);" % (cu, h, h + 1, cu, (h + 1) % 4))
        lines.append("}")
    for f in range(funcs):
        lines.append("__attribute__((noinline)) uint32_t f%d_%d(uint32_t x)" % (cu, f))
        lines.append("{")
        lines.append("    x = step%d_%d(x);" % (cu, f % 4))
        lines.append("    if (x & 1u)")
        lines.append("        x = step%d_%d(x ^ %du);" % (cu, (f + 1) % 4, f))
        lines.append("    sink_%d = x;" % cu)
        lines.append("    return x;")
        lines.append("}")
    lines.append("volatile uint32_t sink_%d;" % cu)
    return "\n".join(lines) + "\n"


def build(cu):
    c = os.path.join(out, "cu%03d.c" % cu)
    o = c[:-2] + ".o"
    if not os.path.exists(o):
        open(c, "w").write(source(cu))
        subprocess.run(["arm-none-eabi-gcc"] + CFLAGS + ["-c", c, "-o", o], check=True)
    return o


with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
    objs = list(pool.map(build, range(cus)))
main = os.path.join(out, "main.c")
open(main, "w").write("#include <stdint.h>\n%s\nvoid Reset_Handler(void) { uint32_t x = 1;\n%s\n for(;;){} }\n" % (
    "\n".join("uint32_t f%d_0(uint32_t);" % cu for cu in range(cus)),
    "\n".join("    x = f%d_0(x);" % cu for cu in range(cus))))
ld = os.path.join(out, "big.ld")
open(ld, "w").write("MEMORY { FLASH (rx) : ORIGIN = 0x08000000, LENGTH = 64M\n RAM (rwx) : ORIGIN = 0x20000000, "
                    "LENGTH = 1M }\nENTRY(Reset_Handler)\nSECTIONS { .text : { *(.text .text.*) } > FLASH\n"
                    " .bss : { *(.bss .bss.* COMMON) } > RAM }\n")
elf = os.path.join(out, "big.elf")
subprocess.run(["arm-none-eabi-gcc"] + CFLAGS + ["-nostdlib", "-T", ld, main] + objs + ["-o", elf], check=True)
print(elf)
