#!/usr/bin/env python3
"""Build the sdist and wheel, run ``twine check``, and check that they carry what users need.

Usage (from the repository root, with the ``dev`` extra installed, which brings ``build`` and ``twine``; the
isolated build environment needs the package index, as any ``pip install`` does)::

    python scripts/check_dist.py

Checked: LICENSE in both, ``py.typed`` and every file of the kit's data folder in both, every example, the docs and
the README in the sdist, and the ``restmapper`` console script and ``pytest11`` entry point in the wheel. The
data files, examples and docs are listed from the source tree, so the check stays true when files are added or
renamed. Exits 1 on a miss. ``.ci/run`` runs it.
"""

from __future__ import annotations

import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "src" / "restmapper" / "testing" / "data"


def _tree(folder: Path, pattern: str = "*") -> tuple[str, ...]:
    """Files under ``folder`` matching ``pattern``, as paths relative to the repository root."""
    return tuple(sorted(p.relative_to(ROOT).as_posix() for p in folder.rglob(pattern)
                        if p.is_file() and "__pycache__" not in p.parts))


def wheel_needs() -> tuple[str, ...]:
    """What the wheel must hold (suffixes of its member names)."""
    data = tuple(path.removeprefix("src/") for path in _tree(DATA))
    return ("dist-info/licenses/LICENSE", "restmapper/py.typed", "restmapper/testing/pytest_plugin.py", *data)


def sdist_needs() -> tuple[str, ...]:
    """What the sdist must hold (paths below its top folder)."""
    return ("LICENSE", "README.md", "CHANGELOG.md", "src/restmapper/py.typed", *_tree(DATA),
            *_tree(ROOT / "examples", "*.py"), *_tree(ROOT / "docs"))


ENTRY_POINTS = ("restmapper = restmapper.cli:main", "[pytest11]", "restmapper = restmapper.testing.pytest_plugin")


def main() -> int:
    with tempfile.TemporaryDirectory() as out:
        subprocess.run([sys.executable, "-m", "build", "--outdir", out, str(ROOT)], check=True)
        built = sorted(Path(out).iterdir())
        subprocess.run([sys.executable, "-m", "twine", "check", "--strict", *map(str, built)], check=True)
        wheel = next(p for p in built if p.suffix == ".whl")
        sdist = next(p for p in built if p.name.endswith(".tar.gz"))
        with zipfile.ZipFile(wheel) as z:
            names = z.namelist()
            entry = z.read(next(n for n in names if n.endswith("entry_points.txt"))).decode()
        with tarfile.open(sdist) as t:
            members = [m.split("/", 1)[1] for m in t.getnames() if "/" in m]
        missing = [f"wheel: {n}" for n in wheel_needs() if not any(x.endswith(n) for x in names)]
        missing += [f"sdist: {n}" for n in sdist_needs() if n not in members]
        missing += [f"entry point: {e}" for e in ENTRY_POINTS if e not in entry]
    for line in missing:
        print(f"missing {line}", file=sys.stderr)
    print("dist ok" if not missing else "dist incomplete")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
