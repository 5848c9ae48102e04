// The list of boards: with ?key= in the address, every board (GET /v1/boards);
// without, the public boards the server put in the page.
"use strict";
(function () {
  const key = new URLSearchParams(location.search).get("key");
  if (!key) return;
  const list = document.getElementById("boards");
  fetch("/v1/boards", { headers: { Authorization: "Bearer " + key } })
    .then((answer) => (answer.ok ? answer.json() : Promise.reject(answer.status)))
    .then((found) => {
      list.replaceChildren();
      for (const info of found.boards) {
        const item = document.createElement("li");
        const link = document.createElement("a");
        link.href = "/boards/" + encodeURIComponent(info.board) + "?key=" + encodeURIComponent(key);
        link.textContent = info.board;
        item.append(link, " ", info.members + " members");
        list.append(item);
      }
      document.getElementById("note").textContent = "Every board (read with your key).";
    })
    .catch((status) => {
      document.getElementById("note").textContent = "The key was refused (" + status + ").";
    });
})();
