"""Check a list of files of the real-world packages, each with its package's other modules at
hand (as `benchmarks/realworld.py` does), and write the results in its JSON format.

    python benchmarks/realworld_subset.py LIST OUT.json [--timeout S]

LIST holds one path per line under `benchmarks/.realworld/src/<package>-<version>/` (a path of
another folder is skipped). For re-checking the files a full run found findings in, when a full
run of a package is too long for the machine at hand; the figures of a full run still come
from `realworld.py`.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import realworld as rw  # noqa: E402
from argus.analyzers.project import SourceSet  # noqa: E402

from argus_lsp.project_files import FileReader, modules_for_paths  # noqa: E402

SRC = Path(__file__).resolve().parent / ".realworld" / "src"
FOLDERS = {
    "liger-kernel==0.8.5": "liger_kernel-0.8.5",
    "fla-core==0.6.0": "fla_core-0.6.0",
    "flag-gems==5.0.2": "flag_gems-5.0.2",
}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("list", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--timeout", type=float, default=20.0, help="CPU seconds per file")
    a = ap.parse_args(argv)
    wanted = [Path(line.strip()).resolve() for line in a.list.read_text().splitlines() if line.strip()]
    results: dict[str, dict] = {}
    for pin, folder in FOLDERS.items():
        root = (SRC / folder).resolve()
        mine = [p for p in wanted if root in p.parents]
        if not mine:
            continue
        files = rw.triton_files(root)
        project = SourceSet(
            modules_for_paths(files), FileReader(), lambda p, root=root: Path(p).relative_to(root).as_posix()
        )
        checked = []
        for path in mine:
            res = rw.check_one(path, path.relative_to(root).as_posix(), a.timeout, project)
            checked.append(asdict(res))
            if res.status != "ok":
                print(f"{res.path}: {res.status}: {res.error}", file=sys.stderr)
        results[pin] = {"files": checked}
    a.out.write_text(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
