"""mbt: model-based business-behaviour test coverage and generation."""

__version__ = "0.1.0"
# The name on PyPI (`mbt` is another project's); the command and the import name stay `mbt`.
DISTRIBUTION = "mbt-coverage"
HOMEPAGE = f"https://pypi.org/project/{DISTRIBUTION}/"
