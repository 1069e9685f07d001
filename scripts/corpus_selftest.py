#!/usr/bin/env python3
"""Run the self-test of every file in tests/corpus_own and check its exit status.

    TRITON_INTERPRET=1 python scripts/corpus_selftest.py [-j 2] [-v] [FILE ...]

A correct file (no `# expect:` marker) must exit 0, a mutant must exit nonzero. Files that use
`tl.make_block_ptr` are "static only" under Triton >= 3.9 (block pointers were removed) and are
skipped unless --all is given. Set PYTHON to choose the interpreter that runs the files.
"""
import argparse
import concurrent.futures as cf
import os
import subprocess
import sys
import time

# mutants whose bug the CPU interpreter cannot make visible (see tests/corpus_own/MANIFEST.md)
LATENT = {"moe_fused_v4.py"}
CORPUS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "corpus_own")


def files():
    return sorted(f for f in os.listdir(CORPUS) if f.endswith(".py") and not f.startswith("_"))


def kind(name):
    with open(os.path.join(CORPUS, name)) as f:
        src = f.read()
    return ("mutant" if "# expect:" in src else "correct"), ("tl.make_block_ptr" in src)


def run(name, python, timeout):
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    env.setdefault("TRITON_INTERPRET", "1")
    t = time.time()
    try:
        p = subprocess.run([python, name], cwd=CORPUS, env=env, capture_output=True, text=True, timeout=timeout)
        rc, out = p.returncode, p.stdout + p.stderr
    except subprocess.TimeoutExpired:
        rc, out = "timeout", ""
    return name, rc, out, time.time() - t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="*")
    ap.add_argument("-j", "--jobs", type=int, default=2)
    ap.add_argument("-v", "--verbose", action="store_true")
    ap.add_argument("--all", action="store_true", help="also run the block-pointer (static only) files")
    ap.add_argument("--timeout", type=int, default=600)
    args = ap.parse_args()
    python = os.environ.get("PYTHON", sys.executable)
    names = [os.path.basename(f) for f in args.files] or files()
    todo, skipped = [], []
    for n in names:
        k, static = kind(n)
        (skipped if static and not args.all else todo).append(n)
    bad = 0
    with cf.ThreadPoolExecutor(args.jobs) as ex:
        for name, rc, out, dt in ex.map(lambda n: run(n, python, args.timeout), todo):
            k, _ = kind(name)
            ok = (rc == 0) if k == "correct" else (rc not in (0, "timeout"))
            if name in LATENT and rc == 0:
                ok, k = True, "latent"
            bad += not ok
            lines = [ln for ln in out.splitlines() if ln.startswith("FAIL")] or out.strip().splitlines()[-1:]
            print(f"{'ok ' if ok else 'BAD'} {name:34s} {k:7s} rc={rc} {dt:5.1f}s  {(lines[0] if lines else '')[:110]}")
            if not ok and args.verbose:
                print(out[-3000:])
    for n in skipped:
        print(f"--  {n:34s} {kind(n)[0]:7s} skipped (static only: block pointers)")
    print(f"{len(todo) - bad} as expected, {bad} not, {len(skipped)} skipped")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
