"""Optional Prometheus metrics (``pip install 'kube-restmapper[prometheus]'``; from a checkout
``pip install '.[prometheus]'``); nothing is registered unless asked.

Three pieces, all built on ``prometheus_client``:

- :class:`RequestMetrics` counts and times every request a transport sends, under client-go's metric names (what
  controller-runtime exposes, so existing dashboards work): ``rest_client_requests_total`` (labels ``code``,
  ``method``, ``host``, ``path``) and ``rest_client_request_duration_seconds`` (labels ``verb``, ``host``,
  ``path``). ``path`` is a template (``/apis/{group}/{version}``), never a raw URL, so label cardinality stays
  bounded. Wrap a transport with :meth:`RequestMetrics.instrument`.
- :class:`StatsCollector` exposes the counters our objects already keep (the discovery cache's ``stats``, a
  watcher's ``stats``, a generation cache's or object cache's ``stats``: any object whose ``stats`` is a dataclass
  of counters) as ``restmapper_<name>_<counter>_total``, read at scrape time.

Example::

    from prometheus_client import REGISTRY
    metrics = RequestMetrics(registry=REGISTRY)
    mapper = LazyRESTMapper(DiscoveryClient(metrics.instrument(RequestsTransport.from_kubeconfig())))
    REGISTRY.register(StatsCollector({"discovery": mapper, "watcher": watcher}))
"""

from __future__ import annotations

import dataclasses
import re
import time
import weakref
from collections.abc import Callable, Iterator, Mapping
from typing import Any
from urllib.parse import urlsplit

from restmapper._optional import missing
from restmapper.transport import Response, StreamResponse, Transport, scrub_with

try:
    from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
    from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
    from prometheus_client.registry import Collector
except ModuleNotFoundError as exc:  # an optional extra
    raise missing("restmapper.metrics", "prometheus_client", "prometheus", exc) from exc

__all__ = ["RequestMetrics", "StatsCollector", "WorkqueueMetrics", "path_template"]

# client-go's default request latency buckets (seconds): k8s.io/client-go/tools/metrics, as registered by
# controller-runtime's pkg/metrics/client_go_adapter.
_BUCKETS = (0.005, 0.025, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 60.0)

# client-go's work-queue duration buckets as controller-runtime and component-base register them: 10 ns to 1000 s,
# each ten times the one before (ExponentialBuckets(10e-9, 10, 12)).
_QUEUE_BUCKETS = tuple(1e-8 * 10.0 ** k for k in range(12))

_TEMPLATES = (
    (re.compile(r"^/api/[^/]+/namespaces/[^/]+/[^/]+(/.*)?$"),
     "/api/{version}/namespaces/{namespace}/{resource}"),
    (re.compile(r"^/api/[^/]+/[^/]+(/.*)?$"), "/api/{version}/{resource}"),
    (re.compile(r"^/api/[^/]+$"), "/api/{version}"),
    (re.compile(r"^/apis/[^/]+/[^/]+/namespaces/[^/]+/[^/]+(/.*)?$"),
     "/apis/{group}/{version}/namespaces/{namespace}/{resource}"),
    (re.compile(r"^/apis/[^/]+/[^/]+/[^/]+(/.*)?$"), "/apis/{group}/{version}/{resource}"),
    (re.compile(r"^/apis/[^/]+/[^/]+$"), "/apis/{group}/{version}"),
    (re.compile(r"^/apis/[^/]+$"), "/apis/{group}"),
)
_FIXED = frozenset({"/api", "/apis", "/version", "/openapi/v2", "/openapi/v3", "/healthz", "/livez", "/readyz"})


def path_template(path: str) -> str:
    """Return the label value for a request path: a template with the variable parts named.

    Args:
        path: a request path (a query string is ignored).

    Returns:
        ``/api``, ``/apis``, ``/version`` as they are; ``/apis/{group}/{version}``, ``/api/{version}``,
        ``.../{resource}`` (an object name or subresource after it is dropped), ``.../namespaces/{namespace}/
        {resource}``; anything else ``other``.
    """
    bare = path.split("?", 1)[0].rstrip("/") or "/"
    if bare in _FIXED:
        return bare
    for pattern, template in _TEMPLATES:
        if pattern.match(bare):
            return template
    return "other"


class RequestMetrics:
    """Request counters and latency histograms under client-go's names (see the module doc).

    Args:
        registry: where to register the two metrics; None registers them nowhere (call :meth:`register` later).
        namespace: an optional metric-name prefix (``<namespace>_rest_client_...``); default none, as client-go.

    Attributes:
        requests: the ``rest_client_requests_total`` Counter.
        duration: the ``rest_client_request_duration_seconds`` Histogram.
    """

    def __init__(self, registry: CollectorRegistry | None = None, *, namespace: str = "") -> None:
        self.requests = Counter("rest_client_requests_total",
                                "Number of HTTP requests, partitioned by status code, method, host and path template.",
                                ["code", "method", "host", "path"], namespace=namespace, registry=None)
        self.duration = Histogram("rest_client_request_duration_seconds",
                                  "Request latency in seconds, by verb, host and path template.",
                                  ["verb", "host", "path"], namespace=namespace, buckets=_BUCKETS, registry=None)
        if registry is not None:
            self.register(registry)

    def register(self, registry: CollectorRegistry) -> None:
        """Register both metrics on ``registry``.

        Raises:
            ValueError: they (or metrics of the same names) are already registered there.
        """
        registry.register(self.requests)
        registry.register(self.duration)

    def observe(self, method: str, host: str, path: str, code: str, seconds: float) -> None:
        """Record one request: ``code`` is the status (``"200"``) or ``"<error>"`` when no answer came, as client-go."""
        template = path_template(path)
        self.requests.labels(code=code, method=method, host=host, path=template).inc()
        self.duration.labels(verb=method, host=host, path=template).observe(seconds)

    def instrument(self, transport: Transport) -> Transport:
        """Return ``transport`` wrapped so every request it sends is recorded (same interface, same errors)."""
        return _InstrumentedTransport(transport, self)


class _InstrumentedTransport:
    """A transport recording each request in a :class:`RequestMetrics`."""

    def __init__(self, inner: Transport, metrics: RequestMetrics, clock: Callable[[], float] = time.perf_counter):
        self._inner = inner
        self._metrics = metrics
        self._clock = clock
        self.base_url: str = str(getattr(inner, "base_url", ""))
        self.identity: str = str(getattr(inner, "identity", ""))
        self._host = urlsplit(self.base_url).netloc or self.base_url

    def get(self, path: str, headers: Mapping[str, str] | None = None, *,
            params: Mapping[str, str] | None = None, timeout: float | None = None) -> Response:
        start = self._clock()
        code = "<error>"
        try:
            response = self._inner.get(path, headers, params=params, timeout=timeout)
            code = str(response.status)
            return response
        finally:
            self._metrics.observe("GET", self._host, path, code, self._clock() - start)

    def stream(self, path: str, headers: Mapping[str, str] | None = None, *,
               params: Mapping[str, str] | None = None, timeout: float | None = None) -> StreamResponse:
        start = self._clock()
        code = "<error>"
        try:
            stream = self._inner.stream(path, headers, params=params, timeout=timeout)
            code = str(stream.status)
            return stream
        finally:  # the time to the response headers, as client-go measures a watch
            self._metrics.observe("WATCH" if (params or {}).get("watch") else "GET", self._host, path, code,
                                  self._clock() - start)

    def scrub(self, text: str) -> str:
        return scrub_with(self._inner, text)

    def close(self) -> None:
        self._inner.close()

    def __repr__(self) -> str:
        return f"Instrumented({self._inner!r})"


_GAUGES = frozenset({"objects", "backlog", "bytes", "last_event_age_seconds"})  # InformerStats levels, not counts


class StatsCollector(Collector):
    """Expose objects' ``stats`` counters to Prometheus, read at each scrape.

    Args:
        sources: metric-name part -> an object with a ``stats`` attribute or property returning a dataclass of
            counters (``LazyRESTMapper``, ``DiscoveryCache``, ``Watcher``, ``GenerationCache``), or an object
            cache (``restmapper.store.ObjectCache``: its informers' stats, labelled ``kind``). Integer fields
            become ``restmapper_<name>_<field>_total``; the informer's levels are gauges, without the suffix:
            ``objects``, ``backlog``, ``bytes`` and ``last_event_age_seconds`` (a float, absent while None), e.g.
            ``restmapper_informer_bytes{kind="Pod"}`` for the source name ``informer``; mapping fields (the
            discovery cache's ``fetches`` by endpoint) get a ``key`` label.

    Raises:
        TypeError: a source has neither a dataclass ``stats`` nor ``informers``, or a name is not a metric-name part.
    """

    def __init__(self, sources: Mapping[str, Any]) -> None:
        for name, source in sources.items():
            if not re.fullmatch(r"[a-z_][a-z0-9_]*", name):
                raise TypeError(f"source name {name!r} must be a metric-name part ([a-z_][a-z0-9_]*)")
            if not (dataclasses.is_dataclass(getattr(source, "stats", None)) or hasattr(source, "informers")):
                raise TypeError(f"source {name!r} ({type(source).__name__}) has no dataclass 'stats' or 'informers'")
        self._sources = dict(sources)

    def collect(self) -> Iterator[Metric]:
        families: dict[str, Any] = {}  # name -> CounterMetricFamily | GaugeMetricFamily
        for name, source in self._sources.items():
            if dataclasses.is_dataclass(getattr(source, "stats", None)):
                self._add(families, name, source.stats, [], [])
            else:
                for info in source.informers():
                    self._add(families, name, info.informer.stats, ["kind"], [str(info.kind)])
        yield from families.values()

    @staticmethod
    def _add(families: dict[str, Any], name: str, stats: Any, labels: list[str], values: list[str]) -> None:
        for f in dataclasses.fields(stats):
            value = getattr(stats, f.name)
            metric = f"restmapper_{name}_{f.name}"
            doc = f"{type(stats).__name__}.{f.name}"
            if _is_sample(f.name, value):
                if metric not in families:
                    kind = GaugeMetricFamily if f.name in _GAUGES else CounterMetricFamily
                    families[metric] = kind(metric, doc, labels=labels)
                families[metric].add_metric(values, value)
            elif isinstance(value, Mapping):
                if metric not in families:
                    families[metric] = CounterMetricFamily(metric, doc + " by key", labels=[*labels, "key"])
                for key, count in sorted(value.items()):
                    families[metric].add_metric([*values, str(key)], count)

    def describe(self) -> Iterator[Metric]:
        return iter(())


def _is_sample(field: str, value: object) -> bool:
    """Whether a stats field's ``value`` is one number to export: an int (never a bool), or a float of a gauge
    (:data:`_GAUGES`; an unset gauge is None and exports nothing)."""
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and field in _GAUGES)


class WorkqueueMetrics:
    """Work-queue metrics under client-go's names (what controller-runtime exposes), labelled ``name``; pass it as
    the ``metrics=`` of named queues (an unnamed queue reports nothing, as client-go).

    ``workqueue_depth`` (items needing processing, gauge), ``workqueue_adds_total`` (counter),
    ``workqueue_queue_duration_seconds`` (from an item needing processing to a worker getting it, histogram),
    ``workqueue_work_duration_seconds`` (from get to done, histogram), ``workqueue_retries_total`` (delayed and
    rate-limited adds, counter), ``workqueue_unfinished_work_seconds`` (seconds of work in progress, summed over the
    items being processed: large values mean stuck workers) and ``workqueue_longest_running_processor_seconds``
    (the longest of them). The last two are read when scraped, where client-go refreshes them every 500 ms.

    Args:
        registry: where to register the seven metrics; None registers them nowhere (call :meth:`register` later).
        namespace: an optional metric-name prefix; default none, as client-go.

    Example::

        metrics = WorkqueueMetrics(registry=REGISTRY)
        queue = RateLimitingQueue("widgets", metrics=metrics)
    """

    def __init__(self, registry: CollectorRegistry | None = None, *, namespace: str = "") -> None:
        def histogram(name: str, doc: str) -> Histogram:
            return Histogram(name, doc, ["name"], namespace=namespace, buckets=_QUEUE_BUCKETS, registry=None)

        self.depth = Gauge("workqueue_depth", "Current depth of workqueue", ["name"], namespace=namespace,
                           registry=None)
        self.adds = Counter("workqueue_adds_total", "Total number of adds handled by workqueue", ["name"],
                            namespace=namespace, registry=None)
        self.queue_duration = histogram("workqueue_queue_duration_seconds",
                                        "How long in seconds an item stays in workqueue before being requested")
        self.work_duration = histogram("workqueue_work_duration_seconds",
                                       "How long in seconds processing an item from workqueue takes")
        self.unfinished_work = Gauge(
            "workqueue_unfinished_work_seconds",
            "How many seconds of work has been done that is in progress and hasn't been observed by work_duration. "
            "Large values indicate stuck threads.", ["name"], namespace=namespace, registry=None)
        self.longest_running = Gauge(
            "workqueue_longest_running_processor_seconds",
            "How many seconds has the longest running processor for workqueue been running.", ["name"],
            namespace=namespace, registry=None)
        self.retries = Counter("workqueue_retries_total", "Total number of retries handled by workqueue", ["name"],
                               namespace=namespace, registry=None)
        if registry is not None:
            self.register(registry)

    def register(self, registry: CollectorRegistry) -> None:
        """Register the seven metrics on ``registry``.

        Raises:
            ValueError: they (or metrics of the same names) are already registered there.
        """
        for metric in (self.depth, self.adds, self.queue_duration, self.work_duration, self.unfinished_work,
                       self.longest_running, self.retries):
            registry.register(metric)

    def queue_metrics(self, name: str, in_flight: Callable[[], tuple[float, float]]) -> _QueueMetrics:
        """Return the sink of queue ``name`` (called by the queue). ``in_flight`` is held weakly when it is a bound
        method, so a discarded queue reports 0 rather than being kept alive by its gauges."""
        read: Callable[[], Callable[[], tuple[float, float]] | None]
        read = weakref.WeakMethod(in_flight) if hasattr(in_flight, "__self__") else (
            lambda: in_flight)

        def in_flight_now() -> tuple[float, float]:
            current = read()
            return current() if current is not None else (0.0, 0.0)

        self.unfinished_work.labels(name=name).set_function(lambda: in_flight_now()[0])
        self.longest_running.labels(name=name).set_function(lambda: in_flight_now()[1])
        return _QueueMetrics(self, name)


class _QueueMetrics:
    """One queue's children of :class:`WorkqueueMetrics` (labels resolved once)."""

    def __init__(self, metrics: WorkqueueMetrics, name: str) -> None:
        self._depth = metrics.depth.labels(name=name)
        self._adds = metrics.adds.labels(name=name)
        self._queue_duration = metrics.queue_duration.labels(name=name)
        self._work_duration = metrics.work_duration.labels(name=name)
        self._retries = metrics.retries.labels(name=name)

    def added(self) -> None:
        self._adds.inc()
        self._depth.inc()

    def got(self, queued_seconds: float) -> None:
        self._depth.dec()
        self._queue_duration.observe(queued_seconds)

    def done(self, work_seconds: float) -> None:
        self._work_duration.observe(work_seconds)

    def retried(self) -> None:
        self._retries.inc()
