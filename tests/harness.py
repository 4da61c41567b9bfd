"""Shared by the Python test scripts: one 'ok'/'FAIL' line per check, and the failure count."""
failed = 0


def check(name, ok, detail=""):
    global failed
    failed += 0 if ok else 1
    detail = " | ".join(ln for ln in str(detail).splitlines() if ln.strip())  # one line per check, always
    print("%s %s%s" % ("ok  " if ok else "FAIL", name, (": " + detail) if detail else ""), flush=True)
    return ok
