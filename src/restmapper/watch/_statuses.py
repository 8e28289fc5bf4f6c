"""What a Status a server answered a list or watch with means for the :class:`~restmapper.watch.Reflector` loop."""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["retries_watch", "too_large_resource_version"]


def too_large_resource_version(status: object) -> bool:
    """True when a Status (a decoded JSON object) is kube-apiserver's "Too large resource version": a cause of
    reason ``ResourceVersionTooLarge``, or (servers before 1.17/1.18.6) a 504 whose message or cause says so; as
    client-go's ``isTooLargeResourceVersionError``."""
    if not isinstance(status, Mapping):
        return False
    details = status.get("details")
    causes = details.get("causes") if isinstance(details, Mapping) else None
    for cause in causes if isinstance(causes, list) else ():
        if isinstance(cause, Mapping) and (cause.get("reason") == "ResourceVersionTooLarge"
                                           or cause.get("message") == "Too large resource version"):
            return True
    message = status.get("message")
    return status.get("code") == 504 and isinstance(message, str) and "Too large resource version" in message


def retries_watch(status: object) -> bool:
    """True for a watch error retried as a watch (429, 5xx); any other ends the round (see the module docstring of
    :mod:`restmapper.watch.reflector`)."""
    return status == 429 or (isinstance(status, int) and status >= 500)
