"""How wide each table of the pull-request comment is on a phone, measured in Chromium.

GitHub draws a markdown table as wide as its content (`display: block; width: max-content`) and
scrolls it sideways when it is wider than the column; on a phone the comment's column is about
350 px wide (a 400 px screen less the margins). This renders comment.md files as GitHub does
(markdown-it with tables and raw HTML, every `<details>` opened), styled with GitHub's markdown
rules (14 px system sans-serif, cells padded 6 px 13 px, code at 85% in a monospace font), and
prints every table's width, whether it sits in a collapsed section, and whether it fits 350 px:

    python benchmarks/comment_width.py results/*/*/comment.md
    python benchmarks/comment_width.py --examples        # plays the comments it measures

`--examples` plays, with the local CLI and a local agent of its own, a passing run, a run with
failed checks and no baseline, a regression from 3/3 to 0/3 on every scenario with long names, a
wrong answer path, a staged run and the demo, and measures their comments. Linux's fallback fonts
are wider than GitHub's, so the figures err on the wide side. It needs `chromium` on PATH.
"""

from __future__ import annotations

import argparse
import html
import json
import os
import subprocess
import sys
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from markdown_it import MarkdownIt

COLUMN = 350
STYLE = """
body { margin: 0; }
.markdown-body { width: COLUMNpx; font-family: -apple-system, BlinkMacSystemFont, "Segoe UI", "Noto Sans",
  Helvetica, Arial, sans-serif; font-size: 14px; line-height: 1.5; word-wrap: break-word; }
.markdown-body table { display: block; width: max-content; max-width: 100%; overflow: auto;
  border-spacing: 0; border-collapse: collapse; }
.markdown-body td, .markdown-body th { padding: 6px 13px; border: 1px solid #d1d9e0; }
.markdown-body th { font-weight: 600; }
.markdown-body code { font-family: ui-monospace, SFMono-Regular, "SF Mono", Menlo, Consolas,
  "Liberation Mono", monospace; font-size: 85%; padding: .2em .4em; white-space: break-spaces; }
""".replace("COLUMN", str(COLUMN))
MEASURE = """
<script>
const out = [];
document.querySelectorAll("details").forEach(d => d.open = true);
document.querySelectorAll(".comment").forEach(c => {
  c.querySelectorAll("table").forEach((t, i) => {
    t.style.maxWidth = "none";
    const head = [...t.querySelectorAll("th")].map(h => h.textContent.trim()).join(" | ");
    out.push({comment: c.dataset.name, table: i + 1, collapsed: !!t.closest("details"),
              width: Math.ceil(t.getBoundingClientRect().width), head: head});
  });
});
document.getElementById("out").textContent = JSON.stringify(out);
</script>
"""


def page(comments: dict[str, str]) -> str:
    render = MarkdownIt("commonmark", {"html": True}).enable("table")
    bodies = "".join(
        f'<div class="comment markdown-body" data-name="{html.escape(name)}">{render.render(text)}</div>'
        for name, text in comments.items()
    )
    head = f"<!doctype html><html><head><meta charset='utf-8'><style>{STYLE}</style></head>"
    return f"{head}<body>{bodies}<pre id='out'></pre>{MEASURE}</body></html>"


def measured(comments: dict[str, str]) -> list[dict[str, object]]:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "comments.html"
        path.write_text(page(comments), encoding="utf-8")
        done = subprocess.run(
            [
                "chromium",
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--window-size=400,2000",
                "--virtual-time-budget=2000",
                "--dump-dom",
                path.as_uri(),
            ],
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )
    start = done.stdout.index('<pre id="out">') + len('<pre id="out">')
    return json.loads(html.unescape(done.stdout[start : done.stdout.index("</pre>", start)]))


class Agent(BaseHTTPRequestHandler):
    """A local chat agent whose answer the example sets (`answer`), OpenAI-shaped or not (`shape`)."""

    answer = "Sure, I can refund that order now."
    shape = "openai"

    def log_message(self, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length", 0)))
        said = (
            {"reply": {"text": self.answer}}
            if self.shape == "reply"
            else {"choices": [{"message": {"role": "assistant", "content": self.answer}}]}
        )
        data = json.dumps(said).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def examples() -> dict[str, str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Agent)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_port}/chat"
    env = dict(os.environ, NO_COLOR="1")
    comments: dict[str, str] = {}
    root = Path(tempfile.mkdtemp())

    def convy(cwd: Path, *args: str) -> Path:
        subprocess.run(
            [sys.executable, "-m", "convy", *args], cwd=cwd, env=env, capture_output=True, text=True
        )
        return sorted(cwd.glob("results/*/*/run.json"), key=lambda p: p.parent.name)[-1].parent

    def project(name: str, count: int, long: bool) -> Path:
        folder = root / name
        (folder / "scenarios").mkdir(parents=True)
        for i in range(count):
            scenario = (
                f"refund-for-a-late-international-order-with-a-damaged-box-{i}" if long else f"refund-{i}"
            )
            (folder / "scenarios" / f"{scenario}.yaml").write_text(
                f"name: {scenario}\nturns: [My order is late, Refund it]\n"
                "checks: [{contains: refund}, {not_contains: hold}]\n"
            )
        return folder

    folder = project("pass", 4, False)
    Agent.answer, Agent.shape = "Sure, I can refund that order now.", "openai"
    base = convy(folder, "run", "--agent-url", url, "--repeat", "3")
    comments["passing, with a baseline"] = (
        convy(folder, "run", "--agent-url", url, "--repeat", "3", "--baseline", str(base)) / "comment.md"
    ).read_text()
    folder = project("nobase", 6, True)
    Agent.answer = "Please hold on, I will look."
    comments["failed checks, no baseline"] = (
        convy(folder, "run", "--agent-url", url, "--repeat", "3") / "comment.md"
    ).read_text()
    folder = project("regression", 8, True)
    Agent.answer = "Sure, I can refund that order now."
    base = convy(folder, "run", "--agent-url", url, "--repeat", "3")
    Agent.answer = "Please hold on."
    comments["regression 3/3 to 0/3, long names"] = (
        convy(folder, "run", "--agent-url", url, "--repeat", "3", "--baseline", str(base)) / "comment.md"
    ).read_text()
    comments["staged, regression"] = (
        convy(
            folder, "run", "--agent-url", url, "--repeat", "3", "--max-repeat", "9", "--baseline", str(base)
        )
        / "comment.md"
    ).read_text()
    Agent.shape = "reply"
    comments["wrong answer path"] = (
        convy(folder, "run", "--agent-url", url, "--agent-answer", "reply.message", "--baseline", str(base))
        / "comment.md"
    ).read_text()
    demo = root / "demo"
    demo.mkdir()
    first = convy(demo, "run", "--demo")
    comments["demo, with a baseline"] = (
        convy(demo, "run", "--demo", "--baseline", str(first)) / "comment.md"
    ).read_text()
    server.shutdown()
    return comments


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("comments", nargs="*", type=Path, help="comment.md files")
    parser.add_argument("--examples", action="store_true", help="play the example runs and measure theirs")
    parser.add_argument("--save", type=Path, help="write the examples' comments into this folder")
    arguments = parser.parse_args()
    comments = {str(path): path.read_text(encoding="utf-8") for path in arguments.comments}
    if arguments.examples:
        comments.update(examples())
    if arguments.save:
        arguments.save.mkdir(parents=True, exist_ok=True)
        for number, text in enumerate(comments.values()):
            (arguments.save / f"comment-{number + 1}.md").write_text(text, encoding="utf-8")
    rows = measured(comments)
    print(f"| comment | table | collapsed | width (px) | fits {COLUMN} px | header |")
    print("|---|---|---|---|---|---|")
    for row in rows:
        fits = "yes" if int(str(row["width"])) <= COLUMN else "**no**"
        collapsed = "yes" if row["collapsed"] else "no"
        cells = (row["comment"], row["table"], collapsed, row["width"], fits, row["head"])
        print("| " + " | ".join(str(cell) for cell in cells) + " |")
    widest = max((int(str(r["width"])) for r in rows), default=0)
    print(f"\n{len(rows)} tables in {len(comments)} comments; the widest {widest} px")


if __name__ == "__main__":
    main()
