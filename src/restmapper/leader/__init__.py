"""Lease leader election with client-go's ``leaderelection`` semantics: :class:`LeaderElector` (a thread) and
:class:`AsyncLeaderElector` (asyncio), over the mapper's transport.

See :class:`LeaderElector` for the semantics and what the "no two leaders" guarantee rests on.
"""

from __future__ import annotations

from restmapper.leader._lock import LEASE_KIND, LeaderElectionRecord
from restmapper.leader.aio import AsyncLeaderElector
from restmapper.leader.elector import LeaderElector, default_identity

__all__ = ["LEASE_KIND", "AsyncLeaderElector", "LeaderElectionRecord", "LeaderElector", "default_identity"]
