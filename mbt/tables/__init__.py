"""Decision tables: typed values, the DMN evaluator, the domain partition and exact analysis, DMN XML import."""
