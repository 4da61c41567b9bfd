"""The peer of cmprof-top's halting samples: a loop that samples the PC through gdb's machine
interface (GDB/MI), as a script around gdb would: interrupt the core, read $pc, continue, as fast
as gdb answers. Needs gdb-multiarch (Debian's gdb has no ARM target).
    gdbmi_loop.py ELF HOST:PORT SECONDS  ->  samples, samples/s, share of the time halted"""
import subprocess
import sys
import time

GDB = "gdb-multiarch"


class MI:
    def __init__(self, elf):
        self.p = subprocess.Popen([GDB, "--nx", "--quiet", "--interpreter=mi2", elf], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, bufsize=1)

    def send(self, cmd):
        self.p.stdin.write(cmd + "\n")
        self.p.stdin.flush()

    def until(self, *prefixes):
        """Read records until one starts with a prefix; return it (an error record raises)."""
        while True:
            ln = self.p.stdout.readline()
            if not ln:
                raise RuntimeError("gdb-multiarch ended")
            if ln.startswith("^error"):
                raise RuntimeError("gdb-multiarch: " + ln.strip())
            if ln.startswith(prefixes):
                return ln

    def close(self):
        try:
            self.send("-gdb-exit")
            self.p.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            self.p.kill()
            self.p.wait()


def sample(elf, target, seconds):
    """(samples, samples per second, halted share) of an MI loop against a GDB server at target."""
    mi = MI(elf)
    try:
        mi.send("-gdb-set mi-async on")
        mi.until("^done")
        mi.send("-target-select remote " + target)
        mi.until("^connected")
        # the core runs from gdb's *running to the interrupt (an upper bound: the commands still
        # travel); it is halted the rest of the time, while gdb stops it, reads $pc and resumes it
        n, running = 0, 0.0
        t0 = time.perf_counter()
        while time.perf_counter() - t0 < seconds:
            mi.send("-exec-continue")
            mi.until("*running")
            ran = time.perf_counter()
            mi.send("-exec-interrupt")
            running += time.perf_counter() - ran
            mi.until("*stopped")
            mi.send("-data-evaluate-expression $pc")
            mi.until("^done")
            n += 1
        wall = time.perf_counter() - t0
        return n, n / wall, 1.0 - running / wall
    finally:
        mi.close()


if __name__ == "__main__":
    n, rate, share = sample(sys.argv[1], sys.argv[2], float(sys.argv[3]))
    print("%d samples, %.0f/s, halted %.0f %%" % (n, rate, 100 * share))
