"""What an installed package's `mbt.kinds` entry point names: importing the module registers the kind (mbt.kind
imports it on first use of the registry). tests/test_kind_plugin.py declares it so for the generated tests' process."""

from tests.plugin_kind.kind import install

install()
