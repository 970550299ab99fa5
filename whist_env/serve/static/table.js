// One seat at a table: draws the seat's message (what it may know) and sends its actions over the WebSocket.
// Every clickable action carries data-action="<action id>" and is disabled unless legal now; #phase carries
// data-phase (over at the end); a bot seat's box carries data-bot-connected ("true" while its program is connected).
// Nothing here knows more than the server sent this seat.
"use strict";
const params = new URLSearchParams(location.search);
const TOKEN = params.get("token") || "";
const TABLE_ID = location.pathname.split("/").pop();
const SUIT_NAMES = ["clubs", "diamonds", "hearts", "spades"];
const MASK_KEYS = new Set(["my_draws", "put_away"]);
const SKIP_KEYS = new Set(["bids", "initial_layout", "prizes", "exchange", "stock_size", "drawn_card"]);
const CARD_KEYS = new Set(["discarded_turn_up"]);
let ws = null, last = null, replayAt = {}, closedForGood = false;
const $ = (id) => document.getElementById(id);
const el = (tag, cls, text) => { const e = document.createElement(tag); if (cls) e.className = cls; if (text !== undefined) e.textContent = text; return e; };

function cardsOfMask(m) { const out = []; for (let c = 0; c < 52; c++) if (Math.floor(m / 2 ** c) % 2 === 1) out.push(c); return out; }
function suitText(s) { return s === null || s === undefined || s < 0 ? "no trump" : SUITS[s] + " " + SUIT_NAMES[s]; }
function seatName(msg, s) { return `seat ${s}` + (s === msg.you ? " (you)" : ` (${msg.table.seats[s]})`); }
function botConnected(msg, s) { const c = msg.table.connected; return c ? c[s] : null; }  // null: not a bot seat
function miniRow(cards, width) { const row = el("div", "cardrow"); for (const c of cards) row.appendChild(cardSVG(c, width || 30)); return row; }
function played(seatLabel, c, win) { const d = el("div", "played"); d.appendChild(cardSVG(c, 48)); d.appendChild(el("div", win ? "winner" : "", seatLabel)); return d; }

function connect() {
  const proto = location.protocol === "https:" ? "wss:" : "ws:";
  ws = new WebSocket(`${proto}//${location.host}/api/tables/${TABLE_ID}/ws?token=${encodeURIComponent(TOKEN)}`);
  ws.onmessage = (ev) => {
    const msg = JSON.parse(ev.data);
    if (msg.type === "error") { status(msg.message, false); if (last) render(last); return; }
    if (msg.type === "state") { last = msg; render(msg); }
  };
  ws.onclose = (ev) => {
    if (ev.code === 4404 || ev.code === 4410 || closedForGood) {
      closedForGood = true; setPhase("closed"); disableAll();
      status(ev.code === 4410 ? "this table was closed" : "this link holds no seat at an open table", false);
      return;
    }
    setTimeout(connect, 1000);
  };
}

function send(action) {
  disableAll();  // one click, one action: wait for the server's answer
  if (ws && ws.readyState === WebSocket.OPEN) { ws.send(JSON.stringify({ type: "act", action })); return; }
  fetch(`/api/tables/${TABLE_ID}/action`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ token: TOKEN, action }) })
    .then((r) => r.json()).then((m) => { if (m.error) { status(m.error, false); if (last) render(last); } else { last = m; render(m); } });
}

function disableAll() { for (const b of document.querySelectorAll("[data-action]")) b.disabled = true; }
function status(text, info) { const s = $("status"); s.textContent = text; s.className = info ? "info" : ""; }
function setPhase(p) { const e = $("phase"); e.dataset.phase = p; e.textContent = p; }

function render(msg) {
  const legal = new Map(msg.legal.map((a) => [a.action, a.label]));
  setPhase(msg.table.closed ? "closed" : msg.phase);
  $("title").textContent = `${msg.table.game} · ${seatName(msg, msg.you)}` + (msg.table.study ? " · open study table" : "");
  document.title = `whist-serve: ${msg.table.game}, seat ${msg.you}`;
  // facts
  const facts = $("facts"); facts.innerHTML = "";
  const fact = (k, v) => { const s = el("span"); s.append(k + " "); s.appendChild(el("b", "", String(v))); facts.appendChild(s); };
  fact("deal", msg.deal_index + 1); fact("dealer", `seat ${msg.dealer}`); fact("trump", suitText(msg.trump));
  const x = msg.extra || {};
  if (x.stock_size !== undefined) fact("stock", `${x.stock_size} cards`);
  if (x.exchange) {
    const word = (d) => (d === 0 ? "kept" : d === 1 ? "exchanged" : "undecided");
    fact("exchange", `you ${word(x.exchange[0])}, opponent ${word(x.exchange[1])}`);
  }
  for (const [k, v] of Object.entries(x)) {
    if (SKIP_KEYS.has(k) || MASK_KEYS.has(k)) continue;
    if (CARD_KEYS.has(k)) { if (v >= 0) fact(k.replace(/_/g, " "), cardName(v)); continue; }
    fact(k.replace(/_/g, " "), Array.isArray(v) ? v.join(" : ") : v);
  }
  fact("scores", msg.scores.join(" : "));
  // seats
  const seats = $("seats"); seats.innerHTML = "";
  for (let s = 0; s < msg.table.num_players; s++) {
    const box = el("div", "seat" + (s === msg.to_act ? " to-act" : "") + (s === msg.you ? " me" : ""));
    box.dataset.seat = s;
    box.appendChild(el("div", "", seatName(msg, s) + (s === msg.dealer ? " · dealer" : "")));
    const bot = botConnected(msg, s);
    if (bot !== null) {
      box.dataset.botConnected = String(bot);
      const words = bot ? "bot connected" : msg.phase === "over" ? "bot disconnected" : "bot not connected: run its whist-bot connect command";
      box.appendChild(el("div", bot ? "bot-on" : "bot-off", words));
    }
    let line = `${msg.hand_sizes[s]} cards · tricks ${msg.tricks_won[s]} · score ${msg.scores[s]}`;
    if (x.bids) line += ` · bid ${x.bids[s] < 0 ? "–" : x.bids[s]}`;
    box.appendChild(el("div", "", line));
    if (msg.known[s] && msg.known[s].length) { box.appendChild(el("div", "", "known cards:")); box.appendChild(miniRow(msg.known[s], 26)); }
    seats.appendChild(box);
  }
  // trick, last trick, face-up cards
  const trick = $("trick"); trick.innerHTML = "";
  for (const [s, c] of msg.trick) trick.appendChild(played(`seat ${s}`, c, false));
  const lt = $("last-trick"); lt.innerHTML = "";
  for (const [s, c] of msg.last_trick) lt.appendChild(played(`seat ${s}`, c, s === msg.last_winner));
  const tc = $("table-cards"); tc.innerHTML = "";
  if (msg.turn_up >= 0) {
    const title = msg.table.game.startsWith("german_whist") ? "Face-up stock card" : "Turn-up";
    tc.appendChild(el("h3", "", title)); tc.appendChild(cardSVG(msg.turn_up, 48));
  }
  if (x.drawn_card !== undefined && x.drawn_card !== null && x.drawn_card >= 0) {
    tc.appendChild(el("h3", "", "Drawn trump card")); tc.appendChild(cardSVG(x.drawn_card, 48));
  }
  if (x.stock_size) { const st = el("div", "", `stock: ${x.stock_size}`); st.prepend(cardSVG(-1, 30)); tc.appendChild(st); }
  for (const k of MASK_KEYS) if (x[k]) { tc.appendChild(el("div", "", k.replace(/_/g, " ") + ":")); tc.appendChild(miniRow(cardsOfMask(x[k]), 24)); }
  // calls (bids, keep / exchange): the legal ones
  const calls = $("calls"); calls.innerHTML = "";
  for (const [a, label] of legal) {
    if (a < 52) continue;
    const b = el("button", "call", label); b.dataset.action = a; b.addEventListener("click", () => send(a)); calls.appendChild(b);
  }
  // hand by suit, spades first, highest first
  const hand = $("hand"); hand.innerHTML = "";
  for (let s = 3; s >= 0; s--) {
    const row = el("div", "hand-row"); row.appendChild(el("span", "suit", SUITS[s]));
    for (const c of msg.hand.filter((c) => Math.floor(c / 13) === s).sort((a, b) => b - a)) {
      const b = el("button", "card"); b.dataset.action = c; b.title = cardName(c);
      b.disabled = !legal.has(c); b.appendChild(cardSVG(c, 52)); b.addEventListener("click", () => send(c));
      row.appendChild(b);
    }
    hand.appendChild(row);
  }
  if (msg.table.failure) status(msg.table.failure, false);
  else if (msg.table.closed) status("this table was closed", false);
  else if (msg.phase === "over") status(`game over · scores ${msg.scores.join(" : ")}`, true);
  else if (msg.to_act === msg.you) status(`your turn: ${msg.phase === "play" ? "play a card" : "choose"}`, true);
  else if (botConnected(msg, msg.to_act) === false) status(`waiting for ${seatName(msg, msg.to_act)}: its bot is not connected`, true);
  else status(`waiting for ${seatName(msg, msg.to_act)}`, true);
  renderKnows(msg); renderAgents(msg); renderDeals(msg);
}

function renderKnows(msg) { $("knows").textContent = msg.knows; }

function choiceBox(choice) {
  const box = el("div");
  box.appendChild(el("div", "", `seat ${choice.seat !== undefined ? choice.seat + " " : ""}${choice.agent} chose ${choice.label}`));
  const rows = choice.values || choice.probabilities;
  if (rows) {
    const t = el("table", "values");
    rows.forEach(([a, v], i) => {
      const name = a < 52 ? cardName(a) : (choice.labels ? choice.labels[i] : String(a));
      const tr = el("tr"); tr.appendChild(el("td", a === choice.action ? "winner" : "", name)); tr.appendChild(el("td", "", String(v))); t.appendChild(tr);
    });
    box.appendChild(t);
  }
  if (choice.note) box.appendChild(el("div", "hint", choice.note));
  return box;
}

function renderAgents(msg) {
  const p = $("panel-agents"); p.innerHTML = ""; p.appendChild(el("h3", "", "Agents"));
  if (!msg.table.study) { p.appendChild(el("p", "hint", "Not an open study table: each agent's hand and choices are shown when the deal ends (below).")); return; }
  for (const a of msg.agents || []) {
    p.appendChild(el("h4", "", `seat ${a.seat}: ${a.agent}`)); p.appendChild(miniRow(a.hand, 26));
    if (a.choice) p.appendChild(choiceBox({ ...a.choice, seat: a.seat }));
    const d = el("details"); d.appendChild(el("summary", "", "what it knows")); d.appendChild(el("pre", "", a.knows)); p.appendChild(d);
  }
}

function renderDeals(msg) {
  const p = $("panel-deals"); p.innerHTML = ""; p.appendChild(el("h3", "", "Finished deals"));
  if (msg.phase === "over") {  // the whole game's record (every card dealt): the server gives it only now
    const a = el("a", "", "download record (JSON)"); a.id = "record-link";
    a.href = `/api/tables/${TABLE_ID}/record?token=${encodeURIComponent(TOKEN)}`; a.download = `${msg.table.game}-${TABLE_ID}.json`;
    a.title = "every hand and action of this game: GameRecord.from_json(text).replay() rebuilds any position";
    p.appendChild(a);
  }
  if (!msg.deals.length) { p.appendChild(el("p", "hint", "At the end of a deal every hand as played and a replay of its tricks appear here.")); return; }
  msg.deals.slice().reverse().forEach((d, i) => {
    const box = el("details", "deal"); box.open = i === 0; box.dataset.deal = d.deal;
    box.appendChild(el("summary", "", `deal ${d.deal + 1} · dealer seat ${d.dealer} · trump ${suitText(d.trump)} · scores after ${d.scores.join(" : ")}`));
    d.hands.forEach((cards, s) => { box.appendChild(el("div", "", seatName(msg, s) + ":")); box.appendChild(miniRow(cards, 26)); });
    if (d.calls.length) box.appendChild(el("div", "", "calls: " + d.calls.map(([s, , label]) => `seat ${s} ${label}`).join(", ")));
    if (d.tricks.length) {
      const at = Math.min(replayAt[d.deal] ?? d.tricks.length - 1, d.tricks.length - 1);
      const rp = el("div", "replay"); rp.dataset.replay = d.deal;
      const show = el("div", "trick");
      const t = d.tricks[at];
      for (const [s, c] of t.cards) show.appendChild(played(`seat ${s}`, c, s === t.winner));
      const step = (k) => { replayAt[d.deal] = Math.max(0, Math.min(d.tricks.length - 1, at + k)); renderDeals(last); };
      const prev = el("button", "", "◀"); prev.addEventListener("click", () => step(-1)); prev.disabled = at === 0;
      const next = el("button", "", "▶"); next.addEventListener("click", () => step(1)); next.disabled = at === d.tricks.length - 1;
      rp.append(el("span", "", `trick ${at + 1} of ${d.tricks.length} `), prev, next);
      box.append(rp, show);
    }
    const agentChoices = d.choices.filter((c) => c.values || c.probabilities);
    if (agentChoices.length) {
      const ac = el("details"); ac.appendChild(el("summary", "", `agents' reasoning (${agentChoices.length} decisions)`));
      for (const c of agentChoices) ac.appendChild(choiceBox(c));
      box.appendChild(ac);
    }
    p.appendChild(box);
  });
}

for (const box of document.querySelectorAll("[data-panel]")) {
  box.addEventListener("change", () => $("panel-" + box.dataset.panel).classList.toggle("hidden", !box.checked));
}
connect();
