"""Safety value filters (ReGuard): the exact grid value, the filter plug-ins, the baselines.

- :mod:`~governor.filters.grid_value`: the privileged safety value by grid value iteration.
- :mod:`~governor.filters.exact_search`: ground truth by search over action sequences.
- :mod:`~governor.filters.safety_filter`: the monitor Q and the fallback argmax_a Q.
- :mod:`~governor.filters.myopic`: the one-step monitor and its stop fallback.
"""

from governor.filters.exact_search import certified_safe, monitor_agreement, safe_by_search
from governor.filters.grid_value import GridSpec, GridValue, load_or_compute, value_iteration
from governor.filters.myopic import OneStepMonitor, StopFallback
from governor.filters.safety_filter import SafetyFilter, ValueFallback, exact_filter, state_of

__all__ = [
    "GridSpec",
    "GridValue",
    "OneStepMonitor",
    "SafetyFilter",
    "StopFallback",
    "ValueFallback",
    "certified_safe",
    "exact_filter",
    "load_or_compute",
    "monitor_agreement",
    "safe_by_search",
    "state_of",
    "value_iteration",
]
