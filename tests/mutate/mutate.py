#!/usr/bin/env python3
# `make mutate`: applies each mutation of tests/mutate/mutations.tsv (a small
# change to one security-critical line), rebuilds cloister, runs the
# narrowest suite that must catch it, and prints a table. A mutation is
# caught when that suite reports at least one FAIL. Exit 1 if any survives.
#   tests/mutate/mutate.py [NAME-SUBSTRING]
import os, shutil, subprocess, sys, tempfile, time

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TABLE = os.path.join(TOP, "tests", "mutate", "mutations.tsv")
USER = os.environ.get("CLOISTER_TEST_USER", "cloister-test")

def rows():
    with open(TABLE) as f:
        for n, line in enumerate(f, 1):
            if not line.strip() or line.startswith("#"):
                continue
            name, path, old, new, suite, only = line.rstrip("\n").split("\t")
            yield n, name, path, old.encode().decode("unicode_escape"), \
                new.encode().decode("unicode_escape"), suite, only

def run(cmd, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw)

def main():
    pick = sys.argv[1] if len(sys.argv) > 1 else ""
    work = tempfile.mkdtemp(prefix="cloister-mutate.")
    os.chmod(work, 0o755)   # the user: rows run the mutant too
    # One copy of the tracked tree with its build: each mutant then only
    # recompiles the file it changes (mtimes are kept by copy2).
    files = run(["git", "-C", TOP, "ls-files"]).stdout.split()
    src = os.path.join(work, "src-tree")
    for f in files:
        os.makedirs(os.path.dirname(os.path.join(src, f)), exist_ok=True)
        shutil.copy2(os.path.join(TOP, f), os.path.join(src, f))
    r = run(["make", "-s", "-C", src, "-j2", "all"])
    if r.returncode:
        print(r.stdout[-2000:]); sys.exit("mutate: the unmutated tree does not build")
    results, survived = [], 0
    for n, name, path, old, new, suite, only in rows():
        if pick and pick not in name:
            continue
        t0 = time.monotonic()
        p = os.path.join(src, path)
        text = open(p).read()
        if text.count(old) != 1:
            results.append((name, "BAD ROW", "%s: line %d's text found %d times" % (path, n, text.count(old)), 0))
            print("%-28s %-8s        %s" % results[-1][:3], flush=True)
            survived += 1
            continue
        open(p, "w").write(text.replace(old, new))
        try:
            b = run(["make", "-s", "-C", src, "-j2", "all"])
            if b.returncode:
                verdict, why = "caught", "does not build"
            else:
                # T_WAIT 30: a surviving behaviour shows within seconds;
                # a caught one need not wait out the suite's long deadlines.
                # SRC_TOP: suites that test sources, not the binary (the
                # Smithers provider's JavaScript), take them from the mutant.
                env = dict(os.environ, CLOISTER=os.path.join(src, "build", "cloister"), T_WAIT="30", T_LIMIT="90",
                           T_ONLY=only, HELPERS=os.path.join(TOP, "build", "tests"), TOP=TOP, SRC_TOP=src)
                cmd = ["bash", os.path.join(TOP, suite)]
                if suite.startswith("user:"):
                    # The unprivileged user runs the suite on the mutant.
                    cmd = ["runuser", "-u", USER, "--", "env"] + \
                        ["%s=%s" % (k, env[k]) for k in ("CLOISTER", "T_ONLY", "T_WAIT", "T_LIMIT", "HELPERS", "TOP", "SRC_TOP", "PATH")] + \
                        ["bash", os.path.join(TOP, suite[5:])]
                t = run(cmd, env=env, cwd="/tmp", timeout=1800)
                fails = [l for l in t.stdout.splitlines() if l.startswith("FAIL ")]
                passes = [l for l in t.stdout.splitlines() if l.startswith("PASS ")]
                if fails:
                    verdict, why = "caught", fails[0][5:90]
                else:
                    verdict, why = "SURVIVED", "%d passed" % len(passes)
                    survived += 1
        finally:
            open(p, "w").write(text)
        results.append((name, verdict, why, time.monotonic() - t0))
        print("%-28s %-8s %5.0fs  %s" % (name, verdict, results[-1][3], why), flush=True)
    shutil.rmtree(work, ignore_errors=True)
    print("\n| mutation | result | first failing test |\n|---|---|---|")
    for name, verdict, why, _ in results:
        print("| %s | %s | %s |" % (name, verdict, why.replace("|", "/")))
    print("\nmutate: %d of %d caught" % (len(results) - survived, len(results)))
    sys.exit(1 if survived else 0)

if __name__ == "__main__":
    main()
