"""An answer judge that says what it is told, recording what it is asked: the place an LLM judge takes, for tests."""

from __future__ import annotations

from mbt.judges.verdicts import JudgeInput, OneByOne, Verdict


class Scripted(OneByOne):
    """An answer judge that says what it is told (the LLM judge's place), recording what it is asked."""

    name, version = "scripted", "s-1"

    def __init__(self, answer: str):
        self.answer, self.asked = answer, []

    def judge(self, item: JudgeInput) -> Verdict:
        self.asked.append(item)
        return Verdict(self.answer, "scripted", self.name, self.version)
