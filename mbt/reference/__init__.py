"""The executable reference machine: an FSM model run on the `transitions` library, the oracle for replay and tests."""

from mbt.reference.machine import ReferenceMachine, ToolCallRecord

__all__ = ["ReferenceMachine", "ToolCallRecord"]
