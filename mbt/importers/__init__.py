"""Other tools' formats read as models: `dmn.py` (DMN decision tables), `graphwalker.py` (GraphWalker JSON),
`graphml.py` (yEd GraphML in GraphWalker's label syntax), and their readers `jsonread.py` and `xmlread.py`. The
registry that finds them by suffix is mbt.importer, on the ground floor; observed runs are read by mbt.runs.
"""
