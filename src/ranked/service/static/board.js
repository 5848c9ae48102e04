// A board's live page: the top 100 over the board's live channel (docs/live.md), window
// tabs, and a player search over the HTTP API. Reads with ?key= from this page's address,
// or without a key on a board open to everyone.
"use strict";
(function () {
  const params = new URLSearchParams(location.search);
  const key = params.get("key");
  const board = decodeURIComponent(location.pathname.split("/")[2] || "");
  const headers = key ? { Authorization: "Bearer " + key } : {};
  const base = "/v1/boards/" + encodeURIComponent(board);
  const $ = (id) => document.getElementById(id);
  const FINAL = new Set([4000, 4001, 4003, 4004]);
  let windowId = params.get("window"); // null: the board's current primary window
  let socket = null;
  let lastId = null;
  let epoch = null;
  let ranks = new Map(); // member -> [rank, score] as last shown
  let retries = 0;
  let searched = null;

  $("board-name").textContent = board;
  document.title = "ranked: " + board;
  if (key) $("home").href = "/?key=" + encodeURIComponent(key);

  function api(path) {
    return fetch(base + path, { headers }).then((answer) =>
      answer.ok ? answer.json() : Promise.reject(answer.status)
    );
  }

  function status(text, down) {
    const node = $("status");
    node.textContent = text;
    node.classList.toggle("down", Boolean(down));
  }

  // -- window tabs ---------------------------------------------------------------------

  function day(d) { return d.toISOString().slice(0, 10); }
  function isoWeek(now) {
    const t = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
    t.setUTCDate(t.getUTCDate() + 4 - (t.getUTCDay() || 7));
    const first = Date.UTC(t.getUTCFullYear(), 0, 1);
    const week = Math.ceil(((t - first) / 86400000 + 1) / 7);
    return "w" + t.getUTCFullYear() + "-W" + String(week).padStart(2, "0");
  }
  function currentTabs(settings) {
    const now = new Date();
    const tabs = [];
    for (const kind of settings.windows) {
      if (kind === "all") tabs.push(["all", "All time"]);
      else if (kind === "daily") tabs.push(["d" + day(now), "Today"]);
      else if (kind === "weekly") tabs.push([isoWeek(now), "This week"]);
      else if (kind === "monthly") tabs.push(["m" + day(now).slice(0, 7), "This month"]);
      else if (kind === "season") for (const s of settings.seasons) tabs.push(["s:" + s.name, s.name]);
    }
    return tabs;
  }

  function buildTabs(info, windows) {
    const holder = $("tabs");
    const tabs = currentTabs(info.settings).map(([id, label]) => [id, label, false]);
    for (const id of windows.archived) tabs.push([id, id, true]);
    const selected = windowId || windows.current;
    holder.replaceChildren();
    for (const [id, label, past] of tabs) {
      const button = document.createElement("button");
      button.type = "button";
      button.setAttribute("role", "tab");
      button.dataset.window = id;
      button.textContent = label;
      button.title = id;
      if (past) button.className = "past";
      button.addEventListener("click", () => select(id, true));
      holder.append(button);
    }
    holder.addEventListener("keydown", onTabKey);
    markTab(selected);
  }

  function markTab(id) {
    for (const button of $("tabs").querySelectorAll("button")) {
      const on = button.dataset.window === id;
      button.setAttribute("aria-selected", String(on));
      button.tabIndex = on ? 0 : -1;
    }
  }

  function onTabKey(event) {
    const buttons = Array.from($("tabs").querySelectorAll("button"));
    const at = buttons.indexOf(document.activeElement);
    if (at < 0) return;
    let next = null;
    if (event.key === "ArrowRight") next = (at + 1) % buttons.length;
    else if (event.key === "ArrowLeft") next = (at - 1 + buttons.length) % buttons.length;
    else if (event.key === "Home") next = 0;
    else if (event.key === "End") next = buttons.length - 1;
    if (next === null) return;
    event.preventDefault();
    buttons[next].focus();
    select(buttons[next].dataset.window, true);
  }

  function select(id, fromTab) {
    if (id === windowId && fromTab && socket) return;
    windowId = id;
    markTab(id);
    const url = new URL(location.href);
    url.searchParams.set("window", id);
    history.replaceState(null, "", url);
    ranks = new Map();
    lastId = null;
    connect();
    if (searched) find(searched);
  }

  // -- the live channel ----------------------------------------------------------------

  function connect() {
    if (socket) {
      socket.onclose = null;
      socket.close(1000);
    }
    const scheme = location.protocol === "https:" ? "wss://" : "ws://";
    const query = new URLSearchParams({ limit: "100" });
    if (windowId) query.set("window", windowId);
    if (key) query.set("key", key);
    if (lastId !== null) {
      query.set("after", String(lastId));
      query.set("epoch", epoch);
    }
    const ws = new WebSocket(scheme + location.host + base + "/live?" + query);
    socket = ws;
    ws.onopen = () => { retries = 0; };
    ws.onmessage = (message) => receive(JSON.parse(message.data));
    ws.onclose = (event) => {
      if (socket !== ws) return;
      socket = null;
      if (FINAL.has(event.code)) {
        status("closed: " + (event.reason || event.code), true);
        return;
      }
      retries += 1;
      const wait = Math.min(10000, 250 * 2 ** retries);
      status("disconnected; reconnecting in " + Math.round(wait / 1000) + " s", true);
      setTimeout(connect, wait);
    };
  }

  function receive(message) {
    if (message.type === "ping") return;
    if (message.type === "snapshot") ranks = message.reset ? new Map() : ranks;
    epoch = message.epoch;
    lastId = message.id;
    $("caption").textContent = "Top " + message.top.length + " · " + message.window;
    render(message.top, message.type === "update" || ranks.size > 0);
    const node = $("status");
    node.dataset.id = String(message.id);
    status("live · event " + message.id + " · " + new Date().toLocaleTimeString());
  }

  function render(top, highlight) {
    const rows = [];
    const seen = new Map();
    for (const entry of top) {
      const row = document.createElement("tr");
      row.dataset.member = entry.member;
      const before = ranks.get(entry.member);
      if (highlight) {
        if (!before) row.classList.add("new", "changed");
        else if (entry.rank < before[0]) row.classList.add("up", "changed");
        else if (entry.rank > before[0]) row.classList.add("down", "changed");
        else if (entry.score !== before[1]) row.classList.add("changed");
      }
      if (entry.member === searched) row.classList.add("me");
      for (const text of [entry.rank, entry.member, entry.score.toLocaleString()]) {
        const cell = document.createElement("td");
        cell.textContent = String(text);
        row.append(cell);
      }
      rows.push(row);
      seen.set(entry.member, [entry.rank, entry.score]);
    }
    ranks = seen;
    $("rows").replaceChildren(...rows);
  }

  // -- find a player -------------------------------------------------------------------

  function find(member) {
    searched = member;
    const where = windowId ? "window=" + encodeURIComponent(windowId) : "";
    const path = "/members/" + encodeURIComponent(member);
    const panel = $("found");
    panel.hidden = false;
    panel.textContent = "looking for " + member + "…";
    Promise.all([
      api(path + "?percentile=true" + (where ? "&" + where : "")),
      api(path + "/around?before=5&after=5" + (where ? "&" + where : "")),
    ])
      .then(([standing, around]) => {
        const title = document.createElement("p");
        title.id = "found-standing";
        title.textContent =
          standing.member + ": rank " + standing.rank + ", score " + standing.score.toLocaleString() +
          (standing.percentile !== undefined ? ", ahead of " + standing.percentile.toFixed(1) + "%" : "");
        const list = document.createElement("ol");
        list.className = "around";
        for (const entry of around.entries) {
          const item = document.createElement("li");
          item.value = entry.rank;
          item.textContent = entry.member + " · " + entry.score.toLocaleString();
          if (entry.member === standing.member) item.className = "me";
          list.append(item);
        }
        panel.replaceChildren(title, list);
        for (const row of $("rows").children) row.classList.toggle("me", row.dataset.member === member);
      })
      .catch((problem) => {
        panel.textContent = problem === 404 ? member + " is not on this board" : "search failed (" + problem + ")";
      });
  }

  $("search").addEventListener("submit", (event) => {
    event.preventDefault();
    const member = $("player").value.trim();
    if (member) find(member);
  });

  // -- start ---------------------------------------------------------------------------

  Promise.all([api(""), api("/windows")])
    .then(([info, windows]) => buildTabs(info, windows))
    .catch((problem) => status("cannot read the board (" + problem + ")", true));
  connect();
})();
