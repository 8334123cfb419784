"""Coverage numbers (summable), per model and criterion, and the gate that decides whether CI fails."""
