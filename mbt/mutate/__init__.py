"""Model mutation adequacy: per-kind mutation operators, the kill matrix, marginal value and the smallest equivalent set."""
