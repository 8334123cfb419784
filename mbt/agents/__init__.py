"""The live agent (issue 35, docs/agents.md): `mbt eval --agent SPEC` drives an agent through one of four adapters
(an OpenAI-compatible chat endpoint, any HTTP JSON endpoint, a Python callable, a command speaking JSON lines) and
records each case's session as a transcript the run readers read; `mbt serve` serves mbt's reference machine of a
model as such an agent, faults injectable."""
