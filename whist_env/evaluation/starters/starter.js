// A starter bot for whist_env's bot protocol, in JavaScript (node): one JSON line in, one action out.
//
// Check it:  whist-bot check "node starter.js" --game german_whist_v0
//
// The referee writes one JSON object per line on standard input; answer every "act" with one line holding an
// action id (a card c is action c = 13 * suit + rank, suits C D H S, ranks 2..A). Print debugging to standard
// error (console.error), never to standard output.
"use strict";
const readline = require("readline");

// A small seeded generator (mulberry32), so that the bot plays the same way on the same seed.
function generator(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const suit = (card) => Math.floor(card / 13);
const rank = (card) => card % 13;

// The card that wins the trick so far: the highest trump, else the highest card of the suit led.
function best(trick, trump) {
  let top = trick[0][1];
  for (const [, card] of trick.slice(1)) {
    const beats = suit(card) === suit(top) ? rank(card) > rank(top) : suit(card) === trump;
    if (beats) top = card;
  }
  return top;
}

// Your strategy goes here. This one wins a trick as cheaply as it can, else throws its lowest card.
function choose(view, legal, random) {
  const cards = legal.filter((a) => a < 52);
  if (cards.length < legal.length) return legal[Math.floor(random() * legal.length)]; // a bid, an exchange, ...
  const lowest = (list) => list.reduce((x, y) => (rank(y) < rank(x) ? y : x));
  if (view.trick.length === 0) return lowest(cards);
  const top = best(view.trick, view.trump);
  const winners = cards.filter((c) => best([[0, top], [1, c]], view.trump) === c);
  return winners.length > 0 ? lowest(winners) : lowest(cards);
}

let random = Math.random;
const lines = readline.createInterface({ input: process.stdin });
lines.on("line", (line) => {
  const message = JSON.parse(line);
  if (message.type === "hello") {
    random = generator(message.seed);
    process.stdout.write(JSON.stringify({ type: "hello", protocol: 1, name: "starter.js" }) + "\n");
  } else if (message.type === "act") {
    process.stdout.write(choose(message.view, message.view.legal, random) + "\n");
  } else if (message.type === "goodbye") {
    process.exit(0);
  }
  // "deal_end" and "match_end" tell how a deal and the match ended; a bot may ignore them (and any other type).
});
