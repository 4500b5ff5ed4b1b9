"""Personal data masked in everything a draft writes: e-mail addresses, phone numbers, payment card
numbers (Luhn-checked), IBANs (checksum-checked) and key-like strings (`sk-…`, 32 or more hex or
base64 characters) become `<email>`, `<phone>`, `<card>`, `<iban>`, `<secret>`, each counted."""

from __future__ import annotations

import re

SECRET = re.compile(
    r"(?<![\w-])(?:sk-[A-Za-z0-9_-]{16,}|(?=[A-Za-z0-9+/_-]*\d)(?=[A-Za-z0-9+/_-]*[A-Za-z])[A-Za-z0-9+/_-]{32,}={0,2})(?![\w-])"
)
EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}")
IBAN = re.compile(r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?\b")
CARD = re.compile(r"(?<![\d-])\d(?:[ -]?\d){12,18}(?![\d-])")
PHONE = re.compile(
    r"(?<![\w+])(?:\+\d[\d ().-]{6,}\d|\(?\d{3}\)?[ .-]?\d{3}[ .-]?\d{4}|0\d{2,4}[ ]\d{3,4}[ ]?\d{3,4})(?!\w)"
)

KINDS = ("email", "phone", "card", "iban", "secret")
"""What is masked, in the order the counts are printed."""


class Masking:
    """Masks texts and counts what it masked by kind; `on` false (`--keep-pii`) leaves them as they
    are."""

    def __init__(self, on: bool = True) -> None:
        self.on = on
        self.counts = dict.fromkeys(KINDS, 0)

    def text(self, text: str) -> str:
        if not self.on:
            return text
        text = SECRET.sub(lambda found: self.masked("secret"), text)
        text = EMAIL.sub(lambda found: self.masked("email"), text)
        text = IBAN.sub(lambda found: self.masked("iban") if self.iban(found[0]) else found[0], text)
        text = CARD.sub(lambda found: self.masked("card") if self.luhn(found[0]) else found[0], text)
        return PHONE.sub(lambda found: self.masked("phone") if self.phone(found[0]) else found[0], text)

    def masked(self, kind: str) -> str:
        self.counts[kind] += 1
        return f"<{kind}>"

    def luhn(self, number: str) -> bool:
        digits = [int(c) for c in number if c.isdigit()]
        if not 13 <= len(digits) <= 19:
            return False
        total = 0
        for place, digit in enumerate(reversed(digits)):
            if place % 2:
                digit *= 2
                if digit > 9:
                    digit -= 9
            total += digit
        return total % 10 == 0

    def iban(self, text: str) -> bool:
        compact = text.replace(" ", "")
        if not 15 <= len(compact) <= 34:
            return False
        moved = compact[4:] + compact[:4]
        digits = "".join(str(int(c, 36)) for c in moved)
        return int(digits) % 97 == 1

    def phone(self, text: str) -> bool:
        digits = sum(c.isdigit() for c in text)
        return 8 <= digits <= 15
