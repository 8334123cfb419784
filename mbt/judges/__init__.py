"""Answer judges (issue 34, docs/judges.md): what the agent *says*, judged per criterion by a judge behind one
interface — rule assertions, the embedded judge (no network; decides only where it is sure) and an LLM judge on an
OpenAI-compatible server — plus the overall verdict of seed 001 and the judge's own calibration and sensitivity.

The modules import nothing from the rest of mbt but mbt.errors (and the cache folder's location), so any command can
use them.
"""
