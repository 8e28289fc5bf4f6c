"""An apiVersion followed by a type is told an argument that resolves.

``restmapper resolve apps/v1 svc`` suggested ``svc.v1.apps``, which names nothing: ``svc`` is a core short name.
The suggestion for ``GV TYPE`` and ``GV/TYPE`` is checked against the server: ``TYPE.VERSION.GROUP`` when it
resolves there; otherwise what does resolve (``TYPE.GROUP``, or ``TYPE`` alone), saying that the group version
serves no such type; or, when nothing serves it, that the server has no such type. Each suggestion is run, over a
matrix of apiVersions (served, unserved, unknown) and types (plurals, kinds and short names of several groups).
"""

from __future__ import annotations

import io
import json
import re
import warnings

import pytest

from restmapper import LazyRESTMapper, RESTMapping, ShortNameConflictWarning
from restmapper.cli import run
from restmapper.discovery import DiscoveryClient
from restmapper.errors import InvalidArgumentError, is_no_match
from restmapper.mapper._args import require_resource_type
from restmapper.testing import FakeCluster, InProcessTransport

CLUSTER = FakeCluster.embedded()
API_VERSIONS = ["v1", "apps/v1", "batch/v1", "autoscaling/v1", "autoscaling/v2", "cert-manager.io/v1", "apps/v1beta1",
                "argoproj.io/v1alpha1", "nope.example.com/v1"]
TYPES = ["pods", "Pod", "po", "svc", "services", "deploy", "Deployment", "deployments", "cronjobs", "CronJob", "cj",
         "hpa", "HorizontalPodAutoscaler", "Certificate", "certs", "apps", "Application", "Event", "ev",
         "nosuchtype"]
SHAPES = ["{gv} {name}", "{gv}/{name}"]
WRONG = "serves no resource type"


def _mapper() -> LazyRESTMapper:
    return LazyRESTMapper(DiscoveryClient(InProcessTransport(CLUSTER)))


def _resolve(mapper: LazyRESTMapper, arg: str) -> RESTMapping:
    """``mapper.resolve(arg)``; a suggested short name may be one two groups share (``ev``: core events and
    events.k8s.io's), which kubectl answers with a warning: that warning is expected, no other."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        mapping = mapper.resolve(arg)
    assert all(issubclass(w.category, ShortNameConflictWarning) and arg in str(w.message) for w in caught), \
        [str(w.message) for w in caught]
    return mapping


def _check(mapper: LazyRESTMapper, text: str, gv: str, name: str, suggestion: str | None) -> None:
    """``suggestion`` (None: the message gave none) resolves, and at ``gv`` unless the message says ``gv`` lacks it."""
    group, _, version = gv.rpartition("/")
    if suggestion is None:
        assert f'the server doesn\'t have a resource type "{name}"' in text, text
        with pytest.raises(Exception) as info:
            mapper.resolve(name)
        assert is_no_match(info.value) or isinstance(info.value, InvalidArgumentError), text
        return
    got = _resolve(mapper, suggestion).group_version_kind
    if WRONG in text:
        assert f'{gv} {WRONG} "{name}"' in text, text
        assert suggestion != f"{name}.{version}.{group}", text
    else:
        assert (got.group, got.version) == (group, version), (text, got)


@pytest.mark.parametrize("shape", SHAPES)
def test_every_suggestion_for_an_api_version_and_a_type_resolves(shape: str) -> None:
    mapper = _mapper()
    checked = 0
    for gv in API_VERSIONS:
        for name in TYPES:
            arg = shape.format(gv=gv, name=name)
            for method in ("resolve", "resolve_all"):
                with pytest.raises(InvalidArgumentError) as info:
                    getattr(mapper, method)(arg)
                text = str(info.value)
                assert not is_no_match(info.value)
                found = re.findall(r'resolve(?:_all)?\("([^"]+)"\)', text)
                _check(mapper, text, gv, name, found[0] if found else None)
                checked += 1
    assert checked == len(API_VERSIONS) * len(TYPES) * 2


@pytest.mark.parametrize("shape", ["{gv} {name}", "{gv}/{name}", "two words"])
def test_every_cli_suggestion_for_an_api_version_and_a_type_resolves(shape: str) -> None:
    mapper = _mapper()
    for gv in API_VERSIONS:
        for name in TYPES:
            if shape == "two words" and "/" not in gv:
                continue  # kubectl reads "v1 Pod" typed as two words as TYPE NAME, and so does the CLI
            argv = [gv, name] if shape == "two words" else [shape.format(gv=gv, name=name)]
            out, err = io.StringIO(), io.StringIO()
            assert run(["resolve", "--embedded", *argv], stdout=out, stderr=err) == 1
            [line] = err.getvalue().splitlines()
            assert line.startswith("error: restmapper resolve takes a resource type"), line
            assert "()" not in line and "rest_mapping" not in line, line
            found = re.findall(r"restmapper resolve (\S+)$", line)
            _check(mapper, line, gv, name, found[0] if found else None)


@pytest.mark.parametrize(("argv", "says"), [
    (["apps/v1", "svc"], 'apps/v1 serves no resource type "svc"; "svc" alone is services (v1): restmapper resolve svc'),
    (["apps/v1/svc"], 'apps/v1 serves no resource type "svc"; "svc" alone is services (v1): restmapper resolve svc'),
    (["v1 Deployment"], 'v1 serves no resource type "Deployment"; "Deployment" alone is deployments.apps '
                           "(apps/v1): restmapper resolve Deployment"),
    (["apps/v1beta1", "Deployment"], 'apps/v1beta1 serves no resource type "Deployment"; "Deployment.apps" is '
                                     "deployments.apps (apps/v1): restmapper resolve Deployment.apps"),
    (["apps/v1", "nosuchtype"], 'the server doesn\'t have a resource type "nosuchtype"'),
    (["apps/v1", "Deployment"], "restmapper resolve Deployment.v1.apps"),
])
def test_the_cli_says_what_the_api_version_lacks(argv: list[str], says: str) -> None:
    err = io.StringIO()
    assert run(["resolve", "--embedded", *argv], stdout=io.StringIO(), stderr=err) == 1
    assert err.getvalue().rstrip("\n").endswith(says), err.getvalue()


def test_a_suggestion_that_cannot_be_checked_keeps_the_plain_reading() -> None:
    """The server cannot be read: the type is not called missing, and the reading is given as before."""
    cluster = FakeCluster.embedded()
    cluster.inject("/api*", status=503, body="down")
    mapper = LazyRESTMapper(DiscoveryClient(InProcessTransport(cluster)))
    with pytest.raises(InvalidArgumentError) as info:
        mapper.resolve("apps/v1 svc")
    assert 'resolve("svc.v1.apps")' in str(info.value) and WRONG not in str(info.value), str(info.value)


# --- GROUP/VERSION alone and TYPE/NAME: every suggestion resolves too ------------------------------------------

GV_ALONE = [gv for gv in API_VERSIONS if "/" in gv] + [
    "deployment.apps/v1", "deployments.apps/v1", "deploy.apps/v1", "deployment.apps/v1beta1",
    "certificates.cert-manager.io/v1", "certificate.cert-manager.io/v2", "hpa.autoscaling/v2", "hpa.autoscaling/v1",
    "cronjobs.batch/v1", "applications.argoproj.io/v1alpha1", "nosuchtype.apps/v1", "nosuchtype.example.com/v1"]
TYPE_NAME = [f"{name}/{tail}" for name in TYPES for tail in ("web", "scale", "a/b/c")] + ["a/b/c/d", "/web"]
SUGGESTED = re.compile(r'(?:resolve(?:_all)?\("([^"]+)"\)|restmapper resolve (\S+))$')
MISSING = re.compile(r'the server doesn\'t have a resource type "([^"]+)"')


def _holds(mapper: LazyRESTMapper, arg: str, text: str) -> None:
    """The message ends with a suggestion that resolves (``KIND.VERSION.GROUP`` only for a served apiVersion), or
    names a type the server does not have (and it has not)."""
    found = SUGGESTED.search(text)
    if found is not None:
        suggestion = found.group(1) or found.group(2)
        if suggestion.startswith("KIND."):
            group, _, version = arg.rpartition("/")
            assert suggestion == f"KIND.{version}.{group}", text
            assert version in mapper.cache.served_versions(group), text
        else:
            _resolve(mapper, suggestion)  # raises if the suggestion names nothing
        return
    missing = MISSING.search(text)
    if missing is None:  # "/web": no type to suggest, and no claim
        assert arg.startswith("/") and "resolve" not in text.partition(" takes ")[2], text
        return
    with pytest.raises(Exception) as info:
        mapper.resolve(missing.group(1))
    assert is_no_match(info.value) or isinstance(info.value, InvalidArgumentError), text


@pytest.mark.parametrize("arg", GV_ALONE + TYPE_NAME)
def test_every_suggestion_for_an_api_version_alone_or_an_object_resolves(arg: str) -> None:
    mapper = _mapper()
    for method in ("resolve", "resolve_all"):
        with pytest.raises(InvalidArgumentError) as info:
            getattr(mapper, method)(arg)
        assert not is_no_match(info.value)
        _holds(mapper, arg, str(info.value))
    with pytest.raises(InvalidArgumentError) as info:  # an element of a list is checked too
        mapper.resolve_all(f"svc,{arg}")
    _holds(mapper, arg, str(info.value))
    out, err = io.StringIO(), io.StringIO()
    assert run(["resolve", "--embedded", arg], stdout=out, stderr=err) == 1
    [line] = err.getvalue().splitlines()
    assert line.startswith("error: restmapper resolve takes a resource type"), line
    assert "()" not in line and out.getvalue() == "", line
    _holds(mapper, arg, line)


@pytest.mark.parametrize(("arg", "says"), [
    ("deployment.apps/v1", '"deployment.apps" is deployments.apps (apps/v1), at apps/v1: '
                           "restmapper resolve deployment.v1.apps"),
    ("certificates.cert-manager.io/v1", "restmapper resolve certificates.v1.cert-manager.io"),
    ("deployment.apps/v1beta1", "pass the type alone, restmapper resolve deployment.apps"),
    ("apps/v1", "for a kind of apps/v1, pass restmapper resolve KIND.v1.apps"),
    ("cert-manager.io/v7", 'the server doesn\'t have a resource type "cert-manager.io", and its API group '
                           '"cert-manager.io" serves no version "v7" (it serves v1)'),
    ("nope.example.com/v1", 'the server doesn\'t have a resource type "nope.example.com" nor an API group '
                            '"nope.example.com"'),
    ("xyzzy/web", 'not a type, and the server doesn\'t have a resource type "xyzzy"'),
    ("a/b/c/d", 'not a type, and the server doesn\'t have a resource type "a"'),
    ("deploy/web", "pass the type alone, restmapper resolve deploy"),
])
def test_the_cli_checks_what_it_suggests_for_a_slash(arg: str, says: str) -> None:
    err = io.StringIO()
    assert run(["resolve", "--embedded", arg], stdout=io.StringIO(), stderr=err) == 1
    assert err.getvalue().rstrip("\n").endswith(says), err.getvalue()


def test_an_api_version_alone_that_cannot_be_checked_keeps_the_plain_reading() -> None:
    cluster = FakeCluster.embedded()
    cluster.inject("/api*", status=503, body="down")
    mapper = LazyRESTMapper(DiscoveryClient(InProcessTransport(cluster)))
    for arg, says in [("deployment.apps/v1", 'resolve("KIND.v1.deployment.apps")'),
                      ("xyzzy/web", 'resolve("xyzzy")')]:
        with pytest.raises(InvalidArgumentError) as info:
            mapper.resolve(arg)
        assert str(info.value).endswith(says) and "doesn't have" not in str(info.value), str(info.value)


def _cli_resolve(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run(["resolve", "--embedded", *argv], stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def _served() -> list[tuple[str, str, str, str]]:
    """(group, version, plural, Kind) of every resource the embedded cluster serves (preferred versions)."""
    out = io.StringIO()
    assert run(["api-resources", "--embedded", "-o", "json"], stdout=out, stderr=io.StringIO()) == 0
    return [(r["group"], r["apiVersion"].rpartition("/")[2], r["name"], r["kind"]) for r in json.loads(out.getvalue())]


@pytest.mark.parametrize("shape", ["{gv}/{name}", "{gv} {name}"])
def test_every_suggestion_for_an_api_version_and_type_resolves_to_that_type(shape: str) -> None:
    mapper = _mapper()
    served = _served()
    assert len(served) > 90
    for group, version, plural, kind in served:
        gv = f"{group}/{version}" if group else version
        for name in (plural, kind):
            arg = shape.format(gv=gv, name=name)
            if " " in arg and name == plural:
                continue  # a manifest's pair carries a kind
            for command in ("restmapper resolve", ""):
                with pytest.raises(InvalidArgumentError) as info:
                    require_resource_type("resolve", arg, command=command)
                text = str(info.value)
                if command:
                    assert "()" not in text and "rest_mapping" not in text, text
                    suggestion = text.rsplit("restmapper resolve ", 1)[1]
                else:
                    suggestion = re.findall(r'resolve\("([^"]+)"\)', text)[0]
                got = mapper.resolve(suggestion).group_version_kind
                assert (got.group, got.version, got.kind) == (group, version, kind), (arg, text)


@pytest.mark.parametrize(("argv", "suggestion"), [
    (["apps/v1/Deployment"], "Deployment.v1.apps"), (["apps/v1/deployments"], "deployments.v1.apps"),
    (["apps/v1 Deployment"], "Deployment.v1.apps"), (["apps/v1", "Deployment"], "Deployment.v1.apps"),
    (["v1/pods"], "pods"), (["v1 Pod"], "Pod"),
])
def test_cli_suggests_a_command_that_resolves_to_the_meant_type(argv: list[str], suggestion: str) -> None:
    code, out, err = _cli_resolve(*argv)
    assert code == 1 and f"restmapper resolve {suggestion}\n" in err, err
    assert "resolve_all" not in err and "rest_mapping" not in err and "()" not in err, err
    assert "Application" not in out
    code, out, err = _cli_resolve("--no-headers", suggestion)
    assert code == 0 and err == ""
    kind = "Deployment" if "apps" in suggestion else "Pod"
    assert out.split()[4 if "apps" in suggestion else 3] == kind, out
    code, out, _ = _cli_resolve("-o", "json", *argv)
    [row] = json.loads(out)
    assert row["reason"] == "InvalidArgument" and row["error"].endswith(f"restmapper resolve {suggestion}")


def test_an_api_version_alone_is_not_read_as_type_name() -> None:
    code, _, err = _cli_resolve("apps/v1")
    assert code == 1 and "restmapper resolve KIND.v1.apps" in err and "restmapper resolve apps\n" not in err, err


def test_library_messages_keep_naming_python_calls() -> None:
    with pytest.raises(InvalidArgumentError, match=r'resolve\("Deployment\.v1\.apps"\)') as info:
        _mapper().resolve("apps/v1/Deployment")
    assert not is_no_match(info.value)
    with pytest.raises(InvalidArgumentError, match=r'from_api_version_and_kind\("apps/v1", "Deployment"\)'):
        _mapper().resolve("apps/v1 Deployment")
