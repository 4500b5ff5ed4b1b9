"""The demo's agent: a small deterministic customer-support bot, served over HTTP."""

from __future__ import annotations

import json
import re

ORDER = re.compile(r"\b(\d{4})\b")


class SupportBot:
    """A route for LocalServer: POST /chat with {"messages": [...], "session": id} answers
    {"reply": {"text": ...}, "usage": {...}, "trace": [...]}."""

    def __call__(
        self, method: str, path: str, headers: dict[str, str], body: bytes
    ) -> tuple[int, dict[str, str], bytes]:
        if method != "POST" or path != "/chat":
            return 404, {"Content-Type": "application/json"}, b'{"error": "not found"}'
        try:
            request = json.loads(body)
            said = [m["content"] for m in request["messages"] if m["role"] == "user"]
        except (ValueError, KeyError, TypeError):
            return 400, {"Content-Type": "application/json"}, b'{"error": "bad request"}'
        text, trace = self.answer(said)
        words = sum(len(m.split()) for m in said)
        reply = {
            "reply": {"text": text},
            "usage": {"input_tokens": words * 4 // 3 + 40, "output_tokens": len(text.split()) * 4 // 3},
            "trace": trace,
        }
        return 200, {"Content-Type": "application/json"}, json.dumps(reply).encode()

    def answer(self, said: list[str]) -> tuple[str, list[object]]:
        """The bot's answer to the user's latest message, given everything the user said."""
        latest = said[-1].lower() if said else ""
        earlier = " ".join(said).lower()
        order = ORDER.search(latest)
        if any(word in latest for word in ("human", "person", "manager")):
            return (
                "I'm sorry, I can't transfer you to a person. I can help with orders, refunds "
                "and subscriptions right here.",
                [{"thought": "policy: no hand-over to staff in this channel"}],
            )
        if "cancel" in latest:
            return (
                "Done: your subscription is cancelled. You keep access until the end of the billing "
                "period, and you won't be charged again.",
                [{"name": "cancel_subscription", "arguments": {}, "result": "cancelled"}],
            )
        if order and "refund" in earlier:
            number = order.group(1)
            return (
                f"I've checked order {number}: it was lost in transit. I've issued a full refund of "
                "$59.00 to your card; it arrives in 3-5 business days.",
                [
                    {"name": "lookup_order", "arguments": {"order": number}, "result": "lost_in_transit"},
                    {"name": "refund", "arguments": {"order": number, "amount": 59.0}, "result": "ok"},
                ],
            )
        if order:
            number = order.group(1)
            return (
                f"Order {number} shipped on 2 November and was delivered yesterday at 14:05.",
                [{"name": "lookup_order", "arguments": {"order": number}, "result": "delivered"}],
            )
        if "refund" in latest:
            return "I'm sorry about that. What is your order number?", []
        if "thank" in latest:
            return "You're welcome! Is there anything else I can do?", []
        return "Hello! I can help with orders, refunds and subscriptions. What do you need?", []
