"""Executable semantics of the model kinds: how an FSM steps, a policy decides, a table evaluates, a monitor judges."""
