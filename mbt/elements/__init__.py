"""Coverage elements: the countable things a test can cover, per model kind and criterion."""
