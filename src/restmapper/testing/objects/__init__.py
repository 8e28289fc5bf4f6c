"""General object machinery of the testing kit, independent of HTTP and of :class:`FakeCluster`.

- :mod:`.selectors`: label selectors (equality and set-based) and field selectors;
- :mod:`.patch`: JSON patch (``jsonpatch``), JSON merge patch and strategic merge patch;
- :mod:`.apply`: server-side apply and ``managedFields``;
- :mod:`.writes`: create, update, patch, apply and delete with finalizers, as the generic registry.
"""
