// A board's live page: the top 100 over the board's live channel (docs/live.md), window
// tabs, a player search (standing, around, history) and the window's score histogram
// over the HTTP API. Reads with ?key= from this page's address, or without a key on a
// board open to everyone. Charts are SVG built here: no library.
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
  // the live channels' own port, when the service has one (docs/live.md): cheaper for the
  // service; if it cannot be reached (a proxy in front, a firewall) the page falls back to
  // this page's own address for good
  const livePort = (document.querySelector('meta[name="ranked-live"]') || {}).content || "";
  let fastPort = location.protocol === "http:" && /^[0-9]+$/.test(livePort) ? livePort : "";
  let searched = null;
  let searchedScore = null; // the found player's score, marked in the histogram
  let histogram = null; // the last histogram answer
  let histogramTimer = null;
  let histogramAsked = 0; // answers to an older request are dropped
  let findAsked = 0; // the same for the player search
  const SVG = "http://www.w3.org/2000/svg";
  const HISTOGRAM_EVERY = 2000; // ms: at most one histogram read per this while updates arrive

  $("board-name").textContent = board;
  document.title = "ranked: " + board;
  if (key) $("home").href = "/?key=" + encodeURIComponent(key);

  function api(path) {
    return fetch(base + path, { headers }).then((answer) =>
      answer.ok ? answer.json() : Promise.reject(answer.status)
    );
  }

  function svg(name, attributes) {
    const node = document.createElementNS(SVG, name);
    for (const [attribute, value] of Object.entries(attributes)) node.setAttribute(attribute, String(value));
    return node;
  }

  function element(name, text, className) {
    const node = document.createElement(name);
    if (text !== undefined) node.textContent = text;
    if (className) node.className = className;
    return node;
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
    const host = fastPort ? location.hostname + ":" + fastPort : location.host;
    const ws = new WebSocket(scheme + host + base + "/live?" + query);
    let opened = false;
    socket = ws;
    ws.onopen = () => {
      retries = 0;
      opened = true;
      $("status").dataset.transport = fastPort ? "live-port" : "same-port";
    };
    ws.onmessage = (message) => receive(JSON.parse(message.data));
    ws.onclose = (event) => {
      if (socket !== ws) return;
      socket = null;
      if (fastPort && !opened) {
        fastPort = ""; // never reached: the same-port channel from now on
        connect();
        return;
      }
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
    refreshHistogram(message.type === "snapshot");
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

  // quiet: a refresh of the shown answer (no "looking for" in between)
  function find(member, quiet) {
    searched = member;
    const where = windowId ? "window=" + encodeURIComponent(windowId) : "";
    const path = "/members/" + encodeURIComponent(member);
    const panel = $("found");
    panel.hidden = false;
    if (!quiet) panel.textContent = "looking for " + member + "…";
    const asked = ++findAsked;
    Promise.all([
      api(path + "?percentile=true" + (where ? "&" + where : "")),
      api(path + "/around?before=5&after=5" + (where ? "&" + where : "")),
      api(path + "/history?limit=1000").catch(() => null), // no journal: no history
    ])
      .then(([standing, around, history]) => {
        if (asked !== findAsked) return;
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
        if (history) panel.append(historyBlock(history));
        for (const row of $("rows").children) row.classList.toggle("me", row.dataset.member === member);
        searchedScore = standing.score;
        if (histogram) drawHistogram(histogram);
      })
      .catch((problem) => {
        if (asked !== findAsked) return;
        searchedScore = null;
        if (histogram) drawHistogram(histogram);
        panel.textContent = problem === 404 ? member + " is not on this board" : "search failed (" + problem + ")";
      });
  }

  // -- the found player's history: a sparkline of the scores written, the last few ----

  const SHOWN = 30; // writes in the sparkline
  const LISTED = 5; // writes in the table, newest first

  function historyBlock(history) {
    const block = element("div", undefined, "history");
    block.id = "history";
    const writes = history.history.filter((item) => item.score !== null && item.score !== undefined);
    block.append(element("h3", "Score history"));
    if (!writes.length) {
      block.append(element("p", "no score written", "note"));
      return block;
    }
    const recent = writes.slice(-SHOWN);
    block.append(
      element("p", (recent.length < writes.length ? "last " + recent.length + " of " : "") +
        writes.length + (writes.length === 1 ? " write" : " writes") + " (scores as submitted)", "note"),
      sparkline(recent.map((item) => item.score))
    );
    const table = element("table", undefined, "writes");
    table.append(element("caption", "Latest writes"));
    const head = element("tr");
    for (const name of ["When", "Operation", "Score"]) {
      const cell = element("th", name);
      cell.scope = "col";
      head.append(cell);
    }
    table.append(element("thead"));
    table.tHead.append(head);
    const body = element("tbody");
    for (const item of writes.slice(-LISTED).reverse()) {
      const row = element("tr");
      row.append(
        element("td", new Date(item.at).toLocaleString()),
        element("td", item.operation),
        element("td", item.score.toLocaleString())
      );
      body.append(row);
    }
    table.append(body);
    block.append(table);
    return block;
  }

  function sparkline(values) {
    const width = 100, height = 30, pad = 3;
    const low = Math.min(...values), high = Math.max(...values);
    const x = (i) => (values.length === 1 ? 0 : (i * width) / (values.length - 1));
    const y = (v) => (high === low ? height / 2 : pad + (height - 2 * pad) * (1 - (v - low) / (high - low)));
    const points = values.map((v, i) => x(i).toFixed(2) + "," + y(v).toFixed(2));
    if (values.length === 1) points.push(width + "," + y(values[0]).toFixed(2));
    const chart = svg("svg", {
      viewBox: "0 0 " + width + " " + height,
      preserveAspectRatio: "none",
      class: "spark",
      role: "img",
      "aria-label": "scores written, oldest to newest: " + values.map((v) => v.toLocaleString()).join(", "),
    });
    chart.append(svg("polyline", { points: points.join(" "), "vector-effect": "non-scaling-stroke" }));
    return chart;
  }

  // -- the window's score histogram ----------------------------------------------------

  // Now (a new window, a snapshot), or once within HISTOGRAM_EVERY while updates arrive
  // (then the found player's standing is read again too).
  function refreshHistogram(now) {
    if (now) {
      clearTimeout(histogramTimer);
      histogramTimer = null;
      loadHistogram();
    } else if (histogramTimer === null) {
      histogramTimer = setTimeout(loadHistogram, HISTOGRAM_EVERY, true);
    }
  }

  function loadHistogram(fromTimer) {
    histogramTimer = null;
    if (fromTimer === true && searched) find(searched, true);
    const asked = ++histogramAsked;
    const where = windowId ? "&window=" + encodeURIComponent(windowId) : "";
    api("/histogram?buckets=20" + where)
      .then((found) => { if (asked === histogramAsked) drawHistogram(found); })
      .catch((problem) => {
        if (asked === histogramAsked) $("histogram-summary").textContent = "cannot read the distribution (" + problem + ")";
      });
  }

  function drawHistogram(found) {
    histogram = found;
    const holder = $("histogram");
    const summary = $("histogram-summary");
    summary.dataset.members = String(found.members);
    if (!found.members) {
      summary.textContent = "no scores in " + found.window + " yet";
      holder.replaceChildren();
      return;
    }
    summary.textContent = found.members.toLocaleString() + (found.members === 1 ? " player" : " players") +
      " in " + found.window + ", scores " + found.min.toLocaleString() + " to " + found.max.toLocaleString();
    const most = Math.max(...found.buckets.map((b) => b.count));
    const slot = 10, height = 100;
    const chart = svg("svg", {
      viewBox: "0 0 " + found.buckets.length * slot + " " + height,
      preserveAspectRatio: "none",
      class: "bars",
      role: "img",
      "aria-label": "players per score range: " +
        found.buckets.map((b) => b.low.toLocaleString() + " to " + b.high.toLocaleString() + ": " + b.count).join("; "),
    });
    found.buckets.forEach((bucket, i) => {
      const tall = bucket.count ? Math.max(1.5, (height * bucket.count) / most) : 0;
      const bar = svg("rect", { x: i * slot + 1, y: height - tall, width: slot - 2, height: tall, "data-count": bucket.count });
      const last = i === found.buckets.length - 1;
      if (searchedScore !== null && searchedScore >= bucket.low && (searchedScore < bucket.high || last)) {
        bar.classList.add("me");
      }
      const label = svg("title", {});
      label.textContent = bucket.low.toLocaleString() + " to " + bucket.high.toLocaleString() + ": " +
        bucket.count.toLocaleString() + (bucket.count === 1 ? " player" : " players");
      bar.append(label);
      chart.append(bar);
    });
    chart.append(svg("line", { x1: 0, y1: height, x2: found.buckets.length * slot, y2: height, "vector-effect": "non-scaling-stroke" }));
    const axis = element("p", undefined, "axis");
    axis.setAttribute("aria-hidden", "true");
    axis.append(element("span", found.min.toLocaleString()), element("span", found.max.toLocaleString()));
    holder.replaceChildren(chart, axis);
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
