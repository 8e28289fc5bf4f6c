"""Where :class:`~restmapper.generation.GenerationCache` was defined before it moved to :mod:`restmapper.generation`.

Kept only so that objects pickled by an earlier release (a :class:`~restmapper.generation.GenerationCacheStats`
snapshot names its class by the module it was defined in, ``restmapper.store._generation``) still load: pickle
imports that module by name. It re-exports the same objects, so what loads is the current class. Nothing in the
package imports it; import the names from :mod:`restmapper.generation` (or :mod:`restmapper.store`).
"""

from __future__ import annotations

from restmapper.generation import GenerationCache, GenerationCacheStats, crd_fingerprint, object_uid_generation

__all__ = ["GenerationCache", "GenerationCacheStats", "crd_fingerprint", "object_uid_generation"]
