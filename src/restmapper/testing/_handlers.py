"""The routes of the fake cluster: ``/version``, discovery endpoints and resource endpoints.

Resource endpoints (objects, watches) are answered by :mod:`restmapper.testing._rest`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from restmapper.model import GroupVersion
from restmapper.testing import _documents as docs
from restmapper.testing import _openapi as openapi
from restmapper.testing._router import Reply, Request, Router
from restmapper.testing.profile import ResourceSpec

if TYPE_CHECKING:
    from restmapper.testing.cluster import FakeCluster

_ANY_METHOD: tuple[str, ...] = ()


def install(cluster: FakeCluster, router: Router) -> None:
    """Register every route of ``cluster`` on ``router`` (discovery first, then resource endpoints)."""
    h = _Handlers(cluster)
    router.add("/version", h.version)
    router.add("/api", h.api)
    router.add("/apis", h.apis)
    router.add("/api/{version}", h.core_version)
    router.add("/apis/{group}", h.group)
    router.add("/apis/{group}/{version}", h.group_version)
    router.add("/openapi/v2", h.openapi_v2)
    router.add("/openapi/v3", h.openapi_v3)
    router.add("/openapi/v3/{rest*}", h.openapi_v3_gv)
    router.add("/api/{version}/{rest*}", h.core_resource, _ANY_METHOD)
    router.add("/apis/{group}/{version}/{rest*}", h.group_resource, _ANY_METHOD)


class _Handlers:
    def __init__(self, cluster: FakeCluster) -> None:
        self.c = cluster
        self.i = cluster.internals

    # --- /version --------------------------------------------------------------------------------------------

    def version(self, _req: Request, _p: dict[str, str]) -> Reply:
        major, minor, git_version = self.i.version_info()
        return docs.json_reply(200, {
            "major": major,
            "minor": minor,
            "gitVersion": git_version,
            "gitCommit": "0000000000000000000000000000000000000000",
            "gitTreeState": "clean",
            "buildDate": "2026-01-01T00:00:00Z",
            "goVersion": "go1.25.0",
            "compiler": "gc",
            "platform": "linux/amd64",
        })

    # --- /api and /apis ----------------------------------------------------------------------------------------

    def _server_address(self, req: Request) -> str:
        return req.header("Host") or _host_port(self.c.base_url)

    def api(self, req: Request, _p: dict[str, str]) -> Reply:
        c = self.c
        with self.i.lock:
            choice = docs.negotiate(req.header("Accept"), _aggregated_versions(c))
            if choice is None:
                return docs.not_acceptable()
            core = self.i.core_versions()
            if choice:
                body = self._cached("api", choice, lambda: docs.aggregated_list(
                    [("", core)] if core else [], self._stale(), choice))
                return self._aggregated_reply(req, choice, body)
            return docs.json_reply(200, docs.api_versions([v for v, _ in core], self._server_address(req)))

    def apis(self, req: Request, _p: dict[str, str]) -> Reply:
        c = self.c
        with self.i.lock:
            choice = docs.negotiate(req.header("Accept"), _aggregated_versions(c))
            if choice is None:
                return docs.not_acceptable()
            if choice:
                body = self._cached("apis", choice, lambda: docs.aggregated_list(
                    [(g.name, [(v, _discovery_order(r, crd)) for v, r, crd in g.versions])
                     for g in self.i.served_groups()], self._stale(), choice))
                return self._aggregated_reply(req, choice, body)
            body = self._cached("apis", "legacy", lambda: docs.api_group_list(
                [(g.name, [v for v, _, _ in g.versions]) for g in self.i.served_groups(legacy=True)]))
            return 200, {"Content-Type": docs.JSON}, body

    def _cached(self, doc: str, flavour: str, build: Any) -> bytes:
        body: bytes = self.i.cached(("body", doc, flavour), lambda: docs.dumps(build()))
        return body

    def _stale(self) -> set[GroupVersion]:
        return {GroupVersion(g.name, v) for g in self.i.served_groups() for v, _, _ in g.versions
                if self.i.is_stale(GroupVersion(g.name, v))} | {
            GroupVersion("", v) for v, _ in self.i.core_versions() if self.i.is_stale(GroupVersion("", v))}

    def _aggregated_reply(self, req: Request, version: str, body: bytes) -> Reply:
        headers = docs.aggregated_headers(version, body)
        inm = req.header("If-None-Match")
        if inm and headers["ETag"] in [t.strip() for t in inm.split(",")]:
            del headers["Content-Type"]
            return 304, headers, b""
        return 200, headers, body

    # --- /apis/<group> and group versions ------------------------------------------------------------------------

    def group(self, req: Request, p: dict[str, str]) -> Reply:
        if docs.negotiate(req.header("Accept"), ()) is None:
            return docs.not_acceptable()
        with self.i.lock:
            for g in self.i.served_groups():
                if g.name == p["group"]:
                    return docs.json_reply(200, docs.api_group(g.name, [v for v, _, _ in g.versions]))
        return docs.not_found()

    def _lookup(self, gv: GroupVersion) -> tuple[Reply | None, tuple[ResourceSpec, ...]]:
        """Return (error reply, ()) or (None, resources) for a group version's own path (lock held)."""
        if self.i.is_gone(gv):
            return docs.not_found(), ()
        if gv.group == "":
            versions = dict(self.i.core_versions())
            resources = versions.get(gv.version)
        else:
            resources = None
            for g in self.i.served_groups():
                if g.name == gv.group:
                    resources = next((r for v, r, _ in g.versions if v == gv.version), None)
        if resources is None:
            return docs.not_found(), ()
        if self.i.is_stale(gv):
            return docs.text_reply(503, "the server is currently unable to handle the request"), ()
        return None, resources

    def _resource_list(self, req: Request, gv: GroupVersion) -> Reply:
        if docs.negotiate(req.header("Accept"), ()) is None:
            return docs.not_acceptable()
        with self.i.lock:
            error, resources = self._lookup(gv)
            if error is not None:
                return error
            return docs.json_reply(200, docs.resource_list(gv, resources))

    def core_version(self, req: Request, p: dict[str, str]) -> Reply:
        return self._resource_list(req, GroupVersion("", p["version"]))

    def group_version(self, req: Request, p: dict[str, str]) -> Reply:
        return self._resource_list(req, GroupVersion(p["group"], p["version"]))

    # --- OpenAPI ---------------------------------------------------------------------------------------------------

    def _openapi_documents(self) -> dict[str, bytes]:
        """Every served group version's OpenAPI v3 document, serialized (lock held; cached per revision)."""
        documents: dict[str, bytes] = self.i.cached(("openapi", "v3"), self._build_openapi_documents)
        return documents

    def _build_openapi_documents(self) -> dict[str, bytes]:
        out: dict[str, bytes] = {}
        for version, resources in self.i.core_versions():
            out[openapi.gv_path("", version)] = docs.dumps(openapi.gv_document("", version, resources, custom=False))
        for g in self.i.served_groups():
            for version, resources, custom in g.versions:
                schemas = _crd_schemas(self.i.crds(), g.name, version) if custom else None
                out[openapi.gv_path(g.name, version)] = docs.dumps(
                    openapi.gv_document(g.name, version, resources, custom=custom, schemas=schemas))
        return out

    def openapi_v3(self, req: Request, _p: dict[str, str]) -> Reply:
        with self.i.lock:
            return docs.json_reply(200, openapi.root_document(self._openapi_documents()))

    def openapi_v3_gv(self, req: Request, p: dict[str, str]) -> Reply:
        with self.i.lock:
            body = self._openapi_documents().get(p["rest"].strip("/"))
        if body is None:
            return docs.not_found()
        return 200, {"Content-Type": docs.JSON, "Etag": f'"{openapi.document_hash(body)}"'}, body

    def openapi_v2(self, req: Request, _p: dict[str, str]) -> Reply:
        if docs.negotiate(req.header("Accept"), ()) is None:
            return docs.not_acceptable()
        return docs.json_reply(200, openapi.swagger_document(self.c.git_version))

    # --- resource endpoints ---------------------------------------------------------------------------------------

    def core_resource(self, req: Request, p: dict[str, str]) -> Reply:
        return self._resource(req, GroupVersion("", p["version"]), p["rest"])

    def group_resource(self, req: Request, p: dict[str, str]) -> Reply:
        return self._resource(req, GroupVersion(p["group"], p["version"]), p["rest"])

    def _resource(self, req: Request, gv: GroupVersion, rest: str) -> Reply:
        from restmapper.testing._rest import handle_resource

        return handle_resource(self.c, req, gv, rest, self._lookup)


def _crd_schemas(crds: Mapping[str, dict[str, Any]], group: str, version: str) -> dict[str, dict[str, Any]]:
    """The ``openAPIV3Schema`` of each CRD kind served at ``group/version`` (lock held)."""
    out: dict[str, dict[str, Any]] = {}
    for crd in crds.values():
        if crd["spec"]["group"] != group:
            continue
        kind = (crd.get("status", {}).get("acceptedNames") or crd["spec"]["names"])["kind"]
        for v in crd["spec"]["versions"]:
            schema = (v.get("schema") or {}).get("openAPIV3Schema")
            if v["name"] == version and isinstance(schema, dict):
                out[kind] = schema
    return out


def _discovery_order(resources: tuple[ResourceSpec, ...], crd: bool) -> tuple[ResourceSpec, ...]:
    """The CRD discovery controller sorts a CRD group version's resources by name; built-in ones keep theirs."""
    return tuple(sorted(resources, key=lambda r: r.name)) if crd else resources


def _aggregated_versions(cluster: FakeCluster) -> tuple[str, ...]:
    return {"aggregated": ("v2", "v2beta1"), "aggregated-v2beta1": ("v2beta1",)}.get(cluster.mode, ())


def _host_port(base_url: str) -> str:
    """Return ``host:port`` of ``base_url`` (default ports filled in)."""
    from urllib.parse import urlsplit

    parts = urlsplit(base_url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return f"{parts.hostname}:{port}"
