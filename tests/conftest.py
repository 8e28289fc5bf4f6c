"""Shared pytest fixtures.

Fixture data (real discovery documents and CRD manifests) lives outside the repository, in ``<repo>/../shared/
fixtures``; it is read from there, never copied in. In a fresh clone without that folder, tests that need it skip.
"""

from __future__ import annotations

from pathlib import Path

import pytest

FIXTURES_DIR = Path(__file__).resolve().parents[1].parent / "shared" / "fixtures"
"""``<repo>/../shared/fixtures``: CI always has it; a user's fresh clone usually does not."""


def require_fixtures() -> Path:
    """Return the fixtures folder, or skip the calling test with a reason when it is absent."""
    if not FIXTURES_DIR.is_dir():
        pytest.skip(f"fixture folder {FIXTURES_DIR} is absent (it sits next to the repository in CI; "
                    "see DESIGN.md section 3)")
    return FIXTURES_DIR


@pytest.fixture(scope="session")
def fixtures_dir() -> Path:
    """Path to ``<repo>/../shared/fixtures`` (``discovery/`` and ``crds/`` under it); skips when absent."""
    return require_fixtures()


@pytest.fixture(autouse=True)
def _not_in_a_pod(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests decide whether they run "in a pod": a CI runner that really is one must not change their answers."""
    for name in ("KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT", "POD_NAMESPACE"):
        monkeypatch.delenv(name, raising=False)
