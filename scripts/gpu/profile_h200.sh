#!/usr/bin/env bash
# The H200 run of `argus profile` (issue 6). Documented command, through the device tool:
#     run(command="bash scripts/gpu/profile_h200.sh", timeout_s=600)
# or on any NVIDIA host with torch, triton and ncu:  OUT=/tmp/h200 bash scripts/gpu/profile_h200.sh
# It profiles a GEMM and an attention kernel (tests/profile/tasks/) with hardware counters, a
# do_bench cross-check and Proton in ONE run, then checks the numbers (tests/gpu/test_profile_gpu.py)
# and writes under $OUT: profile-h200.txt (console), profile-h200.json, roofline-h200.png and
# fixtures.tar.gz (raw ncu CSV, Proton hatchet, do_bench times for tests/profile/fixtures/).
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/argus-profile-h200}
mkdir -p "$OUT/raw"
export PYTHONUNBUFFERED=1 PYTHONPATH="$PWD" ARGUS_PROFILE_KEEP_RAW="$OUT/raw"
CMD=(python3 -m argus.agent.profile.cli tests/profile/tasks/gemm.py::matmul_kernel
     tests/profile/tasks/attention.py::attn_fwd_kernel --counters --do-bench-check --proton
     --timeout 400 --report "$OUT/roofline-h200.png" --json)
{
    echo "== $(date -u +%FT%TZ) host: $(hostname)"
    echo "== which ncu: $(which ncu || echo none)"; ls -d /usr/local/cuda*/bin 2>&1
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv 2>&1
    python3 -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__)'
    echo "== command: ${CMD[*]}"
} 2>&1 | tee "$OUT/profile-h200.txt"
"${CMD[@]}" > "$OUT/profile-h200.json" 2> >(tee -a "$OUT/profile-h200.txt" >&2)
echo "== exit status: $?" | tee -a "$OUT/profile-h200.txt"
python3 - "$OUT/profile-h200.json" <<'PY' 2>&1 | tee -a "$OUT/profile-h200.txt"
import json, sys
from rich.console import Console
from agent.profile.report import table
from agent.profile.result import ProfileResult
doc = json.load(open(sys.argv[1]))
results = [ProfileResult.from_json(d) for d in (doc if isinstance(doc, list) else [doc])]
Console(width=150).print(table(results))
for r in results:
    print(f"{r.task}: {r.lens_text()}")
PY
echo "== checks: pytest tests/gpu/test_profile_gpu.py" | tee -a "$OUT/profile-h200.txt"
ARGUS_PROFILE_H200_JSON="$OUT/profile-h200.json" python3 -m pytest -q -p no:cacheprovider --noconftest \
    -m gpu -o addopts= tests/gpu/test_profile_gpu.py 2>&1 | tail -25 | tee -a "$OUT/profile-h200.txt"
python3 - "$OUT/raw" <<'PY'
# Raw tool output -> fixture files (tests/profile/fixtures/README.md says where each came from).
import json, pathlib, sys
raw = pathlib.Path(sys.argv[1])
for f in sorted(raw.glob("*.raw.json")):
    res, k = json.loads(f.read_text()), f.name.split(".")[0]
    c = res.get("counters") or {}
    if c.get("stdout"):
        (raw / f"ncu_{k}.csv").write_text(c["stdout"])
    if (res.get("proton") or {}).get("hatchet") is not None:
        (raw / f"proton_{k}.hatchet").write_text(json.dumps(res["proton"]["hatchet"], indent=1))
    if res.get("do_bench"):
        (raw / f"do_bench_{k}.json").write_text(json.dumps(res["do_bench"]["times_ms"]))
PY
tar -czf "$OUT/fixtures.tar.gz" -C "$OUT" raw && rm -rf "$OUT/raw"
ls -la "$OUT"
