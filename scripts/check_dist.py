#!/usr/bin/env python3
"""Build the sdist and wheel, run ``twine check``, and check that they carry what users need.

Usage (from the repository root, with ``build`` and ``twine`` installed; needs the package index for the isolated
build environment, so CI does not run it)::

    python scripts/check_dist.py

Checked: LICENSE in both, ``py.typed`` and the kit's data files in both, the examples and ``docs/design.md`` in
the sdist, and the ``restmapper`` console script and ``pytest11`` entry point in the wheel. Exits 1 on a miss.
"""

from __future__ import annotations

import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

WHEEL_NEEDS = ("dist-info/licenses/LICENSE", "restmapper/py.typed", "restmapper/testing/data/kube-profile.txt",
               "restmapper/testing/data/embedded-crds.txt", "restmapper/testing/pytest_plugin.py")
SDIST_NEEDS = ("LICENSE", "src/restmapper/py.typed", "src/restmapper/testing/data/kube-profile.txt",
               "examples/kopf_operator.py", "examples/dynamic_drop_in.py", "docs/design.md", "README.md")
ENTRY_POINTS = ("restmapper = restmapper.cli:main", "[pytest11]", "restmapper = restmapper.testing.pytest_plugin")


def main() -> int:
    with tempfile.TemporaryDirectory() as out:
        subprocess.run([sys.executable, "-m", "build", "--outdir", out], check=True)
        built = sorted(Path(out).iterdir())
        subprocess.run([sys.executable, "-m", "twine", "check", "--strict", *map(str, built)], check=True)
        wheel = next(p for p in built if p.suffix == ".whl")
        sdist = next(p for p in built if p.name.endswith(".tar.gz"))
        with zipfile.ZipFile(wheel) as z:
            names = z.namelist()
            entry = z.read(next(n for n in names if n.endswith("entry_points.txt"))).decode()
        with tarfile.open(sdist) as t:
            members = [m.split("/", 1)[1] for m in t.getnames() if "/" in m]
        missing = [f"wheel: {n}" for n in WHEEL_NEEDS if not any(x.endswith(n) for x in names)]
        missing += [f"sdist: {n}" for n in SDIST_NEEDS if n not in members]
        missing += [f"entry point: {e}" for e in ENTRY_POINTS if e not in entry]
    for line in missing:
        print(f"missing {line}", file=sys.stderr)
    print("dist ok" if not missing else "dist incomplete")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
