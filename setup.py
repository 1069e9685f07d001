"""Maps the repository's folders onto the installed import names (metadata is in pyproject.toml).

`analyzers/`, `agent/` and `knowledge/` are installed as `argus.analyzers`, `argus.agent` and
`argus.knowledge`, so nothing generic lands in a user's site-packages; `argus_lsp` keeps its own
(distinctive) name. Subpackages are found at build time, so a new folder needs no edit here.
"""

import warnings

from setuptools import find_packages, setup
from setuptools.warnings import InformationOnly

# An editable install of this layout (argus.* mapped onto the repository's folders) is served by
# setuptools' import hook, which then tells every install that a folder named like the package in
# the working directory may shadow it. Here that folder is `argus/` itself, the same code (its
# __init__ maps the sibling folders when run from the checkout), so the notice warns of nothing;
# newer pips show it on every `pip install -e .` (CI's install step). Only that notice is hidden.
warnings.filterwarnings("ignore", message=r"Editable installation\.", category=InformationOnly)

NAMESPACED = ("analyzers", "agent", "knowledge")


def _layout() -> tuple[list[str], dict[str, str]]:
    packages = ["argus", *find_packages(include=["argus_lsp", "argus_lsp.*"])]
    package_dir = {"argus": "argus"}
    for top in NAMESPACED:
        packages.append(f"argus.{top}")
        packages.extend(f"argus.{top}.{sub}" for sub in find_packages(where=top))
        package_dir[f"argus.{top}"] = top
    # Two folders of plain files without __init__.py: the expert kernels (Triton sources, also read
    # as files) and the technique cards (markdown). Listed, so they install as package contents.
    packages += ["argus.knowledge.kernels", "argus.knowledge.cards"]
    return packages, package_dir


if __name__ == "__main__":  # setuptools runs this file as __main__; tests import _layout()
    PACKAGES, PACKAGE_DIR = _layout()
    setup(packages=PACKAGES, package_dir=PACKAGE_DIR, package_data={"argus.knowledge.cards": ["*.md"]})
