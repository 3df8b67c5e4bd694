"""Every function a template can call: Go's builtins, the sprig functions api-syncagent users write and
api-syncagent's own (``sha3sum``, ``sha3short``, ``shortHash``).

Left out on purpose: sprig's ``env``/``expandenv`` (they would copy the agent's environment, and its
secrets, into objects), ``getHostByName`` (network), the random, time and UUID functions and the
certificate generators (a sync must render the same object every time), and the rest of sprig
(semver, dates, case conversions, deep merges), which compile as "function not defined".
"""

from __future__ import annotations

from syncflow.templating import builtins, defaults, encoding, lists, numbers, regex, strings
from syncflow.templating.func import Func

FUNCTIONS: dict[str, Func] = {
    **builtins.FUNCTIONS,
    **strings.FUNCTIONS,
    **lists.FUNCTIONS,
    **defaults.FUNCTIONS,
    **numbers.FUNCTIONS,
    **encoding.FUNCTIONS,
    **regex.FUNCTIONS,
}
LAZY = frozenset({"and", "or"})
"""Evaluate their arguments only as far as needed, as Go does; the executor runs them."""
NAMES = frozenset(FUNCTIONS) | LAZY
