"use strict";
/* convy's pages: draws the view the page carries in #data — header, headline, tiles, charts and
   tables with their filters — and keeps the filter and the open window in the address (#q=…&status=…
   &open=…). Every node is made with createElement and filled with textContent, never from HTML.
   Nothing here computes a number that is shown: each comes formatted in the data. */
const convy = (function () {
  const view = JSON.parse(document.getElementById("data").textContent);
  const SVG_NAMESPACE = "http://www.w3.org/2000/svg"; /* a namespace's name, never fetched */
  const hooks = { open: null, close: null };
  const filters = [];
  const anchors = {};

  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function picture(width, height) {
    return svg("svg", { viewBox: `0 0 ${width} ${height}`, width: width, height: height, role: "img" });
  }

  function svg(tag, attributes, text) {
    const node = document.createElementNS(SVG_NAMESPACE, tag);
    for (const [name, value] of Object.entries(attributes || {})) node.setAttribute(name, String(value));
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function tone(name) {
    return "tone-" + (name || "plain");
  }

  function cut(text, most) {
    return text.length > most ? text.slice(0, most - 1) + "…" : text;
  }

  function address() {
    return new URLSearchParams(window.location.hash.replace(/^#/, ""));
  }

  function remember(name, value) {
    const params = address();
    if (value === "" || value === null || value === undefined) params.delete(name);
    else params.set(name, String(value));
    const text = params.toString();
    try {
      history.replaceState(null, "", text ? "#" + text : window.location.pathname + window.location.search);
    } catch (error) {
      /* some browsers refuse to change the address of a local file: the page works without it */
    }
  }

  function header(page) {
    const top = el("header", "top");
    top.append(el("h1", "", view.title));
    if (view.facts.length) {
      const facts = el("ul", "facts");
      for (const fact of view.facts) facts.append(el("li", "", fact));
      top.append(facts);
    }
    if (view.links.length) {
      const links = el("nav", "links");
      for (const link of view.links) {
        const a = el("a", "", link.text);
        if (!/^[a-z][a-z0-9+.-]*:/i.test(link.href)) a.href = link.href;
        links.append(a);
      }
      top.append(links);
    }
    page.append(top);
    for (const notice of view.notices) page.append(el("p", "notice", notice));
  }

  function headline(page) {
    const h = view.headline;
    if (!h) return;
    const box = el("section", "headline " + tone(h.tone));
    box.setAttribute("aria-label", "gate");
    box.append(el("div", "verdict", h.verdict), el("div", "rule", "rule: " + h.rule), el("div", "explanation", h.explanation));
    page.append(box);
  }

  function tiles(page) {
    if (!view.tiles.length) return;
    const box = el("section", "tiles");
    for (const tile of view.tiles) {
      const t = el("div", "tile " + tone(tile.tone));
      t.append(el("div", "label", tile.label), el("div", "value", tile.value));
      if (tile.note) t.append(el("div", "note", tile.note));
      box.append(t);
    }
    page.append(box);
  }

  function titled(node, text) {
    node.append(svg("title", {}, text));
    return node;
  }

  function bars(chart) {
    const left = 170, width = 300, right = 190, bar = 12, gap = 4, pad = 10;
    const row = chart.series.length * (bar + gap) + pad;
    const height = chart.rows.length * row + 22;
    const box = picture(left + width + right, height);
    for (const tick of [0, 0.25, 0.5, 0.75, 1]) {
      const x = left + tick * width;
      box.append(svg("line", { class: "axis", x1: x, x2: x, y1: 0, y2: height - 18 }));
      box.append(svg("text", { x: x, y: height - 4, "text-anchor": "middle" }, Math.round(tick * 100) + "%"));
    }
    chart.rows.forEach((r, i) => {
      const top = i * row + pad / 2;
      const middle = top + (chart.series.length * (bar + gap)) / 2;
      box.append(titled(svg("text", { class: "label", x: left - 8, y: middle + 4, "text-anchor": "end" }, cut(r.label, 26)), r.label));
      r.bars.forEach((b, j) => {
        const y = top + j * (bar + gap);
        const group = titled(svg("g", {}), `${r.label} · ${chart.series[j]}: ${b.text}`);
        if (b.value !== null) {
          group.append(svg("rect", { class: "bar series-" + j, x: left, y: y, width: Math.max(1, b.value * width), height: bar, rx: 2 }));
          const low = left + b.low * width, high = left + b.high * width, c = y + bar / 2;
          group.append(svg("line", { class: "whisker", x1: low, x2: high, y1: c, y2: c }));
          group.append(svg("line", { class: "whisker", x1: low, x2: low, y1: y + 2, y2: y + bar - 2 }));
          group.append(svg("line", { class: "whisker", x1: high, x2: high, y1: y + 2, y2: y + bar - 2 }));
        }
        group.append(svg("text", { x: left + width + 8, y: y + bar - 2 }, b.text));
        box.append(group);
      });
    });
    return box;
  }

  function spreads(chart) {
    const left = 190, width = 300, right = 90, row = 24;
    const height = chart.rows.length * row + 24;
    const at = (value) => left + (value / chart.scale) * width;
    const box = picture(left + width + right, height);
    for (const tick of chart.ticks) {
      const x = at(tick.value);
      box.append(svg("line", { class: "axis", x1: x, x2: x, y1: 0, y2: height - 18 }));
      box.append(svg("text", { x: x, y: height - 4, "text-anchor": "middle" }, tick.text));
    }
    chart.rows.forEach((band, i) => {
      const y = i * row + row / 2;
      const group = titled(svg("g", {}), `${band.label}: ${band.text}`);
      group.append(svg("text", { class: "label", x: left - 8, y: y + 4, "text-anchor": "end" }, cut(band.label, 30)));
      if (band.median !== null) {
        group.append(svg("line", { class: "range", x1: at(band.least), x2: at(band.most), y1: y, y2: y }));
        group.append(svg("line", { class: "upper", x1: at(band.median), x2: at(band.p90), y1: y, y2: y }));
        group.append(svg("circle", { class: "median", cx: at(band.median), cy: y, r: 4.5 }));
      }
      group.append(svg("text", { x: left + width + 10, y: y + 4 }, band.value));
      box.append(group);
    });
    return box;
  }

  function trend(chart) {
    const left = 40, width = 660, top = 10, height = 150, bottom = 34;
    const points = chart.points;
    const step = points.length > 1 ? width / (points.length - 1) : 0;
    const x = (i) => left + (points.length > 1 ? i * step : width / 2);
    const y = (value) => top + (1 - value) * height;
    const box = picture(left + width + 20, top + height + bottom);
    for (const tick of [0, 0.5, 1]) {
      box.append(svg("line", { class: "axis", x1: left, x2: left + width, y1: y(tick), y2: y(tick) }));
      box.append(svg("text", { x: left - 6, y: y(tick) + 4, "text-anchor": "end" }, Math.round(tick * 100) + "%"));
    }
    const runs = [];
    let current = [];
    points.forEach((p, i) => {
      if (p.value === null) {
        if (current.length) runs.push(current);
        current = [];
      } else current.push([i, p]);
    });
    if (current.length) runs.push(current);
    for (const run of runs) {
      const upper = run.map(([i, p]) => `${x(i)},${y(p.high)}`);
      const lower = run.slice().reverse().map(([i, p]) => `${x(i)},${y(p.low)}`);
      box.append(svg("polygon", { class: "band", points: upper.concat(lower).join(" ") }));
      box.append(svg("polyline", { class: "line", points: run.map(([i, p]) => `${x(i)},${y(p.value)}`).join(" ") }));
    }
    const labelled = points.length <= 3 ? points.map((_, i) => i) : [0, points.length - 1];
    points.forEach((p, i) => {
      if (p.value !== null) {
        box.append(svg("line", { class: "interval", x1: x(i), x2: x(i), y1: y(p.low), y2: y(p.high) }));
        box.append(titled(svg("circle", { class: "point", cx: x(i), cy: y(p.value), r: 4 }), `${p.label}: ${p.text}`));
      }
      if (labelled.includes(i)) {
        const anchor = points.length === 1 ? "middle" : i === 0 ? "start" : i === points.length - 1 ? "end" : "middle";
        box.append(titled(svg("text", { x: x(i), y: top + height + 18, "text-anchor": anchor }, cut(p.label, 24)), `${p.label}: ${p.text}`));
      }
    });
    return box;
  }

  function charts(page) {
    if (!view.charts.length) return;
    const box = el("section", "charts");
    for (const chart of view.charts) {
      const figure = el("figure", "chart");
      figure.append(el("figcaption", "", chart.title));
      if (chart.type === "bars") {
        figure.append(bars(chart));
        if (chart.series.length > 1) {
          const legend = el("div", "legend");
          chart.series.forEach((name, j) => legend.append(el("span", "series-" + j, name)));
          figure.append(legend);
        }
      } else if (chart.type === "spreads") figure.append(spreads(chart));
      else if (chart.type === "trend") figure.append(trend(chart));
      box.append(figure);
    }
    page.append(box);
  }

  function cell(c, numeric) {
    const td = el("td", (numeric ? "numeric " : "") + tone(c.tone));
    if (c.link && !/^[a-z][a-z0-9+.-]*:/i.test(c.link)) {
      const a = el("a", "", c.text);
      a.href = c.link;
      td.append(a);
    } else if (c.badge) {
      td.append(el("span", "pill " + tone(c.tone), c.text));
    } else td.textContent = c.text;
    return td;
  }

  function grid(page, g, first) {
    const section = el("section", "grid");
    section.id = g.name;
    const bar = el("div", "toolbar");
    bar.append(el("h2", "", g.title));
    const table = el("table");
    const head = el("tr");
    g.columns.forEach((name, i) => head.append(el("th", g.numeric.includes(i) ? "numeric" : "", name)));
    const thead = el("thead");
    thead.append(head);
    table.append(thead);
    const body = el("tbody");
    table.append(body);
    const rows = g.rows.map((r) => {
      const tr = el("tr");
      if (r.anchor) tr.id = r.anchor;
      r.cells.forEach((c, i) => tr.append(cell(c, g.numeric.includes(i))));
      if (r.window !== null && hooks.open) {
        if (r.anchor) anchors[r.anchor] = r.window;
        tr.className = "opens";
        tr.tabIndex = 0;
        tr.setAttribute("role", "button");
        tr.setAttribute("aria-label", "open " + r.cells[0].text);
        tr.addEventListener("click", () => open(r.window));
        tr.addEventListener("keydown", (event) => {
          if (event.key === "Enter" || event.key === " ") {
            event.preventDefault();
            open(r.window);
          }
        });
      }
      body.append(tr);
      return { tr: tr, search: r.search.toLowerCase(), status: r.status };
    });
    const empty = el("tr", "empty");
    const message = el("td", "", g.empty);
    message.colSpan = g.columns.length;
    empty.append(message);
    empty.hidden = true;
    body.append(empty);
    if (g.filtered) {
      const text = el("input");
      text.type = "search";
      text.placeholder = "Filter " + g.title.toLowerCase() + "…";
      text.setAttribute("aria-label", "filter " + g.title.toLowerCase());
      const status = el("select");
      status.setAttribute("aria-label", "status");
      status.append(el("option", "", "every status"));
      status.options[0].value = "";
      for (const choice of g.statuses) {
        const option = el("option", "", choice.label);
        option.value = choice.value;
        status.append(option);
      }
      const apply = (remembered) => {
        const words = text.value.trim().toLowerCase();
        let shown = false;
        for (const r of rows) {
          const visible = (!words || r.search.includes(words)) && (!status.value || r.status === status.value);
          r.tr.hidden = !visible;
          shown = shown || visible;
        }
        empty.hidden = shown;
        if (remembered && first) {
          remember("q", text.value);
          remember("status", status.value);
        }
      };
      text.addEventListener("input", () => apply(true));
      status.addEventListener("change", () => apply(true));
      if (first) {
        const params = address();
        text.value = params.get("q") || "";
        if (g.statuses.some((c) => c.value === params.get("status"))) status.value = params.get("status");
      }
      bar.append(text);
      if (g.statuses.length) bar.append(status);
      apply(false);
      filters.push(apply);
    }
    const scroll = el("div", "scroll");
    scroll.append(table);
    section.append(bar, scroll);
    page.append(section);
  }

  function open(index) {
    if (!hooks.open || !Number.isInteger(index) || index < 0 || index >= view.windows.length) return;
    hooks.open(view.windows[index], () => remember("open", ""));
    remember("open", index);
  }

  function draw() {
    const page = document.getElementById("page");
    page.replaceChildren();
    document.title = view.title + " · convy";
    header(page);
    headline(page);
    tiles(page);
    charts(page);
    let first = true;
    for (const g of view.grids) {
      grid(page, g, first && g.filtered);
      first = first && !g.filtered;
    }
    const opened = address().get("open");
    if (opened !== null && /^[0-9]+$/.test(opened)) open(Number(opened));
    const target = window.location.hash.replace(/^#/, "");
    const row = /^[a-z0-9-]+$/.test(target) ? document.getElementById(target) : null;
    if (row) {
      row.classList.add("target");
      row.scrollIntoView({ block: "center" });
      if (Object.prototype.hasOwnProperty.call(anchors, target)) open(anchors[target]);
    }
  }

  document.addEventListener("DOMContentLoaded", draw);
  return { view: view, el: el, tone: tone, hooks: hooks };
})();
