"""Shared by the Python test scripts: one 'ok'/'FAIL' line per check, and the failure count."""
failed = 0


def check(name, ok, detail=""):
    global failed
    failed += 0 if ok else 1
    print("%s %s%s" % ("ok  " if ok else "FAIL", name, (": " + detail) if detail else ""), flush=True)
    return ok
