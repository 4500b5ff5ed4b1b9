"use strict";
/* The scenario window: a dialog with a scenario's figures, its failing claims and its attempts —
   each with the judge's decision on every claim, the transcript and the agent's steps. An attempt's
   body is drawn when it is first unfolded. An agent's answer arrives as a tree of tag names and
   text (parsed from its Markdown in Python, raw HTML off); only the tags below become elements, every
   string becomes a text node, so nothing an agent wrote is ever read as HTML. */
(function () {
  const el = convy.el;
  const tone = convy.tone;
  const TAGS = new Set(["p", "ul", "ol", "li", "blockquote", "em", "strong", "code", "pre", "br", "hr", "h4", "span"]);
  let dialog = null;

  function markup(nodes, parent) {
    for (const node of nodes) {
      if (typeof node === "string") parent.append(document.createTextNode(node));
      else if (Array.isArray(node) && typeof node[0] === "string") {
        const tag = TAGS.has(node[0]) ? node[0] : "span";
        const made = document.createElement(tag);
        if (tag === "pre") made.append(el("code", "", typeof node[1] === "string" ? node[1] : ""));
        else markup(node.slice(1), made);
        parent.append(made);
      }
    }
  }

  function facts(list, className) {
    const ul = el("ul", "facts " + (className || ""));
    for (const fact of list) ul.append(el("li", "", fact));
    return ul;
  }

  function claims(attempt) {
    const table = el("table", "claims");
    const head = el("tr");
    for (const name of ["Claim", "Decision", "Reason"]) head.append(el("th", "", name));
    const thead = el("thead");
    thead.append(head);
    const body = el("tbody");
    for (const c of attempt.claims) {
      const tr = el("tr");
      const decision = el("td");
      decision.append(el("span", "pill " + tone(c.tone), c.decision));
      tr.append(el("td", "", c.claim), decision, el("td", "", c.reason));
      body.append(tr);
    }
    table.append(thead, body);
    return table;
  }

  function step(s) {
    const box = el("div", "step step-" + s.kind);
    if (s.kind === "call") {
      const line = el("div", "call");
      line.append(el("span", "tag", "tool"), el("code", "name", s.name));
      box.append(line);
      if (s.text) box.append(el("pre", "arguments", s.text));
      if (s.result) {
        const result = el("div", "result");
        result.append(el("span", "tag", "result"), el("pre", "", s.result));
        box.append(result);
      }
    } else {
      box.append(el("span", "tag", s.name), el("div", "thought", s.text));
    }
    return box;
  }

  function turn(t) {
    const box = el("div", "turn");
    const user = el("div", "message user");
    user.append(el("div", "who", "user"), el("div", "said", t.user));
    box.append(user);
    if (t.steps.length) {
      const steps = el("div", "steps");
      for (const s of t.steps) steps.append(step(s));
      box.append(steps);
    }
    const agent = el("div", "message agent");
    const said = el("div", "said markdown");
    markup(t.agent, said);
    agent.append(el("div", "who", "agent"), said);
    box.append(agent, facts(t.facts, "small"));
    return box;
  }

  function attempt(a) {
    const details = el("details", "attempt " + tone(a.tone));
    const summary = el("summary");
    summary.append(el("span", "title", a.title), el("span", "pill " + tone(a.tone), a.outcome), facts(a.facts, "inline"));
    details.append(summary);
    let drawn = false;
    const fill = () => {
      if (drawn) return;
      drawn = true;
      const body = el("div", "body");
      if (a.detail) body.append(el("pre", "detail", a.detail));
      if (a.claims.length) body.append(claims(a));
      for (const t of a.turns) body.append(turn(t));
      if (!a.turns.length) body.append(el("p", "quiet", "No turn was played."));
      details.append(body);
    };
    details.addEventListener("toggle", () => details.open && fill());
    if (a.open) {
      details.open = true;
      fill();
    }
    return details;
  }

  function open(w, closed) {
    if (!dialog) {
      dialog = el("dialog", "window");
      dialog.setAttribute("aria-label", "scenario");
      dialog.addEventListener("click", (event) => event.target === dialog && dialog.close());
      document.body.append(dialog);
    }
    const top = el("header", "window-top");
    const shut = el("button", "close", "×");
    shut.type = "button";
    shut.setAttribute("aria-label", "close");
    shut.addEventListener("click", () => dialog.close());
    top.append(el("h2", "", w.title), shut);
    const inside = el("div", "window-body");
    inside.append(facts(w.facts));
    if (w.failing.length) {
      inside.append(el("h3", "", "Failing claims"));
      const list = el("div", "failing");
      for (const f of w.failing) {
        const item = el("div", "claim " + tone(f.tone));
        item.append(el("div", "text", f.label), el("div", "count", f.value));
        if (f.note) item.append(el("div", "reason", "Judge: " + f.note));
        list.append(item);
      }
      inside.append(list);
    }
    inside.append(el("h3", "", "Attempts"));
    if (!w.attempts.length) inside.append(el("p", "quiet", "No attempt of this scenario was recorded."));
    for (const a of w.attempts) inside.append(attempt(a));
    dialog.replaceChildren(top, inside);
    dialog.onclose = closed;
    if (!dialog.open) dialog.showModal();
    dialog.scrollTop = 0;
  }

  convy.hooks.open = open;
})();
