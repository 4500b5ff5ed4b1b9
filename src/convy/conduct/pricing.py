"""Which models a run pays for, and at what price: the simulated user's and the judge's by their
names and base URLs (models.py's by name alone), the agent's by its `model` (agent-model, or the
agent file's) and its URL — priced in a PriceBook."""

from __future__ import annotations

import msgspec

from convy.play.agent import Agent
from convy.play.model import Models
from convy.play.price import PriceBook, Pricing
from convy.project.project import Project


class RunPrices(msgspec.Struct, frozen=True):
    """A project's models and agent, as a run plays them."""

    project: Project
    models: Models
    agent: Agent

    def pricing(self, book: PriceBook) -> Pricing:
        settings = self.project.settings
        if (self.project.root / "models.py").exists():
            user_url = judge_url = ""
        else:
            user_url, judge_url = settings.model_url, settings.judge_url or settings.model_url
        model, url = self.agent.model()
        agent = (model, url) if model or url else (settings.agent_model, "")
        pricing = book.pricing((self.models.user.name, user_url), (self.models.judge.name, judge_url), agent)
        urls = [m.url for m in settings.panel().members] or [""] * len(self.models.panel)
        members = [book.price(member.name, url) for member, url in zip(self.models.panel, urls, strict=False)]
        if any(price is None or price != pricing.judge for price in members):
            # a judge call's tokens are counted together: priced only when every member costs the same
            return msgspec.structs.replace(pricing, judge=None)
        return pricing
