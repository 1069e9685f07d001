"""Suite-wide setup. No GPU in CI: anything that imports Triton runs its interpreter, and that
must be decided before the first `import triton` of the process."""

import os

os.environ.setdefault("TRITON_INTERPRET", "1")
