"""mbt: model-based business-behaviour test coverage and generation."""

__version__ = "0.1.0"
