"""When ``resources.get`` of the drop-in may answer while some group versions in scope are unreadable (DESIGN 5.10).

Upstream's ``get`` raises ``ResourceNotUniqueError`` when more than one resource matches; it does not pick by
discovery rank across groups. So an unreadable group version of *another* group in scope could hold a second
match, and a single answer would be confidently wrong: :func:`check_get` refuses it with
:class:`~restmapper.errors.GroupDiscoveryError`. Within the answer's own group the drop-in answers the preferred
version, so there only a failure ranking above the answer refuses it. A ``ResourceList`` is judged as its
resource (its version is the version objects are listed at); only the generic ``v1 List`` is exempt.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from restmapper.errors import GroupDiscoveryError
from restmapper.model import GroupVersion

__all__ = ["check_get"]


def check_get(result: Any, failures: Mapping[GroupVersion, BaseException], asked: Callable[[], str],
              check_rank: Callable[[Any], None]) -> None:
    """Refuse ``result`` as the one answer of a ``get`` when an unreadable group version could change it.

    Args:
        result: the one ``Resource``/``ResourceList`` found.
        failures: the unreadable group versions in scope of the question (that could hold a match).
        asked: gives the question, for the error (called only when one is raised).
        check_rank: raises :class:`GroupDiscoveryError` when an unreadable group version ranks above its argument.

    Raises:
        GroupDiscoveryError: a failure in another group than ``result``'s (it could make the answer not unique;
            the message ends with how to pin the question to ``result``'s group), or one in ``result``'s group
            ranking above it.
    """
    group = result.group or ""
    others = {gv: err for gv, err in failures.items() if gv.group != group}
    if others:
        version = str(GroupVersion(group, result.api_version))
        raise GroupDiscoveryError(next(iter(others)).group, others, asked=asked(), hint=(
            f"to ask one group, which these failures do not affect, pass api_version= or group= "
            f"(e.g. api_version={version!r} or group={group!r}, where it was found)"))
    check_rank(result)
