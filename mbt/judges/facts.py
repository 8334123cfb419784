"""Facts a text states that a judge can compare without understanding it: quantities (a number, its magnitude word
and its unit), dates, clock times, identifiers (e-mail addresses, web addresses, phone numbers), person names in Latin
script, antonyms, closed-class values (channels, identity documents), negation, yes/no answers, refusals, requests
for secrets, and instructions addressed to a judge — in English, Vietnamese and Chinese.

Extraction is by pattern and small word lists, in a fixed order: a span taken by an earlier kind (a date) is not read
again by a later one (as numbers). Where a written number reads two ways ("3.300" is 3300 in Vietnamese and 3.3 in
English; "1.500" likewise), both readings are kept and either may match.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from functools import lru_cache

from mbt.judges.text import HAN, fold, is_han

# ------------------------------------------------------------------ numbers


def number_readings(raw: str) -> frozenset[Decimal]:
    """The values a written number can mean: `1,500,000`, `1.500.000`, `2.50`, `5,5`, `3.300` (3300 or 3.3)."""
    raw = raw.strip()
    out: set[Decimal] = set()

    def add(text: str) -> None:
        try:
            out.add(Decimal(text))
        except InvalidOperation:
            pass

    groups = re.fullmatch(r"\d{1,3}(?:([.,])\d{3})+(?:([.,])(\d+))?", raw)
    if groups and (groups.group(2) is None or groups.group(2) != groups.group(1)):
        sep, dec = groups.group(1), groups.group(2)
        body = raw if dec is None else raw[: raw.rindex(dec)]
        whole = body.replace(sep, "")
        if dec is None:
            add(whole)
            if raw.count(sep) == 1:  # one group: a thousands separator, or a decimal mark before three decimals
                add(raw.replace(sep, "."))
        else:
            add(whole + "." + groups.group(3))
        return frozenset(out)
    if re.fullmatch(r"\d+[.,]\d+", raw):
        add(raw.replace(",", "."))
    elif re.fullmatch(r"\d+", raw):
        add(raw)
    return frozenset(out)


_MAGNITUDE = {
    "k": 10**3, "thousand": 10**3, "nghìn": 10**3, "ngàn": 10**3, "千": 10**3,
    "million": 10**6, "mn": 10**6, "m": 10**6, "triệu": 10**6, "tr": 10**6,
    "billion": 10**9, "bn": 10**9, "tỷ": 10**9, "tỉ": 10**9,
    "万": 10**4, "亿": 10**8, "百": 100, "hundred": 100, "trăm": 100,
}
# unit words -> a unit class; longest first when matched
_UNITS = {
    "usd": ["$", "usd", "us$", "dollar", "dollars"], "vnd": ["vnd", "vnđ", "đồng", "đ", "dong"],
    "cny": ["元", "块", "人民币", "rmb", "yuan", "¥"], "eur": ["€", "eur", "euro", "euros"],
    "percent": ["%", "percent", "per cent", "phần trăm"],
    "day": ["business days", "business day", "working days", "working day", "calendar days", "days", "day",
            "ngày làm việc", "ngày", "个工作日", "工作日", "天", "日"],
    "hour": ["hours", "hour", "hrs", "h", "giờ", "tiếng", "个小时", "小时"],
    "minute": ["minutes", "minute", "mins", "min", "phút", "分钟"],
    "second": ["seconds", "second", "giây", "秒"],
    "week": ["weeks", "week", "tuần", "个星期", "星期", "周"],
    "month": ["months", "month", "tháng", "个月"],
    "year": ["years", "year", "năm", "年"],
    "times": ["times", "attempts", "attempt", "tries", "lần", "次"],
    "digit": ["digits", "digit", "chữ số", "số", "位"],
    "item": ["items", "transactions", "transaction", "giao dịch", "笔", "个"],
}
_UNIT_OF = {word: unit for unit, words in _UNITS.items() for word in words}
_UNIT_WORDS = sorted(_UNIT_OF, key=len, reverse=True)
_PREFIX_CURRENCY = {"$": "usd", "us$": "usd", "€": "eur", "¥": "cny", "￥": "cny"}
_WORD_NUMBERS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
    "ten": 10, "eleven": 11, "twelve": 12, "fifteen": 15, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50,
    "sixty": 60, "ninety": 90, "hundred": 100, "once": 1, "twice": 2,
    "một": 1, "hai": 2, "ba": 3, "bốn": 4, "tư": 4, "năm": 5, "sáu": 6, "bảy": 7, "tám": 8, "chín": 9, "mười": 10,
}
_HAN_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
_HAN_UNITS = {"十": 10, "百": 100, "千": 1000}


def han_number(text: str) -> int | None:
    """三 -> 3, 二十四 -> 24, 一百零五 -> 105; None for what is not a plain Chinese numeral."""
    total, current = 0, 0
    if not text:
        return None
    for ch in text:
        if ch in _HAN_DIGITS:
            current = _HAN_DIGITS[ch]
        elif ch in _HAN_UNITS:
            total += (current or 1) * _HAN_UNITS[ch]
            current = 0
        else:
            return None
    return total + current


@dataclass(frozen=True)
class Quantity:
    """A number the text states: its possible values, its unit class ('' when none), and the text it came from."""

    values: frozenset[Decimal]
    unit: str
    text: str

    def matches(self, other: Quantity) -> bool:
        return bool(self.values & other.values) and (self.unit == other.unit or not self.unit or not other.unit)


@dataclass(frozen=True)
class DateFact:
    """A calendar date: the (year or 0, month, day) readings it can have."""

    readings: frozenset[tuple[int, int, int]]
    text: str

    def matches(self, other: DateFact) -> bool:
        for y1, m1, d1 in self.readings:
            for y2, m2, d2 in other.readings:
                if (m1, d1) == (m2, d2) and (not y1 or not y2 or y1 == y2):
                    return True
        return False


_MONTHS = {name: i for i, names in enumerate([
    ("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"), ("may",), ("june", "jun"),
    ("july", "jul"), ("august", "aug"), ("september", "sep", "sept"), ("october", "oct"), ("november", "nov"),
    ("december", "dec")], start=1) for name in names}
_MONTH_NAMES = "|".join(sorted(_MONTHS, key=len, reverse=True))
_DATE_PATTERNS = [
    ("ymd", re.compile(r"(?<!\d)(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})(?!\d)")),
    ("ymd", re.compile(r"(\d{4})\s*年\s*(\d{1,2})\s*月\s*(\d{1,2})\s*[日号]")),
    ("md", re.compile(r"(?<![\d年])(\d{1,2})\s*月\s*(\d{1,2})\s*[日号]")),
    ("dmy", re.compile(r"(?<!\d)(\d{1,2})\s+tháng\s+(\d{1,2})(?:\s*(?:năm|,)?\s*(\d{4}))?")),
    ("dmy_or_mdy", re.compile(r"(?<![\d.,])(\d{1,2})[/.-](\d{1,2})(?:[/.-](\d{4}|\d{2}))?(?![\d%])")),
    ("dMy", re.compile(rf"(?<!\d)(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?({_MONTH_NAMES})\.?(?:,?\s+(\d{{4}}))?\b")),
    ("Mdy", re.compile(rf"\b({_MONTH_NAMES})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?(?:,?\s+(\d{{4}}))?(?!\d)")),
]


def _valid(y: int, m: int, d: int) -> bool:
    return 1 <= m <= 12 and 1 <= d <= 31


def _date_readings(kind: str, g: tuple[str | None, ...]) -> set[tuple[int, int, int]]:
    def year(text: str | None) -> int:
        if not text:
            return 0
        return int(text) + (2000 if len(text) == 2 else 0)

    if kind == "ymd":
        return {(int(g[0] or 0), int(g[1] or 0), int(g[2] or 0))}
    if kind == "md":
        return {(0, int(g[0] or 0), int(g[1] or 0))}
    if kind == "dmy":
        return {(year(g[2]), int(g[1] or 0), int(g[0] or 0))}
    if kind == "dmy_or_mdy":
        a, b, y = int(g[0] or 0), int(g[1] or 0), year(g[2])
        return {r for r in ((y, b, a), (y, a, b)) if _valid(*r)}
    if kind == "dMy":
        return {(year(g[2]), _MONTHS[(g[1] or "").lower()], int(g[0] or 0))}
    return {(year(g[2]), _MONTHS[(g[0] or "").lower()], int(g[1] or 0))}  # Mdy


# ------------------------------------------------------------------ clock times

_CLOCK = re.compile(r"(?<![\d.,])([01]?\d|2[0-3])[:h]([0-5]\d)(?!\d)(?:\s*(am|pm|a\.m\.|p\.m\.))?")
_HOUR_AMPM = re.compile(r"(?<![\d.,:])(1[0-2]|0?\d)\s*(am|pm|a\.m\.|p\.m\.)")
_VI_HOUR = re.compile(r"(?<![\d.,:])(\d{1,2})\s*(?:giờ|h)(?:\s*(\d{1,2})\s*phút)?\s*(sáng|trưa|chiều|tối|đêm)")
_ZH_HOUR = re.compile(r"(?:(早上|上午|中午|下午|晚上|凌晨)\s*)?(\d{1,2}|[一二两三四五六七八九十]{1,3})\s*[点點]"
                      r"(?:\s*(\d{1,2})\s*分|半)?")


def _hours(hour: int, minute: int, period: str | None) -> Decimal:
    if period in ("pm", "p.m.", "chiều", "tối", "下午", "晚上") and hour < 12:
        hour += 12
    if period in ("am", "a.m.", "凌晨", "早上", "上午", "sáng") and hour == 12:
        hour = 0
    if period in ("đêm",) and hour < 6:
        pass
    elif period in ("đêm",) and hour < 12:
        hour += 12
    return Decimal(hour) + Decimal(minute) / 60


# ------------------------------------------------------------------ identifiers and names

_EMAIL = re.compile(r"(?<![\w.+-])[\w.+-]+@[\w-]+(?:\.[\w-]+)+")  # from a run's start only: linear on long runs
_URL = re.compile(r"https?://\S+|www\.\S+")
_PHONE = re.compile(r"(?<![\d.,])(?:\+?\d[\d .-]{6,}\d)(?![\d.,]*\d)")
def person_names(text: str) -> tuple[str, ...]:
    """Runs of two to four capitalised Latin-script words that do not open a sentence ("Anna Keller", "Nguyễn Thu
    Hà"), folded: person names, as far as capitals tell."""
    found: list[str] = []
    for sentence in re.split(r"(?<=[.!?:;])\s+|\n", " ".join(text.split())):
        words = re.findall(r"[^\W\d_]+|\S", sentence)
        run: list[str] = []
        for index, word in enumerate(words + [""]):
            if word[:1].isupper() and word[1:].islower() and word[:1].isalpha() and index > 0 and not is_han(word[:1]):
                run.append(word)
                continue
            if 2 <= len(run) <= 4:
                found.append(fold(" ".join(run)))  # folded as the texts they are looked for in (ª is a)
            run = []
    return tuple(dict.fromkeys(found))


@dataclass(frozen=True)
class Facts:
    """What one text states that the judges compare (every field folded)."""

    quantities: tuple[Quantity, ...] = ()
    dates: tuple[DateFact, ...] = ()
    clock: tuple[Decimal, ...] = ()
    identifiers: tuple[tuple[str, str], ...] = ()  # (kind, value)
    names: tuple[str, ...] = ()
    rest: str = ""  # the folded text with every fact above blanked out
    spans: tuple[tuple[int, int], ...] = field(default=(), repr=False)


def _take(pattern: re.Pattern[str], work: str, read: Callable[[re.Match[str]], bool]) -> str:
    """`work` with each match of `pattern` that `read` takes (and records) blanked out, in one pass: the text keeps
    its length, so later patterns see where the taken facts were without reading them again."""
    return pattern.sub(lambda m: " " * len(m.group(0)) if read(m) else m.group(0), work)


@lru_cache(maxsize=1024)
def extract(text: str) -> Facts:
    """The facts `text` states, each span read once: identifiers, names, dates, clock times, then quantities."""
    names = person_names(text)
    work = fold(text)
    identifiers: list[tuple[str, str]] = []
    dates: list[DateFact] = []
    clock: list[Decimal] = []

    def identifier(kind: str) -> Callable[[re.Match[str]], bool]:
        def read(m: re.Match[str]) -> bool:
            identifiers.append((kind, m.group(0).rstrip(".,;")))
            return True
        return read

    def date(kind: str) -> Callable[[re.Match[str]], bool]:
        def read(m: re.Match[str]) -> bool:
            readings = {r for r in _date_readings(kind, m.groups()) if _valid(*r)}
            if readings:
                dates.append(DateFact(frozenset(readings), m.group(0)))
            return bool(readings)
        return read

    def time_of_day(hour: int | None, minute: int, period: str | None) -> bool:
        if hour is None or hour > 24:
            return False
        clock.append(_hours(hour, minute, period))
        return True

    def phone(m: re.Match[str]) -> bool:
        digits = re.sub(r"\D", "", m.group(0))
        if len(digits) >= 8 and not re.fullmatch(r"\d{1,3}(?:[.,]\d{3})+", m.group(0).strip()):
            identifiers.append(("phone", digits))
            return True
        return False

    work = _take(_EMAIL, work, identifier("email"))
    work = _take(_URL, work, identifier("url"))
    for kind, pattern in _DATE_PATTERNS:
        work = _take(pattern, work, date(kind))
    work = _take(_CLOCK, work, lambda m: time_of_day(int(m.group(1)), int(m.group(2)), m.group(3)))
    work = _take(_HOUR_AMPM, work, lambda m: time_of_day(int(m.group(1)), 0, m.group(2)))
    work = _take(_VI_HOUR, work, lambda m: time_of_day(int(m.group(1)), int(m.group(2) or 0), m.group(3)))
    work = _take(_ZH_HOUR, work, lambda m: time_of_day(
        int(m.group(2)) if m.group(2).isdigit() else han_number(m.group(2)),
        30 if m.group(0).endswith("半") else int(m.group(3) or 0), m.group(1)))
    work = _take(_PHONE, work, phone)
    quantities = _quantities(work)
    return Facts(tuple(quantities), tuple(dates), tuple(clock), tuple(identifiers), names,
                 re.sub(r"\s+", " ", _blank_numbers(work)).strip())


# (the optional prefix carries its own white space: a bare `\s*` before the number would rescan long blank runs)
_NUMBER = re.compile(r"(?<![A-Za-z\u00C0-\u1EF9\d.,])(?:(us\$|\$|€|¥|￥)\s*)?(\d{1,3}(?:[.,]\d{3})+(?:[.,]\d+)?|\d+(?:[.,]\d+)?)"
                     r"(?![\d])")
_WORD_NUMBER = re.compile(r"\b(" + "|".join(sorted(_WORD_NUMBERS, key=len, reverse=True)) + r")\b")
_HAN_NUMBER = re.compile(r"[零〇一二两三四五六七八九十百千]+")


_MAGNITUDE_WORD = re.compile(r"\s*(thousand|million|billion|hundred|nghìn|ngàn|triệu|tỷ|tỉ|trăm|tr|mn|bn|k|m)(?![^\W\d_])"
                             r"|\s*([千万亿百])")


def _unit_after(text: str, pos: int) -> tuple[str, int, int]:
    """(unit class, magnitude, end) of what follows a number at `pos`: an optional magnitude word, then a unit."""
    rest = text[pos:pos + 64]  # a magnitude word and a unit are near: never copy the whole tail per number
    magnitude, skip = 1, 0
    m = _MAGNITUDE_WORD.match(rest)
    if m:
        magnitude, skip = _MAGNITUDE[m.group(1) or m.group(2)], m.end()
    after = rest[skip:]
    stripped = after.lstrip()
    lead = len(after) - len(stripped)
    if stripped.startswith("/"):  # 5,5%/năm: the unit is before the slash
        return "", magnitude, pos + skip
    for word in _UNIT_WORDS:
        if stripped.startswith(word):
            end = lead + len(word)
            tail = stripped[len(word):len(word) + 1]
            if word[0].isalpha() and not re.match(f"[{HAN}]", word) and tail and (tail.isalnum() or tail == "_"):
                continue  # "5 days" yes, "5 dayshift" no
            return _UNIT_OF[word], magnitude, pos + skip + end
    return "", magnitude, pos + skip


def _quantities(work: str) -> list[Quantity]:
    out: list[Quantity] = []
    for m in _NUMBER.finditer(work):
        values = number_readings(m.group(2))
        if not values:
            continue
        unit, magnitude, end = _unit_after(work, m.end())
        if m.group(1):
            unit = _PREFIX_CURRENCY[m.group(1)]
        out.append(Quantity(frozenset(v * magnitude for v in values), unit, work[m.start():end].strip()))
    for m in _WORD_NUMBER.finditer(work):
        unit, magnitude, end = _unit_after(work, m.end())
        if unit:  # a number word counts only before a unit: "three times", not "the one you chose"
            out.append(Quantity(frozenset({Decimal(_WORD_NUMBERS[m.group(1)]) * magnitude}), unit, work[m.start():end]))
    for m in _HAN_NUMBER.finditer(work):
        value = han_number(m.group(0))
        unit, magnitude, end = _unit_after(work, m.end())
        if value is not None and unit:
            out.append(Quantity(frozenset({Decimal(value) * magnitude}), unit, work[m.start():end]))
    return out


def _blank_numbers(work: str) -> str:
    return re.sub(r"\d+(?:[.,]\d+)*", " ", work)


def quantities(text: str) -> list[Quantity]:
    """The quantities `text` states (dates, clock times and identifiers are not quantities)."""
    return list(extract(text).quantities)
