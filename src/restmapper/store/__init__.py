from restmapper.store._generation import GenerationCache, GenerationCacheStats, crd_fingerprint, object_uid_generation

__all__ = ["GenerationCache", "GenerationCacheStats", "crd_fingerprint", "object_uid_generation"]
