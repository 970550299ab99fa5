// SVG playing cards drawn from a card id (0..51: 13 * suit + rank; suits clubs, diamonds, hearts, spades).
"use strict";
const SUITS = ["♣", "♦", "♥", "♠"];
const RANKS = ["2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A"];
function cardName(c) { return RANKS[c % 13] + SUITS[Math.floor(c / 13)]; }
function cardSVG(c, width) {
  const w = width || 56, h = Math.round(w * 1.4);
  const ns = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(ns, "svg");
  svg.setAttribute("width", w); svg.setAttribute("height", h); svg.setAttribute("viewBox", "0 0 50 70");
  svg.setAttribute("role", "img");
  const add = (tag, attrs, text) => {
    const el = document.createElementNS(ns, tag);
    for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
    if (text !== undefined) el.textContent = text;
    svg.appendChild(el); return el;
  };
  if (c < 0) {
    svg.setAttribute("aria-label", "a face-down card");
    add("rect", { x: 1, y: 1, width: 48, height: 68, rx: 5, fill: "#234", stroke: "#fff", "stroke-width": 1.5 });
    add("rect", { x: 6, y: 6, width: 38, height: 58, rx: 3, fill: "none", stroke: "#8ab", "stroke-dasharray": "3 2" });
    return svg;
  }
  const suit = Math.floor(c / 13), red = suit === 1 || suit === 2, color = red ? "#c0142a" : "#111";
  svg.setAttribute("aria-label", cardName(c));
  add("rect", { x: 1, y: 1, width: 48, height: 68, rx: 5, fill: "#fff", stroke: "#333", "stroke-width": 1 });
  add("text", { x: 5, y: 15, "font-size": 13, "font-weight": "bold", fill: color, "font-family": "sans-serif" }, RANKS[c % 13]);
  add("text", { x: 5, y: 28, "font-size": 12, fill: color }, SUITS[suit]);
  add("text", { x: 25, y: 52, "font-size": 26, fill: color, "text-anchor": "middle" }, SUITS[suit]);
  return svg;
}
