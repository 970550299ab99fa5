// The lobby: pick a game and its options, fill each seat, open the table (POST /api/tables).
"use strict";
let GAMES = [];
const $ = (id) => document.getElementById(id);

function seatCount() {
  const game = GAMES.find((g) => g.game === $("game").value);
  let n = game ? game.num_players : 2;
  try {
    const opts = JSON.parse($("options").value || "{}");
    if (Number.isInteger(opts.num_players)) n = opts.num_players;
  } catch (e) { /* the server explains bad JSON when the table is opened */ }
  return n;
}

function drawSeats() {
  const box = $("seats"), n = seatCount();
  const old = [...box.querySelectorAll("input")].map((i) => i.value);
  box.innerHTML = "<datalist id='agents'><option value='human'><option value='random'><option value='heuristic'>" +
    "<option value='pimc'><option value='model:'></datalist>";
  for (let i = 0; i < n; i++) {
    const label = document.createElement("label");
    label.textContent = `Seat ${i} `;
    const input = document.createElement("input");
    input.setAttribute("list", "agents");
    input.dataset.lobby = `seat-${i}`;
    input.value = old[i] || (i === 0 ? "human" : "heuristic");
    label.appendChild(input);
    box.appendChild(label);
  }
}

function showGame() {
  const game = GAMES.find((g) => g.game === $("game").value);
  $("allowed").textContent = game ? Object.entries(game.options).map(([k, v]) => `${k}: ${v}`).join("\n") : "";
  drawSeats();
}

async function create() {
  const out = $("created");
  let options;
  try { options = JSON.parse($("options").value || "{}"); } catch (e) {
    out.textContent = `the options are not JSON (${e.message}); write e.g. {"num_players": 3}`; return;
  }
  const seats = [...$("seats").querySelectorAll("input")].map((i) => i.value.trim());
  const seed = $("seed").value === "" ? null : Number($("seed").value);
  const body = { game: $("game").value, options, seats, study: $("study").checked, seed };
  const resp = await fetch("/api/tables", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
  const data = await resp.json();
  if (!resp.ok) { out.textContent = data.error; return; }
  out.innerHTML = "<p>Table open. Links (each holds its seat; give the human seats to their players):</p>";
  const list = document.createElement("ul");
  for (const s of data.seats) {
    const li = document.createElement("li");
    const a = document.createElement("a");
    a.href = s.url; a.textContent = `seat ${s.seat} (${s.kind})`; a.target = "_blank"; a.dataset.seatLink = s.seat;
    li.appendChild(a); list.appendChild(li);
  }
  out.appendChild(list);
  const go = document.createElement("a");
  go.href = data.url; go.textContent = "Sit down at seat 0 →"; go.dataset.lobby = "open";
  out.appendChild(go);
}

async function init() {
  GAMES = await (await fetch("/api/games")).json();
  const select = $("game");
  for (const g of GAMES) {
    const o = document.createElement("option"); o.value = g.game; o.textContent = g.game; select.appendChild(o);
  }
  select.addEventListener("change", showGame);
  $("options").addEventListener("input", drawSeats);
  $("create").addEventListener("click", create);
  showGame();
}
init();
