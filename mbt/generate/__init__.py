"""Test generation: solver-found witnesses for uncovered elements, optimal suites, pytest and golden-case skeletons."""
