"""Paragraph sentences for source-document coverage: English, Chinese and Vietnamese (seed 001's manual) alike."""

from __future__ import annotations

import pytest

from mbt.measure.sources import text_units

# Seed 001's style: a Vietnamese product manual (capitals with diacritics, initials, numbers with a decimal point).
VIETNAMESE = ("Người dùng tải lên tệp Excel. Ưu tiên chọn mô hình Llama-3.3-70B-Instruct để có kết quả chính xác. "
              "Đặt tên kết quả theo format Tên bộ test case_TestResult_timestamp. Ông A. Nguyễn duyệt lúc 3.5 giờ. "
              "Được chưa? Ừ, được rồi!")
VIETNAMESE_SENTENCES = [
    "Người dùng tải lên tệp Excel.",
    "Ưu tiên chọn mô hình Llama-3.3-70B-Instruct để có kết quả chính xác.",
    "Đặt tên kết quả theo format Tên bộ test case_TestResult_timestamp.",
    "Ông A. Nguyễn duyệt lúc 3.5 giờ.",
    "Được chưa?",
    "Ừ, được rồi!",
]
ENGLISH = "The assistant asks for\nthe address, e.g. by e-mail. Mr. Smith confirms it. The reset starts at 3.5 s."
ENGLISH_SENTENCES = ["The assistant asks for\nthe address, e.g. by e-mail.", "Mr. Smith confirms it.",
                     "The reset starts at 3.5 s."]
CHINESE = "用户忘记密码。系统发送重置链接！可以吗？好的"
CHINESE_SENTENCES = ["用户忘记密码。", "系统发送重置链接！", "可以吗？", "好的"]


def sentences_of(text: str) -> list[str]:
    return [text[u.start:u.end] for u in text_units(text, markdown=True) if u.kind == "sentence"]


@pytest.mark.parametrize("text, expected", [(VIETNAMESE, VIETNAMESE_SENTENCES), (ENGLISH, ENGLISH_SENTENCES),
                                            (CHINESE, CHINESE_SENTENCES)], ids=["vi", "en", "zh"])
def test_sentences_split_like_a_reader_would(text, expected):
    assert sentences_of(text) == expected


@pytest.mark.parametrize("text", [VIETNAMESE, ENGLISH, CHINESE, VIETNAMESE + " " + ENGLISH + CHINESE])
def test_sentences_tile_the_paragraph(text):
    """Offsets point into the text, in order, without overlap, and together hold every non-space character."""
    units = [u for u in text_units(text, markdown=True) if u.kind == "sentence"]
    assert all(a.end <= b.start for a, b in zip(units, units[1:]))
    assert "".join(text[u.start:u.end] for u in units).replace(" ", "").replace("\n", "") == \
        text.replace(" ", "").replace("\n", "")
