"""The report models of seed 004's levels (mbt.measure.levels): what a coverage report holds about levels 0-4 and
the quality dimensions. Only pydantic here (and the probe report's, which imports no judge), so the coverage report's
model loads without the judges and the splitters that compute these (mbt.measure.alignment, .propositions,
.embedding)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

from mbt.measure.probes import ProbeReport

AlignVerdict = Literal["aligned", "not_aligned", "not_judged"]
Role = Literal["condition", "exception", "statement"]
PropositionStatus = Literal["covered", "uncovered", "not_judged"]
NEVER_SUMMED = ("Each figure is reported on its own denominator: levels, kinds and dimensions are never added into "
                "one number.")

# ------------------------------------------------------------------ level 0


class UnitDistance(BaseModel):
    unit: str
    document: str
    line: int
    text: str
    nearest: str | None  # the nearest golden's id (None: no golden with text)
    distance: float | None  # r_i, 1 - cosine
    within: bool  # r_i <= τ
    cluster: int


class Cluster(BaseModel):
    cluster: int
    units: list[str]
    goldens: list[str]  # the goldens whose nearest centroid is this cluster's (n_k = len)
    unit_share: float  # p_D(k)
    golden_share: float | None  # p_Q(k) (None: no golden)
    covered: int  # units within τ
    coverage: float  # Ĉ_{k,τ}


class EmbeddingCoverage(BaseModel):
    """Level 0: embedding neighbourhood coverage of the source units by the goldens."""

    embedding: str
    tau: float
    calibration: str  # how τ was chosen
    caveat: str
    units: list[UnitDistance] = []
    clusters: list[Cluster] = []
    blank: list[str] = []  # units beyond τ from every golden, farthest first
    goldens: int = 0  # goldens with text, embedded
    covered: int = 0
    total: int = 0


# ------------------------------------------------------------------ level 1


class Alignment(BaseModel):
    """One golden's decision on one unit: listed when aligned or not judged (not aligned is the silent default)."""

    golden: str  # the golden's id
    unit: str  # the unit's id
    verdict: AlignVerdict
    judge: str  # embedded (RULE_VERSION) or the LLM judge's name
    reason: str


class UnitAlignment(BaseModel):
    unit: str
    document: str
    line: int
    text: str
    status: Literal["covered", "uncovered", "not_judged"]
    goldens: list[str] = []  # aligned
    undecided: list[str] = []  # not judged


class GoldenAlignment(BaseModel):
    golden: str
    where: str
    units: list[str] = []
    undecided: list[str] = []
    text: bool = True  # False: events and checks only, nothing to align


class DirectUnitCoverage(BaseModel):
    """Level 1, directly: source units covered by goldens aligned to them (no model in between)."""

    rule: str  # the embedded rule and its thresholds
    judge: str  # embedded, or embedded then the LLM judge
    units: list[UnitAlignment] = []
    goldens: list[GoldenAlignment] = []
    alignments: list[Alignment] = []
    covered: int = 0
    uncovered: int = 0
    not_judged: int = 0

    @property
    def total(self) -> int:
        return self.covered + self.uncovered + self.not_judged


# ------------------------------------------------------------------ level 2


class Proposition(BaseModel):
    id: str  # P1, P2... within the unit
    text: str
    role: Role
    condition: str | None = None  # the id of the condition or exception it holds under
    spans: list[tuple[int, int]] = []  # character offsets [start, end) in the unit's text
    status: PropositionStatus = "not_judged"
    goldens: list[str] = []  # goldens whose expected behaviour entails it
    reason: str = ""  # why covered / not covered / not judged (the deciding judge's words)
    judge: str = ""


class UnitPropositions(BaseModel):
    unit: str
    document: str
    line: int
    text: str
    source: str  # rules-1 | the file's path (reviewed) | rules-1 (stale entry in the file)
    propositions: list[Proposition] = []
    covered: int = 0


class PropositionCoverage(BaseModel):
    """Level 2: atomic propositions per source unit, covered when a golden's expected behaviour entails them."""

    extractor: str  # how the propositions were made
    judge: str
    file: str | None = None
    stale: list[str] = []  # units whose entry in the file no longer matches their text
    units: list[UnitPropositions] = []
    covered: int = 0
    uncovered: int = 0
    not_judged: int = 0

    @property
    def total(self) -> int:
        return self.covered + self.uncovered + self.not_judged


# ------------------------------------------------------------------ level 4


class Sighting(BaseModel):
    run: str  # the run's id
    where: str  # the step: `trace T span S`, `FILE message N`
    marks: list[str] = []  # the run's marks (incident, adversarial)


class Undocumented(BaseModel):
    """Behaviour observed runs show and the model does not document: a candidate for the model (mbt.runs.undocumented).
    `kind`: `event` — an event the model neither allows nor forbids in `state`; `call` — a tool call the model makes
    in no transition there; `text` — a user text or tool result no binding of the model reads."""

    model: str
    kind: Literal["event", "call", "text"]
    state: str | None
    event: str | None = None
    tool: str | None = None
    deviation: str  # the first deviation's type that showed it
    example: str  # the first sighting's message
    runs: int
    marked: dict[str, int] = {}  # runs per mark among them
    seen: list[Sighting] = []  # where each was seen, in run order


# ------------------------------------------------------------------ the levels


class Figure(BaseModel):
    """One measured figure: `covered` of `total` (a share) or a `value`, on a named denominator."""

    name: str
    covered: int | None = None
    total: int | None = None
    value: float | None = None  # a ratio that is not a count (a mutation score, a usage-weighted share)
    denominator: str = ""
    note: str = ""

    @property
    def ratio(self) -> float | None:
        if self.value is not None:
            return self.value
        if self.covered is None or not self.total:
            return None
        return self.covered / self.total


class Level(BaseModel):
    level: int
    name: str
    scope: str  # what the level measures (seed 004)
    measured: bool  # at least one figure
    figures: list[Figure] = []
    not_measured: list[str] = []  # what at this level was not measured, and why


class Dimension(BaseModel):
    name: Literal["coverage", "richness", "representativeness", "effectiveness"]
    meaning: str
    measured: bool
    figures: list[Figure] = []
    not_measured: str = ""


class LevelsReport(BaseModel):
    """Every level and dimension, measured or not; the opt-in levels' details when they were measured."""

    levels: list[Level] = []
    dimensions: list[Dimension] = []
    note: str = NEVER_SUMMED
    embedding: EmbeddingCoverage | None = None  # level 0
    units: DirectUnitCoverage | None = None  # level 1, directly
    propositions: PropositionCoverage | None = None  # level 2
    probes: ProbeReport | None = None  # level 1: the probe file's report (--probes), as `mbt probes` gives it
    undocumented: list[Undocumented] = []  # level 4: behaviour seen in runs that no model documents

    def level(self, number: int) -> Level:
        return next(lv for lv in self.levels if lv.level == number)
