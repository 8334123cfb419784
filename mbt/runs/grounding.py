"""Grounding: was the answer built on documents it may use? Seed 000's RAG trace (`retrieved[]` with approval, status
and score, `selected_source`, `claims[].grounded_in`, the trace's own `must_not`) judged by the rules of docs/runs.md,
"Grounding":

- every document the answer used — the selected source and each claim's sources — was retrieved, is approved and
  active, and is among the contract's allowed sources (when the contract names any): an unapproved or expired
  document is never used, even when it scored higher;
- each claim is grounded in at least one such document; a claim grounded in nothing usable is ungrounded, and an
  ungrounded claim that states an account status, a result, a time (a duration, date or clock time) or another
  quantity is a **critical hallucination**;
- where the run records a document's content, a claim's quantities, dates and times must be stated there too.

A fact the rules need and the run does not record (the claims, what grounds a claim, a used document's approval or
status, what was retrieved) is a gap: what depends on it is not judged, never passed. `judge_grounding` takes the
evidence as a plain mapping of seed 000's shape (what a contract evaluator is handed); `judge_retrieval` takes a
run's parsed evidence (mbt.runs.steps.Retrieval), which every run reader builds.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from mbt.judges.facts import extract
from mbt.judges.text import fold
from mbt.runs.steps import Claim, Retrieval, RetrievedDocument

# The finding types, in the order docs/runs.md lists them (each makes the run a grounding failure).
GROUNDING_FAILURES = ("unapproved_source", "expired_source", "source_not_retrieved", "source_not_allowed",
                      "ungrounded_claim", "critical_hallucination")
# A document's lifecycle status: usable, or not (anything else is a status mbt cannot read: not judged).
ACTIVE_STATUSES = frozenset({"active", "current", "published", "valid", "live", "approved"})
INACTIVE_STATUSES = frozenset({"expired", "retired", "deprecated", "archived", "superseded", "withdrawn", "revoked",
                               "inactive", "obsolete", "draft", "deleted", "disabled", "outdated", "stale"})
# What a critical hallucination states (docs/runs.md lists the words): the user acts on each.
TIME_UNITS = frozenset({"day", "hour", "minute", "second", "week", "month", "year"})


def _words(*groups: str) -> tuple[str, ...]:
    return tuple(fold(w) for g in groups for w in g.split("|"))


# An account's (or an order's, a card's) status, stated as a fact.
_STATUS_EN = re.compile(r"\b(?:is|are|was|were|has been|have been|got|gets|remains?|stays?|been)\s+(?:now\s+|currently\s+"
                        r"|temporarily\s+|permanently\s+)?(?:locked|unlocked|suspended|disabled|enabled|frozen|blocked"
                        r"|unblocked|deactivated|reactivated|activated|closed|verified|restricted|banned)\b"
                        r"|\blocked out\b")
_STATUS_WORDS = _words("已锁定|被锁定|已被锁定|锁定状态|已冻结|被冻结|已停用|已被停用|已禁用|被禁用|已解锁|已激活|已注销|已关闭|"
                       "已封禁|被封禁|已限制|状态为|状态是|处于锁定|处于冻结",
                       "đã khóa|đã bị khóa|bị khóa|bị tạm khóa|đã mở khóa|đã kích hoạt|bị vô hiệu hóa|đã vô hiệu hóa|"
                       "bị đình chỉ|bị tạm ngưng|đã bị đóng|trạng thái là|đang bị khóa")
# A result: something was done (sent, reset, completed, changed ...).
_RESULT_EN = re.compile(r"\b(?:has|have|had|was|were|is|are)\s+(?:been\s+|now\s+|already\s+|successfully\s+)*"
                        r"(?:sent|completed|done|reset|changed|updated|processed|submitted|approved|cancell?ed"
                        r"|refunded|restored|resolved|fixed|delivered|issued|created|deleted|removed)\b"
                        r"|\b(?:i|we)(?:'ve| have| just)\s+(?:already\s+|successfully\s+)?(?:reset|changed|updated|sent"
                        r"|unlocked|completed|processed|fixed|restored|cancell?ed|refunded)\b|\bsuccessfully\b")
_RESULT_WORDS = _words("已完成|已经完成|已发送|已经发送|已重置|已经重置|已修改|已经修改|已更改|已处理|已提交|已退款|已取消|已恢复|"
                       "已办理|已开通|已成功|成功重置|重置成功|修改成功|已为您|已经为您|已帮您|已替您",
                       "đã gửi|đã được gửi|đã hoàn tất|đã hoàn thành|đã xử lý|đã đặt lại|đã được đặt lại|đã thay đổi|"
                       "đã cập nhật|đã hủy|đã hoàn tiền|thành công|đã khôi phục")
# Words by which a must_not item speaks of a time limit, or of a status or result, that is made up (not in the
# sources): the grounding rules decide such an item. Without the "made up" part (a must_not forbidding any promise
# of a time limit, grounded or not) they do not.
_TIME_ITEM = _words("时限|期限|时效|时间|多久|几天|小时|deadline|time limit|time frame|timeframe|duration|how long|"
                    "processing time|thời hạn|thời gian|bao lâu")
_STATUS_RESULT_ITEM = _words("状态|结果|account status|status|result|outcome|trạng thái|kết quả")
_MADE_UP_ITEM = _words("不存在|没有依据|无依据|没有来源|编造|虚构|捏造|凭空|杜撰|not in the source|not in its source|"
                       "not in the retrieved|not found in|not supported by|unsupported|ungrounded|made up|make up|"
                       "makes up|fabricat|invent|hallucinat|không có trong|bịa|không có căn cứ|không có nguồn")
# An item naming a document forbids using it, unless it names it as an exception ("documents other than X").
_EXCEPT_ITEM = _words("以外|之外|除了|other than|except|besides|ngoài")


def critical_kinds(text: str) -> tuple[str, ...]:
    """What a claim states that makes it critical when ungrounded: `status`, `result`, `time` (a duration, date or
    clock time), `quantity` (an amount, a count, a rate: a number with a unit)."""
    folded = fold(text)
    kinds = []
    if _STATUS_EN.search(folded) or any(w in folded for w in _STATUS_WORDS):
        kinds.append("status")
    if _RESULT_EN.search(folded) or any(w in folded for w in _RESULT_WORDS):
        kinds.append("result")
    facts = extract(text)
    if facts.dates or facts.clock or any(q.unit in TIME_UNITS for q in facts.quantities):
        kinds.append("time")
    if any(q.unit and q.unit not in TIME_UNITS for q in facts.quantities):
        kinds.append("quantity")
    return tuple(kinds)


def _facts_of(text: str) -> list[tuple[str, Any]]:
    """The claim's checkable facts: its quantities, dates and clock times."""
    facts = extract(text)
    return [("quantity", q) for q in facts.quantities] + [("date", d) for d in facts.dates] + \
        [("clock", c) for c in facts.clock]


def _stated_in(fact: tuple[str, Any], content: str) -> bool:
    kind, value = fact
    facts = extract(content)
    if kind == "quantity":
        return any(value.matches(q) for q in facts.quantities)
    if kind == "date":
        return any(value.matches(d) for d in facts.dates)
    return value in facts.clock


def _fact_text(fact: tuple[str, Any]) -> str:
    kind, value = fact
    if kind == "clock":
        hours = int(value)
        return f"{hours:02d}:{int((value - hours) * 60):02d}"
    return str(value.text)


# ---------------------------------------------------------------- results


@dataclass
class GroundingFinding:
    """One grounding failure: its type (GROUNDING_FAILURES), where, what; the document and claim it concerns."""

    type: str
    where: str
    message: str
    source: str | None = None
    claim: str | None = None
    kinds: tuple[str, ...] = ()  # a critical hallucination: what it states (status, result, time, quantity)


@dataclass
class ItemOutcome:
    """A must_not item the grounding rules map: `violated`, `kept` or `not_judged`, and why."""

    where: str
    text: str
    verdict: str
    reason: str


@dataclass
class GroundingResult:
    """What the grounding rules found on one run's (or one answer's) evidence."""

    where: str
    route: str | None = None
    queries: list[str] = field(default_factory=list)
    selected: tuple[str, ...] | None = None
    documents: list[RetrievedDocument] = field(default_factory=list)
    used: list[str] = field(default_factory=list)  # documents the answer used (selected, grounding a claim), in order
    failures: list[GroundingFinding] = field(default_factory=list)
    gaps: list[str] = field(default_factory=list)  # what was not judged, and why
    claims: int = 0
    claims_grounded: int = 0
    claims_recorded: bool = False
    undecided_claims: int = 0  # claims whose grounding a gap leaves open
    must_not: list[ItemOutcome] = field(default_factory=list)  # the trace's own must_not items
    # claim index -> (its usable sources, decided: grounded or not, its critical kinds, its facts' check)
    _claims: list[_ClaimState] = field(default_factory=list, repr=False)

    @property
    def critical(self) -> list[GroundingFinding]:
        return [f for f in self.failures if f.type == "critical_hallucination"]

    @property
    def judged(self) -> bool:
        """Grounding measured: a failure found, or every rule judged (no gap)."""
        return bool(self.failures) or not self.gaps

    @property
    def hallucinations_judged(self) -> bool:
        """Critical hallucinations measured: one found, or every claim recorded and decided."""
        return bool(self.critical) or (self.claims_recorded and self.undecided_claims == 0)

    @property
    def passed(self) -> bool:
        return not self.failures and not self.gaps and all(i.verdict == "kept" for i in self.must_not)


@dataclass
class _ClaimState:
    claim: Claim
    decided: bool
    grounded: bool
    kinds: tuple[str, ...]
    unchecked_facts: list[str]  # facts of a grounded claim whose sources' content the run does not record


# ---------------------------------------------------------------- judging


def _status_of(doc: RetrievedDocument) -> str | None:
    """`active`, `inactive`, or None when the status is not recorded or not one mbt reads."""
    if doc.status is None:
        return None
    status = doc.status.strip().casefold()
    return "active" if status in ACTIVE_STATUSES else "inactive" if status in INACTIVE_STATUSES else None


def usable(doc: RetrievedDocument, allowed: frozenset[str] | None = None) -> bool:
    """The document may ground an answer: recorded approved and active, and allowed (when `allowed` names any)."""
    return doc.approved is True and _status_of(doc) == "active" and (not allowed or doc.id in allowed)


def _score(doc: RetrievedDocument | None) -> str:
    return f" (score {doc.score:g})" if doc is not None and doc.score is not None else ""


class _Judging:
    def __init__(self, retrieval: Retrieval, allowed: frozenset[str] | None):
        self.r = retrieval
        self.allowed = allowed if allowed else None  # a contract naming no source allows any usable one
        self.docs: dict[str, RetrievedDocument] = {}
        for d in retrieval.documents:
            self.docs.setdefault(d.id, d)
        self.out = GroundingResult(where=retrieval.where, route=retrieval.route, queries=list(retrieval.queries),
                                   selected=retrieval.selected, documents=list(retrieval.documents))

    def best_usable(self) -> RetrievedDocument | None:
        found = [d for d in self.r.documents if usable(d, self.allowed) and d.score is not None]
        return max(found, key=lambda d: d.score or 0.0, default=None)

    def check_source(self, doc_id: str, use: str, where: str, claim: str | None) -> bool | None:
        """Whether a used document may be used: True, False (a finding is added), None (a gap is added)."""
        doc = self.docs.get(doc_id)
        reasons: list[tuple[str, str]] = []
        gaps: list[str] = []
        if doc is None:
            if self.r.documents_recorded:
                reasons.append(("source_not_retrieved", "is not among the documents the run retrieved"))
            else:
                gaps.append(f"{where}: {use} `{doc_id}`, but the run records no retrieved documents: whether it was "
                            "retrieved, approved and active is not judged")
        else:
            if doc.approved is False:
                reasons.append(("unapproved_source", "is not approved"))
            status = _status_of(doc)
            if status == "inactive":
                reasons.append(("expired_source", f"is {doc.status}"))
            if doc.approved is None and not reasons:
                gaps.append(f"{where}: {use} `{doc_id}`, whose approval the run does not record: not judged")
            if status is None and not reasons:
                gaps.append(f"{where}: {use} `{doc_id}`, whose status the run " + (
                    "does not record" if doc.status is None else f"records as `{doc.status}`, which mbt does not "
                    "read as active or retired") + ": not judged")
        if self.allowed is not None and doc_id not in self.allowed:
            reasons.append(("source_not_allowed", "is not among the contract's allowed sources ("
                            + ", ".join(sorted(self.allowed)) + ")"))
        if reasons:
            best = self.best_usable()
            higher = ""
            if doc is not None and best is not None and doc.score is not None and best.score is not None \
                    and doc.score > best.score and reasons[0][0] in ("unapproved_source", "expired_source"):
                higher = f", even though it scored higher than `{best.id}` ({doc.score:g} > {best.score:g})"
            self.out.failures.append(GroundingFinding(
                reasons[0][0], where, f"{use} `{doc_id}`{_score(doc)}, which "
                + " and ".join(text for _, text in reasons) + higher + ": never use it", source=doc_id, claim=claim))
            return False
        if gaps:
            self.out.gaps.extend(gaps)
            return None
        return True

    def use(self, doc_id: str) -> None:
        if doc_id not in self.out.used:
            self.out.used.append(doc_id)

    def run(self) -> GroundingResult:
        r, out = self.r, self.out
        if r.selected is not None:
            for doc_id in r.selected:
                self.use(doc_id)
                self.check_source(doc_id, "the selected source is", f"{r.where} selected_source", None)
        elif r.claims is None:
            out.gaps.append(f"{r.where}: the run records neither the selected source nor the answer's claims: which "
                            "documents the answer used is not judged")
        if r.claims is None:
            out.gaps.append(f"{r.where}: the run records no claims (what the answer asserted and what grounds it): "
                            "ungrounded claims and critical hallucinations are not judged")
        else:
            out.claims_recorded = True
            out.claims = len(r.claims)
            for claim in r.claims:
                out._claims.append(self.judge_claim(claim))
        out.claims_grounded = sum(c.grounded for c in out._claims)
        out.undecided_claims = sum(not c.decided for c in out._claims)
        for where, text in r.must_not:
            out.must_not.append(decide_item(where, text, out, known_ids(r)))
        return out

    def judge_claim(self, claim: Claim) -> _ClaimState:
        kinds = critical_kinds(claim.text)
        if claim.grounded_in is None:
            self.out.gaps.append(f"{claim.where}: the run does not record what grounds the claim {claim.text!r}: "
                                 "not judged")
            return _ClaimState(claim, False, False, kinds, [])
        usable: list[str] = []
        open_ = False
        for doc_id in claim.grounded_in:
            self.use(doc_id)
            found = self.check_source(doc_id, "the claim is grounded in", claim.where, claim.text)
            if found:
                usable.append(doc_id)
            elif found is None:
                open_ = True
        if not usable and open_:
            return _ClaimState(claim, False, False, kinds, [])
        if not usable:
            named = ", ".join(f"`{d}`" for d in claim.grounded_in)
            why = f"grounded only in {named}, none of them usable" if claim.grounded_in else "grounded in nothing"
            self.ungrounded(claim, kinds, f"the claim {claim.text!r} is {why}")
            return _ClaimState(claim, True, False, kinds, [])
        # Grounded: where the run records the sources' content, the claim's facts must be stated there.
        facts = _facts_of(claim.text)
        contents = [self.docs[d].content for d in usable if d in self.docs]
        if facts and len(contents) == len(usable) and all(c is not None for c in contents):
            missing = [f for f in facts if not any(_stated_in(f, c or "") for c in contents)]
            if missing:
                stated = ", ".join(repr(_fact_text(f)) for f in missing)
                self.ungrounded(claim, kinds or ("quantity",),
                                f"the claim {claim.text!r} states {stated}, which its sources' recorded content "
                                f"({', '.join(usable)}) does not")
                return _ClaimState(claim, True, False, kinds, [])
            return _ClaimState(claim, True, True, kinds, [])
        return _ClaimState(claim, True, True, kinds, [_fact_text(f) for f in facts])

    def ungrounded(self, claim: Claim, kinds: tuple[str, ...], message: str) -> None:
        if kinds:
            self.out.failures.append(GroundingFinding(
                "critical_hallucination", claim.where, f"{message}, and states {_kinds_text(kinds)}: a critical "
                "hallucination", claim=claim.text, kinds=kinds))
        else:
            self.out.failures.append(GroundingFinding("ungrounded_claim", claim.where, message, claim=claim.text))


def _kinds_text(kinds: tuple[str, ...]) -> str:
    words = {"status": "an account status", "result": "a result", "time": "a time limit, duration or date",
             "quantity": "a quantity"}
    return " and ".join(words[k] for k in kinds)


def judge_retrieval(retrieval: Retrieval, allowed_sources: Iterable[str] | None = None) -> GroundingResult:
    """The grounding rules on a run's retrieval evidence; `allowed_sources`: the contract's (None or empty: any
    approved, active, retrieved document may be used)."""
    allowed = frozenset(allowed_sources) if allowed_sources is not None else None
    return _Judging(retrieval, allowed).run()


# ---------------------------------------------------------------- must_not items the grounding rules decide


def known_ids(r: Retrieval) -> set[str]:
    ids = {d.id for d in r.documents} | set(r.selected or ())
    for c in r.claims or ():
        ids.update(c.grounded_in or ())
    return ids


def item_rule(text: str, ids: Iterable[str]) -> tuple[str, str | None] | None:
    """Which grounding rule decides a must_not item: ("document", id) for an item naming a document (it must not be
    used), ("time", None) for one about a made-up time limit, ("status_result", None) for one about a made-up status
    or result; None: no grounding rule decides it."""
    folded = fold(text)
    if not any(w in folded for w in _EXCEPT_ITEM):
        for doc_id in sorted(ids, key=lambda i: (-len(i), i)):
            if doc_id and fold(doc_id) in folded:
                return "document", doc_id
    if any(w in folded for w in _MADE_UP_ITEM):
        if any(w in folded for w in _TIME_ITEM):
            return "time", None
        if any(w in folded for w in _STATUS_RESULT_ITEM):
            return "status_result", None
    return None


def decide_item(where: str, text: str, result: GroundingResult, ids: Iterable[str],
                ) -> ItemOutcome:
    """A must_not item decided by the grounding rules where they map it (item_rule), else not judged."""
    rule = item_rule(text, ids)
    if rule is None:
        return ItemOutcome(where, text, "not_judged", "no grounding rule decides it (it names no document, and no "
                                                      "made-up time limit, status or result)")
    kind, doc_id = rule
    claims = result._claims
    if kind == "document":
        users = (["it is the selected source"] if doc_id in (result.selected or ()) else []) + [
            f"it grounds the claim {c.claim.text!r}" for c in claims if doc_id in (c.claim.grounded_in or ())]
        if users:
            return ItemOutcome(where, text, "violated", f"`{doc_id}` is used: {'; '.join(users)}")
        if not result.claims_recorded or any(c.claim.grounded_in is None for c in claims):
            return ItemOutcome(where, text, "not_judged", "the run does not record what each claim is grounded in")
        return ItemOutcome(where, text, "kept", f"`{doc_id}` is neither selected nor grounding a claim")
    if not result.claims_recorded:
        return ItemOutcome(where, text, "not_judged", "the run records no claims")
    wanted = ("time",) if kind == "time" else ("status", "result")
    for f in result.critical:
        if any(k in wanted for k in f.kinds):
            return ItemOutcome(where, text, "violated", f.message)
    if kind == "time":
        open_ = [c for c in claims if "time" in c.kinds and (not c.decided or c.unchecked_facts)]
        if open_:
            c = open_[0]
            why = (f"whether its sources state {', '.join(c.unchecked_facts)} is not recorded (no document content)"
                   if c.decided else "its grounding is not judged")
            return ItemOutcome(where, text, "not_judged", f"the claim {c.claim.text!r} states a time: {why}")
        return ItemOutcome(where, text, "kept", "no claim states a time limit, duration or date its sources do not")
    open_ = [c for c in claims if not c.decided and any(k in ("status", "result") for k in c.kinds)]
    if open_:
        return ItemOutcome(where, text, "not_judged", f"the claim {open_[0].claim.text!r} states a status or a "
                                                      "result, and its grounding is not judged")
    return ItemOutcome(where, text, "kept", "no ungrounded claim states an account status or a result")


# ---------------------------------------------------------------- seed 000's shape, as a plain mapping


class GroundingProblem(ValueError):
    """Evidence of seed 000's shape that cannot be read; `where` names the field."""

    def __init__(self, message: str, where: str):
        super().__init__(f"{where}: {message}")
        self.where = where
        self.reason = message


# The keys of seed 000's RAG trace that the grounding rules read (a transcript may carry them beside its messages).
GROUNDING_KEYS = frozenset({"retrieved", "selected_source", "claims", "must_not", "route", "query"})
DOCUMENT_KEYS = frozenset({"document_id", "id", "approved", "status", "score", "content", "text", "metadata"})
CLAIM_KEYS = frozenset({"text", "grounded_in"})


def _ids(value: Any, what: str, where: str) -> tuple[str, ...]:
    """A document id or a list of them (null: none)."""
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise GroundingProblem(f"`{what}` must be a document id or a list of them", where)


def _approved(value: Any, where: str) -> bool | None:
    if value is None or isinstance(value, bool):
        return value
    raise GroundingProblem("`approved` must be true or false", where)


def read_document(raw: Any, where: str) -> RetrievedDocument:
    """One retrieved document: `document_id` (or `id`), `approved`, `status`, `score`, `content` (or `text`); the
    approval and status may also sit in its `metadata` (what OpenTelemetry's retrieval attributes carry)."""
    if not isinstance(raw, Mapping):
        raise GroundingProblem("a retrieved document must be an object with a `document_id`", where)
    doc_id = raw.get("document_id", raw.get("id"))
    if not isinstance(doc_id, (str, int)) or isinstance(doc_id, bool) or doc_id == "":
        raise GroundingProblem("a retrieved document needs a `document_id` (or `id`)", where)
    meta = raw.get("metadata")
    meta = meta if isinstance(meta, Mapping) else {}
    score = raw.get("score")
    if score is not None and (not isinstance(score, (int, float)) or isinstance(score, bool)):
        raise GroundingProblem("`score` must be a number", where)
    status = raw.get("status", meta.get("status"))
    if status is not None and not isinstance(status, str):
        raise GroundingProblem("`status` must be text (active, expired, ...)", where)
    content = raw.get("content", raw.get("text"))
    return RetrievedDocument(str(doc_id), where, float(score) if score is not None else None,
                             _approved(raw["approved"] if "approved" in raw else meta.get("approved"), where),
                             status, content if isinstance(content, str) else None)


def read_grounding(raw: Mapping[str, Any], where: str, always: bool = False) -> Retrieval | None:
    """Seed 000's RAG fields of a mapping as retrieval evidence; None when it has none of `retrieved`,
    `selected_source` and `claims` (unless `always`). Raises GroundingProblem for a field of the wrong shape."""
    if not always and not any(k in raw for k in ("retrieved", "selected_source", "claims")):
        return None
    r = Retrieval(where=where)
    query = raw.get("query")
    if isinstance(query, str):
        r.queries.append(query)
    route = raw.get("route")
    if route is not None:
        if not isinstance(route, str):
            raise GroundingProblem("`route` must be text", f"{where} route")
        r.route = route
    if "retrieved" in raw:
        docs = raw["retrieved"]
        if not isinstance(docs, list):
            raise GroundingProblem("`retrieved` must be a list of documents", f"{where} retrieved")
        r.documents = [read_document(d, f"{where} retrieved[{i}]") for i, d in enumerate(docs)]
        r.documents_recorded = True
    if "selected_source" in raw:
        r.selected = _ids(raw["selected_source"], "selected_source", f"{where} selected_source")
    if "claims" in raw:
        claims = raw["claims"]
        if not isinstance(claims, list):
            raise GroundingProblem("`claims` must be a list of {text, grounded_in}", f"{where} claims")
        r.claims = []
        for i, c in enumerate(claims):
            at = f"{where} claims[{i}]"
            if isinstance(c, str):
                r.claims.append(Claim(c, at, None))
                continue
            if not isinstance(c, Mapping) or not isinstance(c.get("text"), str):
                raise GroundingProblem("a claim needs its `text`", at)
            r.claims.append(Claim(c["text"], at, _ids(c["grounded_in"], "grounded_in", at)
                                  if "grounded_in" in c else None))
    items = raw.get("must_not")
    if items is not None:
        if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
            raise GroundingProblem("`must_not` must be a list of texts", f"{where} must_not")
        r.must_not = [(f"{where} must_not[{i}]", text) for i, text in enumerate(items)]
    return r


def judge_grounding(evidence: Mapping[str, Any], allowed_sources: Iterable[str] | None = None,
                    where: str = "evidence") -> GroundingResult:
    """The grounding rules on evidence of seed 000's shape, a plain mapping (`query`, `route`, `retrieved[]` with
    `document_id` / `approved` / `status` / `score`, `selected_source`, `claims[]` with `text` / `grounded_in`,
    `must_not`): what a contract evaluator is handed beside an answer. Evidence with none of the grounding fields
    gives a result that judged nothing (its gap says so). Raises GroundingProblem for a field of the wrong shape."""
    retrieval = read_grounding(evidence, where)
    if retrieval is None:
        return GroundingResult(where=where, gaps=[f"{where}: no retrieval evidence (`retrieved`, `selected_source`, "
                                                  "`claims`): grounding is not judged"])
    return judge_retrieval(retrieval, allowed_sources)


def count_unread(raw: Mapping[str, Any], counts: dict[str, int]) -> None:
    """Count the keys of seed 000's retrieved documents and claims that no rule reads (docs/runs.md, "Unread")."""
    docs, claims = raw.get("retrieved"), raw.get("claims")
    for what, items, known in (("a retrieved document", docs, DOCUMENT_KEYS), ("a claim", claims, CLAIM_KEYS)):
        for item in items if isinstance(items, list) else ():
            for key in item if isinstance(item, Mapping) else ():
                if key not in known:
                    name = f"key `{key}` of {what}"
                    counts[name] = counts.get(name, 0) + 1
