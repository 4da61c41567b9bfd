#!/usr/bin/env python3
"""Issue 7: firmware/cmprof_build_id.ld puts the GNU build-id note in flash and names it
cmprof_build_id_note, with no edit of the user's linker script: with the toolchain's default
script and with a script of one's own (MEMORY and SECTIONS, no build-id line). The note at that
symbol must be the one readelf reports. Prints one ok/FAIL line per check."""
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import harness  # noqa: E402
from harness import check  # noqa: E402

OUT = os.path.join(ROOT, "build", "build-id")
APP = r"""
#include "cmprof.h"
volatile const void *note;
void Reset_Handler(void) { note = cmprof_build_id_note; for (;;) {} }
"""
OWN_SCRIPT = """
MEMORY { FLASH (rx) : ORIGIN = 0x08000000, LENGTH = 512K  RAM (rwx) : ORIGIN = 0x20000000, LENGTH = 64K }
ENTRY(Reset_Handler)
SECTIONS
{
    .text : { *(.text .text.*) *(.rodata .rodata.*) } > FLASH
    .data : { *(.data .data.*) } > RAM AT > FLASH
    .bss (NOLOAD) : { *(.bss .bss.* COMMON) } > RAM
}
"""


def note_at_symbol(elf):
    """(id from readelf -n, id read from the bytes at cmprof_build_id_note, whether it is in flash)."""
    nm = subprocess.run(["arm-none-eabi-nm", elf], capture_output=True, text=True).stdout
    m = re.search(r"^([0-9a-f]+) \w cmprof_build_id_note$", nm, re.M)
    want = re.search(r"Build ID: ([0-9a-f]+)", subprocess.run(["arm-none-eabi-readelf", "-n", elf],
                                                               capture_output=True, text=True).stdout)
    if not m or not want:
        return None, None, False
    addr = int(m.group(1), 16)
    bin_path = elf + ".bin"
    subprocess.run(["arm-none-eabi-objcopy", "-O", "binary", "-j", ".text", "-j", ".note.gnu.build-id", elf,
                    bin_path], check=True)
    image = open(bin_path, "rb").read()
    off = addr - 0x08000000
    namesz, descsz = int.from_bytes(image[off:off + 4], "little"), int.from_bytes(image[off + 4:off + 8], "little")
    desc = off + 12 + ((namesz + 3) & ~3)
    return want.group(1), image[desc:desc + descsz].hex(), 0x08000000 <= addr < 0x08080000


def main():
    os.makedirs(OUT, exist_ok=True)
    src = os.path.join(OUT, "app.c")
    open(src, "w").write(APP)
    own = os.path.join(OUT, "own.ld")
    open(own, "w").write(OWN_SCRIPT)
    base = ["arm-none-eabi-gcc", "-mcpu=cortex-m4", "-mthumb", "-Os", "-nostdlib", "-I" + os.path.join(ROOT, "firmware"),
            src, "-Wl,-e,Reset_Handler", "-Wl,--build-id", "-L" + os.path.join(ROOT, "firmware")]
    snippet = ["-Wl,-T,cmprof_build_id.ld"]  # before the user's own script, as the snippet says
    for name, link in (("the default linker script", ["-Wl,-Ttext=0x08000000"] + snippet),
                       ("a script of one's own", snippet + ["-Wl,-T," + own])):
        elf = os.path.join(OUT, "app-%d.elf" % len(link))
        r = subprocess.run(base + link + ["-o", elf], capture_output=True, text=True)
        want, got, in_flash = note_at_symbol(elf) if r.returncode == 0 else (None, None, False)
        check("build-id snippet with %s: cmprof_build_id_note is the ELF's build-id, in flash" % name,
              r.returncode == 0 and want and want == got and in_flash,
              r.stderr.strip()[:200] or "readelf %s, at the symbol %s" % (want, got))
    return 1 if harness.failed else 0


if __name__ == "__main__":
    sys.exit(main())
