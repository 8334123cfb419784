"""Static checks of models (`mbt check`): spans against source documents, graph structure, guards decided by z3."""
