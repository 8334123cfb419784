"""A toy fifth model kind, `checklist`, built only from the registry's seams (tests/test_kind_plugin.py)."""
