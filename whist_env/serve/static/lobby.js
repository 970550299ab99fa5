// The lobby: a form built from GET /api/games (each option's kind, allowed values, default and description; the agents
// offered for a seat) that opens a table (POST /api/tables) and then gives each human seat's link to share, and each
// bot seat's command to connect a program to it (whist-bot connect).
// The server checks everything again: the form only makes a good table easy to ask for.
//
// Hooks for a course's own tests: [data-lobby=game] the game; [data-option=<name>] each option's control (a <select>
// for a choice or an optional bool, a checkbox for a bool, a number input for an int; disabled while a pretrained
// seat holds it); [data-lobby=seat-<i>] seat i's <select> (human, random, heuristic, pimc, pretrained, bot, other) and
// [data-lobby=seat-<i>-spec] its agent spec when "other"; [data-lobby=pretrained-note] says what a pretrained seat
// sets; [data-lobby=study], [data-lobby=seed], [data-lobby=create]; [data-lobby=error] the server's refusal. Once the
// table is open: [data-share=<seat>] each human seat's link (a read-only input) and [data-copy=<seat>] its copy
// button, [data-bot-command=<seat>] each bot seat's command (a read-only input) and [data-copy-command=<seat>] its copy
// button, a[data-seat-link=<seat>] each agent or bot seat's link, and a[data-lobby=open] your own seat (the first
// human seat).
"use strict";
const OTHER = "other";
let GAMES = [], AGENTS = {};
const $ = (id) => document.getElementById(id);
const el = (tag, props, text) => {
  const e = Object.assign(document.createElement(tag), props || {});
  if (text !== undefined) e.textContent = text;
  return e;
};

const game = () => GAMES.find((g) => g.game === $("game").value);
const control = (name) => $("options").querySelector(`[data-option="${name}"]`);
const seatPickers = () => [...$("seats").querySelectorAll("select")];
const seatSpec = (i) => $("seats").querySelector(`[data-lobby="seat-${i}-spec"]`);

// ------------------------------------------------------------------ options
function optionControl(o) {
  let input;
  if (o.kind === "choice" || (o.kind === "bool" && o.optional)) {
    input = el("select");
    if (o.optional) input.appendChild(el("option", { value: "" }, "default"));
    for (const v of o.kind === "choice" ? o.choices : [true, false]) {
      input.appendChild(el("option", { value: String(v) }, String(v) + (v === o.default ? " (default)" : "")));
    }
  } else if (o.kind === "bool") {
    input = el("input", { type: "checkbox" });
  } else {
    input = el("input", { type: o.kind === "str" ? "text" : "number", step: o.kind === "int" ? "1" : "any" });
    if (o.minimum !== null) input.min = o.minimum;
    if (o.maximum !== null) input.max = o.maximum;
    if (o.optional) input.placeholder = "default"; else input.required = true;
  }
  input.dataset.option = o.name;
  return input;
}

function setOption(o, value) {
  const c = control(o.name);
  if (c.type === "checkbox") c.checked = Boolean(value);
  else c.value = value === null || value === undefined ? "" : String(value);
}

function readOption(o) {
  const c = control(o.name);
  if (c.type === "checkbox") return c.checked;
  if (c.value === "") return null;
  if (o.kind === "choice") return o.choices.find((v) => String(v) === c.value);
  if (o.kind === "bool") return c.value === "true";
  if (o.kind === "int" || o.kind === "float") return Number(c.value);
  return c.value;
}

function drawOptions() {
  const box = $("options");
  box.replaceChildren(el("legend", {}, "Options"));
  for (const o of game().option_info) {
    const label = el("label", { className: "option", title: o.doc });
    const range = o.kind === "int" && o.minimum !== null ? ` (${o.minimum}–${o.maximum}${o.optional ? ", or empty: default" : ""})` : "";
    label.append(el("span", { className: "name" }, o.name), " ", optionControl(o), el("small", {}, o.doc + range));
    box.appendChild(label);
    setOption(o, o.default);
  }
  const players = game().players_option;
  if (players) control(players).addEventListener("input", drawSeats);
}

// ------------------------------------------------------------------ seats
function seatCount() {
  const g = game();
  const o = g.option_info.find((x) => x.name === g.players_option);
  if (o) {
    const n = readOption(o);
    if (Number.isInteger(n) && n >= o.minimum && n <= o.maximum) return n;
  }
  return g.num_players;
}

function drawSeats() {
  const g = game(), box = $("seats"), n = seatCount();
  const old = seatPickers().map((s, i) => [s.value, seatSpec(i).value]);
  box.replaceChildren(el("legend", {}, "Seats"));
  for (let i = 0; i < n; i++) {
    const label = el("label", { className: "seat-pick" }, `Seat ${i} `);
    const pick = el("select");
    pick.dataset.lobby = `seat-${i}`;
    for (const name of [...g.seat_choices, OTHER]) {
      const text = name === "pretrained" ? "pretrained (one deal only)" : name === OTHER ? "other: an agent spec…"
        : name === "bot" ? "bot (your own program)" : name;
      pick.appendChild(el("option", { value: name, title: AGENTS[name] || "" }, text));
    }
    const spec = el("input", { type: "text", placeholder: "agent spec, e.g. pimc:samples=10", hidden: true });
    spec.dataset.lobby = `seat-${i}-spec`;
    spec.setAttribute("aria-label", `seat ${i}: agent spec`);
    const [was, wasSpec] = old[i] || [];
    pick.value = was && [...g.seat_choices, OTHER].includes(was) ? was : i === 0 ? "human" : "heuristic";
    spec.value = wasSpec || "";
    const about = el("small", {});
    const show = () => {
      spec.required = pick.value === OTHER;  // the browser asks for it before sending
      spec.hidden = pick.value !== OTHER;
      about.textContent = pick.value === OTHER ? "any agent spec (docs/agents.md); the server checks it" : AGENTS[pick.value] || "";
    };
    pick.addEventListener("change", () => { show(); applyPretrained(); });
    show();
    label.append(pick, " ", spec, about);
    box.appendChild(label);
  }
  applyPretrained();
}

// A pretrained seat plays only the options its network was trained with: set them and hold them while one is picked.
function applyPretrained() {
  const g = game(), note = $("pretrained-note"), trained = g.pretrained_options;
  const seats = seatPickers().filter((s) => s.value === "pretrained").map((s) => s.dataset.lobby.slice(5));
  const locked = seats.length > 0 && trained !== null;
  for (const o of g.option_info) {
    const hold = locked && o.name in trained;
    if (hold) setOption(o, trained[o.name]);
    control(o.name).disabled = hold;
  }
  note.hidden = !locked;
  if (locked) {
    const set = g.option_info
      .filter((o) => o.name in trained && (trained[o.name] !== o.default || o.name === g.players_option))
      .map((o) => `${o.name} = ${trained[o.name]}`);
    note.textContent = `${seats.length > 1 ? "Seats" : "Seat"} ${seats.join(", ")} ${seats.length > 1 ? "play" : "plays"} ` +
      `pretrained: the network shipped for ${g.game} plays only the options it was trained with (one deal: ` +
      `${set.join(", ")}; every other option at its default). The options are set to those and locked; pick ` +
      "another agent for the seat to change them.";
  }
  if (seatCount() !== seatPickers().length) drawSeats();  // the pretrained options set the number of players
}

function showGame() {
  drawOptions();
  drawSeats();
}

// ------------------------------------------------------------------ opening the table
async function create(ev) {
  ev.preventDefault();
  const g = game(), error = $("error");
  const options = {};
  for (const o of g.option_info) {
    const v = readOption(o);
    if (v !== o.default) options[o.name] = v;  // the server fills in the defaults
  }
  const seats = seatPickers().map((s, i) => (s.value === OTHER ? seatSpec(i).value.trim() : s.value));
  const seed = $("seed").value === "" ? null : Number($("seed").value);
  const body = { game: g.game, options, seats, study: $("study").checked, seed };
  error.textContent = "";
  $("create").disabled = true;
  let resp, data;
  try {
    resp = await fetch("/api/tables", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
    data = await resp.json();
  } catch (e) {
    error.textContent = `the server did not answer (${e.message}); is whist-serve still running?`;
    return;
  } finally {
    $("create").disabled = false;
  }
  if (!resp.ok) { error.textContent = data.error; return; }
  showCreated(data, g.game);
}

async function copy(input, button) {
  let ok = false;
  try {
    await navigator.clipboard.writeText(input.value);  // only on https or localhost
    ok = true;
  } catch (e) {
    input.focus(); input.select();
    try { ok = document.execCommand("copy"); } catch (e2) { ok = false; }
  }
  button.textContent = ok ? "Copied ✓" : "Press Ctrl+C to copy";
  if (!ok) { input.focus(); input.select(); }
}

function showCreated(data, gameId) {
  const box = $("created");
  box.replaceChildren(el("h2", {}, `Table open: ${gameId}`));
  box.hidden = false;
  const humans = data.seats.filter((s) => s.kind === "human");
  const mine = humans.length ? humans[0] : data.seats[0];
  if (humans.length) {
    box.appendChild(el("p", {}, "Each link holds its seat's secret token: send it to that seat's player only " +
      "(copy the links before you sit down)."));
    const list = el("ul", { className: "links" });
    for (const s of humans) {
      const input = el("input", { readOnly: true, value: new URL(s.url, location.href).href, size: 60 });
      input.dataset.share = s.seat;
      input.addEventListener("focus", () => input.select());
      const label = el("label", {}, `Seat ${s.seat}${s === mine ? " (yours)" : ""} `);
      label.appendChild(input);
      const button = el("button", { type: "button" }, "Copy link");
      button.dataset.copy = s.seat;
      button.setAttribute("aria-label", `copy the link of seat ${s.seat}`);
      button.addEventListener("click", () => copy(input, button));
      const li = el("li");
      li.append(label, " ", button);
      list.appendChild(li);
    }
    box.appendChild(list);
  }
  const bots = data.seats.filter((s) => s.kind === "bot");
  if (bots.length) {
    box.appendChild(el("p", {}, "A bot seat is played by your own program (any language that speaks the bot " +
      "protocol on standard input and output). Run its command where the program is; it holds the seat's secret token."));
    const list = el("ul", { className: "links" });
    for (const s of bots) {
      const link = new URL(s.url, location.href);
      const token = link.searchParams.get("token");
      link.search = "";
      const input = el("input", { readOnly: true, size: 60,
        value: `whist-bot connect ${link.href} --token ${token} -- python mybot.py` });
      input.dataset.botCommand = s.seat;
      input.addEventListener("focus", () => input.select());
      const label = el("label", {}, `Seat ${s.seat} (bot) `);
      label.appendChild(input);
      const button = el("button", { type: "button" }, "Copy command");
      button.dataset.copyCommand = s.seat;
      button.setAttribute("aria-label", `copy the command of seat ${s.seat}`);
      button.addEventListener("click", () => copy(input, button));
      const li = el("li");
      li.append(label, " ", button);
      list.appendChild(li);
    }
    box.appendChild(list);
  }
  const go = el("a", { href: mine.url, className: "go" },
    humans.length ? `Sit down at seat ${mine.seat} →` : `Watch the agents play (as seat ${mine.seat}) →`);
  go.dataset.lobby = "open";
  box.appendChild(go);
  const agents = data.seats.filter((s) => s.kind !== "human");
  if (agents.length) {
    const more = el("details");
    more.appendChild(el("summary", {}, "agent and bot seats' links (watch the table as that seat)"));
    const list = el("ul");
    for (const s of agents) {
      const a = el("a", { href: s.url, target: "_blank" }, `seat ${s.seat} (${s.kind})`);
      a.dataset.seatLink = s.seat;
      const li = el("li");
      li.appendChild(a);
      list.appendChild(li);
    }
    more.appendChild(list);
    box.appendChild(more);
  }
  box.scrollIntoView({ block: "nearest" });
}

async function init() {
  const [games, agents] = await Promise.all([fetch("/api/games"), fetch("/api/agents")].map((p) => p.then((r) => r.json())));
  GAMES = games;
  for (const a of agents.agents) AGENTS[a.name] = a.doc;
  const select = $("game");
  for (const g of GAMES) select.appendChild(el("option", { value: g.game }, g.game));
  select.addEventListener("change", showGame);
  $("new-table").addEventListener("submit", create);
  showGame();
}
init();
