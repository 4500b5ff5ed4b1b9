"use strict";
/* convy's pages: everything is already on the page as HTML, and each scenario's window is a
   <details> that opens when the address names it (:target), so the page is whole with scripts
   blocked. This script only adds to it: the tables' filters (by text and status, kept in the
   address as #q=…&status=…), a whole row of the scenario table opening its window, and opening the
   window the address names in browsers that cannot by CSS. It reads only the page's own attributes,
   makes no node from HTML and computes nothing that is shown. */
(function () {
  function address() {
    return new URLSearchParams(window.location.hash.replace(/^#/, ""));
  }

  function remember(name, value) {
    const params = address();
    for (const key of [...params.keys()]) if (!/^(q|status)$/.test(key)) params.delete(key);
    if (value === "" || value === null || value === undefined) params.delete(name);
    else params.set(name, String(value));
    const text = params.toString();
    try {
      history.replaceState(null, "", text ? "#" + text : window.location.pathname + window.location.search);
    } catch (error) {
      /* some browsers refuse to change the address of a local file: the page works without it */
    }
  }

  function filters(section) {
    const text = section.querySelector(".toolbar input[type=search]");
    if (!text) return;
    const status = section.querySelector(".toolbar select");
    const first = section.hasAttribute("data-first");
    const rows = [...section.querySelectorAll("tbody tr:not(.empty)")];
    const empty = section.querySelector("tbody tr.empty");
    const apply = (remembered) => {
      const words = text.value.trim().toLowerCase();
      const wanted = status ? status.value : "";
      let shown = false;
      for (const row of rows) {
        const search = row.getAttribute("data-search") || "";
        const visible = (!words || search.includes(words)) && (!wanted || row.getAttribute("data-status") === wanted);
        row.hidden = !visible;
        shown = shown || visible;
      }
      if (empty) empty.hidden = shown;
      if (remembered && first) {
        remember("q", text.value);
        if (status) remember("status", status.value);
      }
    };
    if (first) {
      const params = address();
      text.value = params.get("q") || "";
      const kept = params.get("status");
      if (status && [...status.options].some((option) => option.value === kept)) status.value = kept;
    }
    text.addEventListener("input", () => apply(true));
    if (status) status.addEventListener("change", () => apply(true));
    text.hidden = false;
    if (status) status.hidden = false;
    apply(false);
  }

  function opening(row) {
    const anchor = row.getAttribute("data-anchor");
    if (!/^[a-z0-9-]+$/.test(anchor || "")) return;
    row.classList.add("opens");
    row.addEventListener("click", (event) => {
      if (event.target.closest("a, input, select, summary")) return;
      window.location.hash = anchor;
    });
  }

  function target() {
    const id = window.location.hash.replace(/^#/, "");
    if (!/^[a-z0-9-]+$/.test(id)) return;
    const node = document.getElementById(id);
    if (!node) return;
    for (const row of document.querySelectorAll("tr.target")) row.classList.remove("target");
    for (const row of document.querySelectorAll("tr[data-anchor]")) {
      if (row.getAttribute("data-anchor") === id) row.classList.add("target");
    }
    if (node.tagName === "DETAILS" && !node.open) {
      node.open = true;
      node.scrollIntoView({ block: "start" });
    }
  }

  function start() {
    for (const section of document.querySelectorAll("section.grid[data-filtered]")) filters(section);
    for (const row of document.querySelectorAll("tr[data-anchor]")) opening(row);
    target();
    window.addEventListener("hashchange", target);
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
