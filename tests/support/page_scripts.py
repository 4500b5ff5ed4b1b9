"""Scripts a test runs in the browser to measure a page."""

from __future__ import annotations

WIDEST = """(() => {
  const wide = [];
  for (const node of document.querySelectorAll('body *')) {
    if (!node.getClientRects().length) continue;
    const box = node.getBoundingClientRect();
    if (box.width > 0 && box.right > innerWidth + 0.5) wide.push(node.tagName + '.' + node.className);
  }
  return {
    page: document.documentElement.scrollWidth,
    tables: [...document.querySelectorAll('table')].filter(t => t.getClientRects().length)
      .map(t => Math.max(t.scrollWidth, t.getBoundingClientRect().width)),
    wide: wide.slice(0, 10),
  };
})()"""
