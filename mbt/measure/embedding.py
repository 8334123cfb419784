"""Level 0 of seed 004: embedding-space coverage — gap discovery, not behavioural equivalence.

Source units and goldens (question and expected answers) are put in one vector space; for each unit, the distance
to its nearest golden, `r_i = min_j d(x_i, y_j)` (the seed's direction: unit to golden, never golden to unit); a unit
within the threshold τ is in some golden's neighbourhood, and the **embedding neighbourhood coverage** is the share
of units within τ (`Ĉ_τ`, every unit weighing 1). Units are clustered (spherical k-means), each golden counted in
the cluster of its nearest centroid (`n_k`), and per cluster the shares of units and goldens (`p_D(k)`, `p_Q(k)`) and
the cluster's own coverage `Ĉ_{k,τ}`; the units beyond τ are listed as **blank regions**.

**The embedding** (`mbt-ngram-1`): sparse character n-grams — 3- and 4-grams of each Latin-script word padded with
spaces (English, Vietnamese), single characters and bigrams of Han runs (Chinese) — weighted 1 + log(count) and
normalised; `d = 1 − cosine`. It needs nothing: no model, no download, no numpy. A learned model was measured and
not chosen (docs/levels.md, "Level 0"): on the labelled set the n-grams separate covering from non-covering pairs
better, at no cost; a learned model would see paraphrases the n-grams cannot, which is why the threshold and the
caveat matter.

**τ** is calibrated on the labelled pairs of tests/data/levels/alignment.yaml (covers and partial: near; related and
unrelated: not): the largest τ on a 0.01 grid whose precision on the calibration pairs is at least TARGET_PRECISION
(`calibrate_tau`); docs/levels.md shows its precision and recall on those and on the held-out pairs.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache

from mbt.judges.text import HAN, TOKEN, fold
from mbt.measure.alignment import GoldenText, LabelledPair
from mbt.measure.level_models import Cluster, EmbeddingCoverage, UnitDistance

EMBEDDING = "mbt-ngram-1"
TAU = 0.57  # calibrate_tau on the calibration pairs (tests/test_levels.py recomputes it)
TARGET_PRECISION = 0.95
CAVEAT = ("Level 0 finds gaps; it does not decide coverage: a unit near a golden shares words with it, which says "
          "nothing about conditions, negations, thresholds or the expected behaviour (seed 004: gap discovery and "
          "coarse distribution coverage, not business equivalence).")

Vector = dict[str, float]


@lru_cache(maxsize=65536)
def _vector(text: str) -> tuple[tuple[str, float], ...]:
    counts: Counter[str] = Counter()
    tokens = TOKEN.findall(fold(text))
    for token in tokens:
        if re.fullmatch(f"[{HAN}]", token):
            counts["h:" + token] += 1
            continue
        padded = f" {token} "
        for n in (3, 4):
            for i in range(max(1, len(padded) - n + 1)):
                counts[padded[i:i + n]] += 1
    for a, b in zip(tokens, tokens[1:]):
        if re.fullmatch(f"[{HAN}]", a) and re.fullmatch(f"[{HAN}]", b):
            counts["h:" + a + b] += 1
    weights = {k: 1 + math.log(v) for k, v in counts.items()}
    norm = math.sqrt(sum(w * w for w in weights.values())) or 1.0
    return tuple(sorted((k, w / norm) for k, w in weights.items()))


def embed(text: str) -> Vector:
    """The text's vector (sparse, unit length; empty for a text without letters or digits)."""
    return dict(_vector(text))


def cosine(a: Vector, b: Vector) -> float:
    if len(a) > len(b):
        a, b = b, a
    return sum(w * b.get(k, 0.0) for k, w in a.items())


def distance(a: Vector, b: Vector) -> float:
    return max(0.0, 1.0 - cosine(a, b))


# ------------------------------------------------------------------ τ


def precision_recall(pairs: Sequence[LabelledPair], tau: float) -> tuple[int, int, int]:
    """(pairs within τ, of them positive, positives) for the labelled pairs."""
    within = right = positives = 0
    for p in pairs:
        near = distance(embed(p.unit), embed(p.golden)) <= tau
        within += near
        right += near and p.positive
        positives += p.positive
    return within, right, positives


def calibrate_tau(pairs: Sequence[LabelledPair], target: float = TARGET_PRECISION) -> float:
    """The largest τ (0.01 grid) whose precision on `pairs` (near = covers or partial) is at least `target`."""
    best = 0.0
    for step in range(1, 100):
        tau = step / 100
        within, right, _ = precision_recall(pairs, tau)
        if within and right / within >= target:
            best = tau
    return best


# ------------------------------------------------------------------ clusters


def kmeans(vectors: Sequence[Vector], k: int, rounds: int = 25) -> list[int]:
    """Spherical k-means, deterministic: farthest-first seeds from the first vector, then Lloyd's rounds (ties to
    the lower cluster). Returns each vector's cluster."""
    if not vectors:
        return []
    k = max(1, min(k, len(vectors)))
    seeds = [0]
    while len(seeds) < k:
        far = max(range(len(vectors)), key=lambda i: (min(distance(vectors[i], vectors[s]) for s in seeds), -i))
        seeds.append(far)
    centroids = [dict(vectors[s]) for s in seeds]
    assigned = [-1] * len(vectors)
    for _ in range(rounds):
        new = [min(range(k), key=lambda c: (distance(v, centroids[c]), c)) for v in vectors]
        if new == assigned:
            break
        assigned = new
        for c in range(k):
            members = [vectors[i] for i in range(len(vectors)) if assigned[i] == c]
            if not members:
                continue
            total: Counter[str] = Counter()
            for v in members:
                total.update(v)
            norm = math.sqrt(sum(w * w for w in total.values())) or 1.0
            centroids[c] = {key: w / norm for key, w in total.items()}
    return assigned


def cluster_count(units: int) -> int:
    """K = round(sqrt(units / 2)), at least 1: a common rule of thumb for k-means without labels."""
    return max(1, round(math.sqrt(units / 2)))


# ------------------------------------------------------------------ the level-0 report


def calibration_text(tau: float = TAU) -> str:
    return (f"τ = {tau:.2f}: the largest on a 0.01 grid with precision >= {TARGET_PRECISION:.2f} on the calibration "
            "pairs of mbt's labelled set (docs/levels.md)")


def embedding_coverage(units: Sequence[tuple[str, str, int, str]], goldens: Sequence[GoldenText],
                       tau: float = TAU) -> EmbeddingCoverage:
    """`units`: (unit id, document, line, text) of every unit not excluded."""
    texts = [g for g in goldens if g.text]
    unit_vectors = [embed(u[3]) for u in units]
    golden_vectors = [embed(g.text) for g in texts]
    k = cluster_count(len(units))
    assigned = kmeans(unit_vectors, k)
    out = EmbeddingCoverage(embedding=EMBEDDING, tau=tau, calibration=calibration_text(tau), caveat=CAVEAT,
                            goldens=len(texts), total=len(units))
    for (unit_id, document, line, text), v, c in zip(units, unit_vectors, assigned):
        nearest = min(range(len(texts)), key=lambda j: (distance(v, golden_vectors[j]), j), default=None)
        r = round(distance(v, golden_vectors[nearest]), 3) if nearest is not None else None
        out.units.append(UnitDistance(unit=unit_id, document=document, line=line, text=text,
                                      nearest=texts[nearest].id if nearest is not None else None, distance=r,
                                      within=r is not None and r <= tau, cluster=c + 1))
    out.covered = sum(u.within for u in out.units)
    out.blank = [u.unit for u in sorted((u for u in out.units if not u.within),
                                        key=lambda u: (-(u.distance if u.distance is not None else 2.0), u.unit))]
    # each golden in the cluster of its nearest centroid: the centroid of a cluster's unit vectors
    centroids = []
    for c in range(max(assigned, default=-1) + 1):
        total: Counter[str] = Counter()
        for v, a in zip(unit_vectors, assigned):
            if a == c:
                total.update(v)
        norm = math.sqrt(sum(w * w for w in total.values())) or 1.0
        centroids.append({key: w / norm for key, w in total.items()})
    golden_cluster = [min(range(len(centroids)), key=lambda c: (distance(v, centroids[c]), c)) for v in golden_vectors]
    for c in range(len(centroids)):
        members = [u for u in out.units if u.cluster == c + 1]
        near = [texts[j].id for j in range(len(texts)) if golden_cluster[j] == c]
        covered = sum(u.within for u in members)
        out.clusters.append(Cluster(cluster=c + 1, units=[u.unit for u in members], goldens=near,
                                    unit_share=round(len(members) / len(units), 3) if units else 0.0,
                                    golden_share=round(len(near) / len(texts), 3) if texts else None,
                                    covered=covered, coverage=round(covered / len(members), 3) if members else 0.0))
    return out
