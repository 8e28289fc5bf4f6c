"""kubectl's resolution of what a user types, over the mapper's answer engine: :meth:`KubectlResolution.resolve`,
:meth:`~KubectlResolution.resolve_all` and :meth:`~KubectlResolution.expand_category`.

A base of :class:`~restmapper.mapper.lazy.LazyRESTMapper` (its public methods are documented there too); kept
apart so each module stays readable. The rules (a real name beats a short name, the first group claiming a short
name wins, categories expand in priority order) are kubectl's ``mappingFor`` over client-go's shortcut expander.
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Callable, Collection

from restmapper._public import caller_stacklevel
from restmapper.cache import GroupEntry, Replays, replay_mark
from restmapper.errors import InvalidArgumentError, NoResourceMatchError, RestMapperError
from restmapper.mapper._args import not_a_category, require_resource_type, require_resource_types, require_str
from restmapper.mapper._engine import AnswerEngine, Question
from restmapper.mapper._groups import by_arg
from restmapper.mapper._memo import Remembered
from restmapper.mapper._typed import checked_reading
from restmapper.mapper.resolve import (
    PartialDiscoveryWarning,
    ResolvedMappings,
    ResolveResult,
    partial_message,
    preempted,
    resolve,
    unsure_reading_message,
)
from restmapper.mapper.shortcut import ShortNameConflictWarning, expand_category
from restmapper.mapper.static import StaticRESTMapper
from restmapper.model import GroupResource, GroupVersion, GroupVersionKind, RESTMapping

__all__ = ["KubectlResolution"]


class KubectlResolution(AnswerEngine):
    """kubectl's resolution of resource type arguments (``deploy``, ``deployments.v1.apps``, ``all``)."""

    def resolve(self, arg: str) -> RESTMapping:
        """Return the RESTMapping ``kubectl get ARG`` would use for one resource type.

        Args:
            arg: a plural, singular, kind (any case), short name, ``resource.group``, ``resource.version.group``
                or a group prefix form (``hpa.autoscal``); no subresources, no commas, no categories (see
                :meth:`resolve_all`).

        Returns:
            The RESTMapping. A short name claimed by several groups resolves as kubectl does and emits a
            :class:`~restmapper.mapper.ShortNameConflictWarning` naming the other candidates.

        Raises:
            NoResourceMatchError: nothing matches any reading, also after revalidating (the subclass
                ``ResourceTypeNotFoundError`` carries kubectl's message).
            AmbiguousResourceError, AmbiguousKindError: several groups match at the same priority.
            GroupDiscoveryError, DiscoveryError: as :meth:`kind_for`.
            InvalidArgumentError: ``arg`` is empty or has spaces (kubectl's message: ``the server doesn't have a
                resource type "deploy "``); a comma list or a category that is no resource type (``all``:
                use :meth:`resolve_all`); ``TYPE/NAME`` or a subresource (``deployments/scale``: pass the type);
                a manifest's ``apiVersion kind`` (``apps/v1 Deployment``: use
                ``rest_mapping(GroupVersionKind.from_api_version_and_kind("apps/v1", "Deployment"))``). A
                ``ValueError``, never a no-match: a wrong argument never reads as "not installed".

        Every reading of a dotted argument is tried against the cache before a miss triggers revalidation.
        Mirrors kubectl's ``mappingFor`` over client-go's shortcut-expanding discovery REST mapper.
        """
        if arg.__class__ is not str:
            require_str("resolve", arg, "a resource type argument")  # before the memo: a list is unhashable
        key = ("resolve", arg, False)
        memo = self._fresh_memo(key)
        if memo is not None and memo.error is None and not (memo.value.warnings or memo.value.failed):
            return memo.value.mappings[0]  # type: ignore[no-any-return]  # :attr:`ResolveResult.mapping`
        if (memo is None and "." in arg and arg.__class__ is str and arg.isascii() and arg.isprintable()
                and " " not in arg and "/" not in arg and "," not in arg):
            # A first-time dotted argument of the usual form (the test of :meth:`_resolve_unmemoized`, which
            # checks nothing more for it), straight from the indexes when they can tell with no warning to emit.
            direct = self._direct_dotted(key, arg)
            if direct is not None:
                for text in direct.warnings:  # as :meth:`_resolve_unmemoized` warns (a direct answer has no failures)
                    warnings.warn(text, ShortNameConflictWarning, stacklevel=2)
                return direct.mappings[0]  # :attr:`ResolveResult.mapping`
            tried = True
        else:
            tried = False
        try:
            # The memo was just read: once is enough (and the direct path was tried when ``tried``).
            result = self._resolve_unmemoized(key, arg, False, memo, tried)
        except NoResourceMatchError:
            if self._is_category(arg):
                raise not_a_category(arg) from None
            raise
        return result.mappings[0]  # :attr:`ResolveResult.mapping`

    def _quiet_resolve(self, arg: str) -> RESTMapping:
        """:meth:`resolve` without warnings (a check of a suggestion, not the user's question)."""
        require_resource_type("resolve", arg)
        return self._answer(("resolve", arg, False), self._resolve_question(arg, False)).mapping

    def _is_category(self, arg: str) -> bool:
        try:
            return bool(self.expand_category(arg))
        except RestMapperError:
            return False

    def resolve_all(self, args: str) -> ResolvedMappings:
        """Resolve what ``kubectl get ARGS`` names: comma lists and categories (``all,deploy``) included.

        Returns:
            The mappings in kubectl's order, de-duplicated by GroupVersionKind, as a list. When a group that may
            hold members of a category could not be read, the list holds what could be found, its ``failed``
            maps each unreadable group version to its cause (``partial`` is True), and a
            :class:`~restmapper.mapper.PartialDiscoveryWarning` naming them is emitted (kubectl prints the same
            as a warning and goes on).

        Raises:
            As :meth:`resolve`, for the first argument that fails (commas and categories are fine here); an
            empty or space-padded element (``svc,,cm``, ``svc, cm``) refuses the whole list before any request.
        """
        require_str("resolve_all", args, "resource type arguments")
        out: dict[GroupVersionKind, RESTMapping] = {}
        failed: dict[GroupVersion, BaseException] = {}
        since = replay_mark()  # failures recorded before this call are replays (they say so)
        elements = args.split(",")
        try:
            require_resource_types("resolve_all", args)  # kubectl refuses svc,,cm as a whole, before any request
        except InvalidArgumentError as exc:
            arg, refused = args, exc
            if "," in args and all(e and e.split() == [e] for e in elements):
                for element in elements:  # the element refused, its suggestion checked (svc,deploy/web)
                    try:
                        require_resource_type("resolve_all", element)
                    except InvalidArgumentError as element_exc:
                        arg, refused = element, element_exc
                        break
            raise checked_reading(refused, arg, "resolve_all", self._quiet_resolve,
                                  served=self.cache.served_versions) from None
        for arg in elements:
            key = ("resolve", arg, True)
            memo = self._fresh_memo(key)
            if memo is not None and memo.error is None and not (memo.value.warnings or memo.value.failed):
                result: ResolveResult = memo.value
            else:
                result = self._resolve_unmemoized(key, key[1], True, memo)
            failed.update(result.failed)
            for mapping in result.mappings:
                out.setdefault(mapping.group_version_kind, mapping)
        return ResolvedMappings(out.values(), Replays(self._clock, since).failures(failed) if failed else failed)

    def _resolve(self, arg: str, *, expand_categories: bool) -> ResolveResult:
        """The answer of :meth:`resolve` (:meth:`resolve_all` for one argument with ``expand_categories``)."""
        key = ("resolve", arg, expand_categories)
        memo = self._fresh_memo(key)
        if memo is not None and memo.error is None and not (memo.value.warnings or memo.value.failed):
            return memo.value  # type: ignore[no-any-return]
        return self._resolve_unmemoized(key, arg, expand_categories, memo)

    def _resolve_unmemoized(self, key: tuple[str, str, bool], arg: str, expand_categories: bool,
                            memo: Remembered | None, tried: bool = False) -> ResolveResult:
        """``resolve(arg)`` (``resolve_all`` with ``expand_categories``) after the memo read for ``key`` gave
        ``memo`` (None, an error or an answer with warnings to emit): called straight from those two methods, so
        warnings point at their caller. ``tried``: the direct path was tried already (and could not tell)."""
        # One test in C for the usual argument (printable ASCII without spaces, slashes or commas: nothing the
        # checks below refuse); anything else is checked and worded by them.
        if not (arg.__class__ is str and arg and arg.isascii() and arg.isprintable() and " " not in arg
                and "/" not in arg and "," not in arg):
            require_str("resolve", arg, "a resource type argument")
            method = "resolve_all" if expand_categories else "resolve"
            try:
                require_resource_type(method, arg)
            except InvalidArgumentError as exc:  # apps/v1 svc: told an argument that resolves, checked with the server
                raise checked_reading(exc, arg, method, self._quiet_resolve,
                                      served=self.cache.served_versions) from None
        # Nothing remembered: straight from the indexes when they can tell (the memo was just read).
        if memo is not None or expand_categories or tried:
            result = None
        elif "." in arg:
            result = self._direct_dotted(key, arg)
        else:
            result = self._direct_resolve(key, arg)
        since = 0  # a direct answer has no failures: only the full path's are judged
        if result is None:
            since = replay_mark()
            result = self._answer(key, self._resolve_question(arg, expand_categories))
        level = caller_stacklevel() if result.warnings or result.failed else 0  # the user's line, via any layer
        for text in result.warnings:
            warnings.warn(text, ShortNameConflictWarning, stacklevel=level)
        if result.failed:  # failures answered again from the retry backoff say so, as in raised errors
            failed = Replays(self._clock, since).failures(result.failed)
            if result.category is not None:
                warnings.warn(partial_message(f'category "{arg}"', failed), PartialDiscoveryWarning,
                              stacklevel=level)
            else:  # told on every call while the versions stay unreadable: a text without ages, shown once
                text = unsure_reading_message(arg, result.mappings[0], result.failed)
                warnings.warn(PartialDiscoveryWarning(text, failed=failed), stacklevel=level)
        return result

    def _resolve_question(self, arg: str, expand_categories: bool) -> Callable[[], Question[ResolveResult]]:
        lowered = arg.lower()

        def weaker(r: ResolveResult, m: StaticRESTMapper, entries: tuple[GroupEntry, ...]) -> Collection[str] | None:
            """The groups a stronger reading than the one that gave ``r`` searched (rule 5 of
            :mod:`~restmapper.mapper._certainty`)."""
            return preempted(arg, m, {e.name for e in entries}, category=r.category is not None)

        def compute(m: StaticRESTMapper) -> ResolveResult:
            return resolve(arg, m, expand_categories=expand_categories)

        def core_first(m: StaticRESTMapper) -> ResolveResult | None:
            core = m.group("")
            # A real core name wins by priority; a core *short* name may lose to another group's real name,
            # and a category may span groups.
            if expand_categories or "." in arg or core is None or not core.real_name(lowered):
                return None
            return compute(m)

        return lambda: Question(
            lambda: f'resource type "{arg}"', lambda io: self._groups_for_arg(arg, io), compute, core_first,
            answered_at=lambda r: None if r.category is not None else r.mapping.group_version_kind.group_version,
            weaker=weaker,
            # A category answer is a list that may be partial; a single answer reached by a short name or kind
            # reading while a group version that could hold a real name is unreadable is given with those
            # failures attached (and warned), as kubectl answers and warns (DESIGN 8.4: a broken aggregated API
            # does not break lookups that name other groups' resources).
            partial=lambda r, failed: dataclasses.replace(r, failed=failed),
            pick=by_arg(arg, expand_categories=expand_categories))

    def expand_category(self, name: str) -> list[GroupResource]:
        """Return the resources in a category (``all``), deduplicated, in priority order (kubectl's expander).

        Raises:
            GroupDiscoveryError: discovery failed, or a group that may hold members could not be read (its
                ``partial`` holds the members found; :meth:`resolve_all` returns them with a warning instead).
        """
        if name.__class__ is not str:
            require_str("expand_category", name, "a category name")
        key = ("expand_category", name)
        memo = self._fresh_memo(key)
        if memo is not None and memo.error is None:
            return list(memo.value)
        tried = memo is None
        if tried:  # a first-time question: straight from the indexes when they can tell
            found = self._direct_category(key, name)
            if found is not None:
                return list(found)
        return list(self._answer(key, lambda: Question(
            lambda: f'category "{name}"', lambda io: None, lambda m: tuple(expand_category(name, m)),
            pick=lambda index, deps: index.with_category(name, deps)),
            None if tried else lambda: self._direct_category(key, name)))
