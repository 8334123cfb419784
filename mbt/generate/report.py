"""The generation report (pydantic, published as docs/schemas/generate.schema.json): tests written, elements without a
witness and why, suite figures, files written."""

from __future__ import annotations

from pydantic import BaseModel

SCHEMA_VERSION = "1.0"


class GeneratedTest(BaseModel):
    name: str  # the pytest function
    case_id: str  # the golden-case stub's id
    elements: list[str]  # covered; the first is the one it was made for (gaps), or those it covers first (suites)
    steps: int
    precondition: dict = {}
    events: list[str]  # the run, as `event(arg=value)`


class MissingWitness(BaseModel):
    element: str
    criterion: str
    reason: str  # infeasible | unusable | unreachable | unsatisfiable | depth | limit | sampled | model | unknown | replay
    message: str
    location: str  # file:line:col of the element in its model


class SuiteFigures(BaseModel):
    """A full suite against its bounds: every step covers at most one new element, so `lower_bound` steps are needed;
    `optimum_steps` is the min-cost-flow optimum ignoring guards; `steps` is what the guard-respecting suite takes."""

    criterion: str
    method: str  # chinese-postman | path-cover
    strongly_connected: bool
    elements: int
    lower_bound: int
    optimum_steps: int
    optimum_tests: int
    steps: int
    tests: int
    exact: bool = False  # the suite is the exact guard-respecting optimum (every reachable configuration explored)
    configurations: int | None = None  # how many, when exact
    # Not exact: the fewest steps a guard-respecting suite takes at least (proven by the exact search, which stopped
    # after `searched` states), or why there is no such figure.
    guarded_lower_bound: int | None = None
    searched: int | None = None
    no_exact: str | None = None


class ModelGeneration(BaseModel):
    model: str
    kind: str
    file: str
    mode: str  # gaps | suite
    uncovered: int  # elements the run was asked to cover (gaps: uncovered by the goldens)
    tests: list[GeneratedTest] = []
    missing: list[MissingWitness] = []
    suite: SuiteFigures | None = None
    note: str | None = None


class WrittenFile(BaseModel):
    path: str  # relative to the output folder
    status: str  # written | unchanged | updated | overwritten | beside
    beside: str | None = None  # the new version's path when an edited file was kept


class GenerateReport(BaseModel):
    schema_version: str = SCHEMA_VERSION
    out: str
    max_depth: int
    models: list[ModelGeneration]
    files: list[WrittenFile] = []

    @property
    def kept_edited(self) -> list[WrittenFile]:
        return [f for f in self.files if f.status == "beside"]
