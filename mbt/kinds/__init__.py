"""The built-in model kinds' assemblies: `fsm.py`, `table.py`, `policy.py`, `invariant.py` each build the kind's
KindSupport from its stage modules and register it with mbt.kind (the interface and the registry, on the ground
floor); `views.py` holds the views they share. This package is the roof: it imports every stage, and no stage
imports it (mbt.kind loads it by name).

`KindSupport` and `register` are re-exported here for plug-in kinds written against mbt 0.1 (`from mbt.kinds import
KindSupport, register`); new code imports them from mbt.kind.
"""

from mbt.kind import KindSupport, MutationSupport, View, register

__all__ = ["KindSupport", "MutationSupport", "View", "register"]
