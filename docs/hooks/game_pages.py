"""MkDocs hook: one page per registered game, written at build time from the game's spec.

Nothing here is checked in as generated text: every build reads ``whist_env.game_ids()`` and each game's
``GameSpec``, module docstring (its spec page), option declarations, observation layout, spaces, a seeded text
render and its picture (an SVG of the same table, :func:`table_svg`), its view's extras as the bot protocol sends
them (:func:`bot_section`: the fields' declarations and comments) and its section of ``docs/rules.md``, so that
a page cannot drift from the code. A game added to the
registry gets a page and a place in the navigation (under "Games") without an edit here.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import io
import json
import re
import textwrap
import tokenize
from pathlib import Path
from typing import Any

import numpy as np
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files

import whist_env
from whist_env.cards import NUM_CARDS, RANKS, SUIT_SYMBOLS, cards_of, rank, suit
from whist_env.evaluation.protocol import ViewCodec, extra_schema, extras_class, extras_fields, schema
from whist_env.registry import get_spec
from whist_env.view import ViewExtras

GAMES_DIR = "games"
RENDER_STEPS = 9  # random legal actions before the text render, so that a trick is on the table
ROLE = re.compile(r":(?:class|func|meth|mod|attr|data|obj|exc):`~?([^`]+)`")
# a field comment's leading shape or mask note ("(2,) masks: ...", "(n_players, 52)", "mask: ..."): the JSON type
# column says it; a shape holds a number or ends in ",)", so that "(mine, theirs) ..." stays
SHAPE_NOTE = re.compile(r"^(?:\((?=[^)]*(?:\d|,\s*\)))\s*\w+\s*(?:,\s*\w+\s*)*,?\s*\)\s*)?(?:masks?:\s*)?")


def _game_ids() -> list[str]:
    return list(whist_env.game_ids())


def on_config(config: MkDocsConfig) -> MkDocsConfig:
    """Append a page per game to the navigation's "Games" section."""
    for item in config.nav or []:
        if isinstance(item, dict) and "Games" in item:
            item["Games"].extend({game_id: f"{GAMES_DIR}/{game_id}.md"} for game_id in _game_ids())
            break
    else:
        raise ValueError("mkdocs.yml's nav has no 'Games' section for docs/hooks/game_pages.py to fill")
    return config


def on_files(files: Files, config: MkDocsConfig) -> Files:
    """Add the generated pages: the games' overview and one page per game."""
    rules = (Path(config.docs_dir) / "rules.md").read_text(encoding="utf-8")
    files.append(File.generated(config, f"{GAMES_DIR}/index.md", content=games_index()))
    for game_id in _game_ids():
        files.append(File.generated(config, f"{GAMES_DIR}/{game_id}.md", content=game_page(game_id, rules)))
        files.append(File.generated(config, f"{GAMES_DIR}/{game_id}.svg", content=table_svg(game_id)))
    return files


def _markdown(docstring: str) -> str:
    """A docstring's reStructuredText roles as Markdown code (``:class:`~a.B``` -> ```B```)."""
    return ROLE.sub(lambda m: f"`{m.group(1).rsplit('.', 1)[-1]}`", docstring)


def _doc(game_id: str) -> tuple[str, str]:
    """The game module's docstring (its spec page): (its first line without the id, the rest)."""
    raw = type(whist_env.make(game_id, raw=True))
    first, _, rest = (raw.__doc__ or "").strip().partition("\n")
    title = first.split(":", 1)[1].strip() if first.startswith("``") and ":" in first else first
    return title, _markdown(rest.strip())


def games_index() -> str:
    """The overview: every game with its players, its rules section and its one-line description."""
    rows = ["| game | players | observation size | actions | what it is |", "|---|---|---|---|---|"]
    for game_id in _game_ids():
        env = whist_env.make(game_id, raw=True)
        title, _ = _doc(game_id)
        agent = env.possible_agents[0]
        rows.append(
            f"| [`{game_id}`]({game_id}.md) | {len(env.possible_agents)} | "
            f"{env.observation_space(agent)['observation'].shape[0]} | {env.action_space(agent).n} | {title} |"
        )
    return "\n".join(
        [
            "# The games",
            "",
            "One page per registered game, written when the site is built from the game's spec "
            "(`whist_env/games/<name>/spec.py`), its module docstring, its option declarations and its observation "
            "layout; the rules in full are in [Rules of the games](../rules.md). Sizes are at the default options.",
            "",
            *rows,
            "",
        ]
    )


def options_table(game_id: str) -> str:
    """The game's options: name, allowed values, default, meaning (from its config dataclass's declarations)."""
    config_cls = get_spec(game_id).rules_cls.config_cls
    rows = ["| option | allowed values | default | meaning |", "|---|---|---|---|"]
    for field in dataclasses.fields(config_cls):
        rows.append(
            f"| `{field.name}` | {_allowed(field.metadata)} | `{field.default!r}` | {field.metadata.get('doc', '')} |"
        )
    return "\n".join(rows)


def _allowed(meta: Any) -> str:
    """An option's allowed values in words, from what ``whist_env.options.option`` recorded."""
    if meta.get("choices") is not None:
        text = ", ".join(f"`{choice!r}`" for choice in meta["choices"])
    else:
        kinds = meta["kind"] if isinstance(meta["kind"], tuple) else (meta["kind"],)
        text = " or ".join(f"`{kind.__name__}`" for kind in kinds)
        low, high = meta.get("minimum"), meta.get("maximum")
        if low is not None or high is not None:
            text += f" from {low if low is not None else '-∞'} to {high if high is not None else '∞'}"
    return text + (", or `None`" if meta.get("optional") else "")


def spaces_section(game_id: str) -> str:
    """The spaces at the default options, and the observation sizes over the spec's option grid."""
    spec = get_spec(game_id)
    env = whist_env.make(game_id, raw=True)
    agent = env.possible_agents[0]
    obs_space = env.observation_space(agent)
    sizes = sorted({whist_env.make(game_id, raw=True, **options).encoder.size for options in spec.option_grid})
    lines = [
        f"- agents: {', '.join(f'`{a}`' for a in env.possible_agents)} (seats 0..{len(env.possible_agents) - 1})",
        f"- `observation_space(agent)`: `{obs_space!r}`",
        f"- `action_space(agent)`: `{env.action_space(agent)!r}`",
        f"- `state_space` (the full hidden state, for centralised critics): `{env.state_space!r}`",
        f"- observation sizes over the options the conformance tests run (`option_grid`): "
        f"{', '.join(str(s) for s in sizes)}",
        f"- PettingZoo: `whist_env.make({game_id!r})`, `whist_env.{game_id}.env()`, or, after `import whist_env`, "
        f"`pettingzoo.make('aec', {whist_env.gymnasium_id(game_id)!r})`",
        f"- Gymnasium (one learner, the other seats played inside): "
        f"`gymnasium.make({whist_env.gymnasium_id(game_id)!r}, opponents='heuristic')`; batched: "
        f"`gymnasium.make_vec({whist_env.gymnasium_id(game_id)!r}, num_envs=64)`",
    ]
    if spec.hidden_pieces:
        hidden = "; ".join(f"`{name}`: {doc}" for name, doc in spec.hidden_pieces)
        lines.append(f"- `state()` beyond the hands: {hidden}")
    return "\n".join(lines)


def _table(game_id: str) -> Any:
    """A seeded game's environment after :data:`RENDER_STEPS` random legal actions (a trick on the table)."""
    env = whist_env.make(game_id, render_mode="ansi")
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    for step, _agent in enumerate(env.agent_iter()):
        if step == RENDER_STEPS:
            break
        obs, _, termination, truncation, _ = env.last()
        env.step(None if termination or truncation else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    return env


def render_text(game_id: str) -> str:
    """The seeded table of :func:`_table`, as ``render_mode="ansi"`` prints it."""
    text: Any = _table(game_id).render()
    return str(text)


CARD_W, CARD_H, GAP = 30, 42, 4


def _card(x: int, y: int, card: int) -> str:
    """One card as SVG: a rounded white rectangle with its rank and suit (hearts and diamonds red)."""
    colour = "#c0142a" if suit(card) in (1, 2) else "#111"
    label = RANKS[rank(card)].replace("T", "10")
    return (
        f'<rect x="{x}" y="{y}" width="{CARD_W}" height="{CARD_H}" rx="4" fill="#fff" stroke="#888"/>'
        f'<text x="{x + CARD_W / 2}" y="{y + 17}" fill="{colour}" font-size="13" text-anchor="middle">{label}</text>'
        f'<text x="{x + CARD_W / 2}" y="{y + 35}" fill="{colour}" font-size="15" text-anchor="middle">'
        f"{SUIT_SYMBOLS[suit(card)]}</text>"
    )


def table_svg(game_id: str) -> str:
    """The table of :func:`render_text` drawn as an SVG picture: each seat's hand (spades first, highest first, as
    every screen shows hands), its tricks, the seat to act, the trump suit and the cards of the current trick."""
    env = _table(game_id)
    state = env.unwrapped.game_state
    names = env.unwrapped.possible_agents
    most = max(max(hand.bit_count() for hand in state.hands), 2 * len(state.trick), 8)
    width = 140 + most * (CARD_W + GAP)
    height = 44 + (len(state.hands) + 1) * (CARD_H + 14)
    trump = "none" if state.trump is None else SUIT_SYMBOLS[state.trump]
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif">',
        f'<rect width="{width}" height="{height}" rx="8" fill="#0b6b3a"/>',
        f'<text x="12" y="22" fill="#fff" font-size="14">{game_id} · trump {trump} · seeded deal, '
        f"{RENDER_STEPS} random actions in</text>",
    ]
    y = 36
    for seat, hand in enumerate(state.hands):
        marker = "▶ " if seat == state.to_act else ""
        parts.append(f'<text x="12" y="{y + 18}" fill="#fff" font-size="13">{marker}{names[seat]}</text>')
        parts.append(f'<text x="12" y="{y + 34}" fill="#cde" font-size="11">tricks {state.tricks_won[seat]}</text>')
        cards = sorted(cards_of(hand), key=lambda c: (-suit(c), -rank(c)))
        parts += [_card(130 + i * (CARD_W + GAP), y, c) for i, c in enumerate(cards)]
        y += CARD_H + 14
    parts.append(f'<text x="12" y="{y + 24}" fill="#fff" font-size="13">trick</text>')
    for i, (seat, card) in enumerate(state.trick):
        x = 130 + i * (CARD_W + 40)
        parts.append(_card(x, y, card))
        parts.append(f'<text x="{x + CARD_W + 3}" y="{y + 24}" fill="#cde" font-size="10">{names[seat]}</text>')
    parts.append("</svg>")
    return "\n".join(parts)


# --------------------------------------------------------------------------------------------- what a bot receives
def field_comments(extras: type[ViewExtras]) -> dict[str, str]:
    """What each field of an extras class means, in its author's words: the ``Attributes:`` section of a class's
    docstring (the common fields of :class:`ViewExtras`), and a field's comment in the class body (at the end of its
    line, else on the lines just above it), subclasses last so that their words win."""
    out: dict[str, str] = {}
    for klass in reversed(extras.__mro__):
        if not (isinstance(klass, type) and issubclass(klass, ViewExtras)):
            continue
        out.update(_attributes(klass.__doc__ or ""))
        try:
            source = textwrap.dedent(inspect.getsource(klass))
        except (OSError, TypeError):  # defined where there is no source (an interactive session)
            continue
        out.update(_body_comments(source))
    return out


def _attributes(docstring: str) -> dict[str, str]:
    """``name: meaning`` of a Google-style docstring's ``Attributes:`` section (continuation lines joined)."""
    section = re.search(r"^\s*Attributes:\s*\n((?:[ \t]+\S.*\n?)+)", docstring, flags=re.M)
    if section is None:
        return {}
    out: dict[str, str] = {}
    name = None
    for line in textwrap.dedent(section.group(1)).splitlines():
        item = re.match(r"(\w+):\s*(.*)", line)
        if item is not None and not line.startswith(" "):
            name = item.group(1)
            out[name] = item.group(2)
        elif name is not None:
            out[name] += " " + line.strip()
    return out


def _body_comments(source: str) -> dict[str, str]:
    """Each annotated field of the class in ``source`` with its comment (see :func:`field_comments`)."""
    comments: dict[int, str] = {}  # line number -> the comment on it
    own_line: set[int] = set()  # the lines that hold nothing but a comment
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            comments[token.start[0]] = token.string.lstrip("#").strip()
            if not token.line[: token.start[1]].strip():
                own_line.add(token.start[0])
    body = ast.parse(source).body[0]
    out: dict[str, str] = {}
    for node in getattr(body, "body", []):
        if not (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)):
            continue
        end = node.end_lineno or node.lineno
        if end in comments and end not in own_line:
            out[node.target.id] = comments[end]
            continue
        above, line = [], node.lineno - 1
        while line in own_line:
            above.insert(0, comments[line])
            line -= 1
        if above:
            out[node.target.id] = " ".join(above)
    return out


def json_type(schema: dict[str, Any]) -> str:
    """A field's JSON type in words, from its JSON Schema (:func:`~whist_env.evaluation.protocol.extra_schema`)."""
    if schema.get("$ref", "").endswith("/cards"):
        return "card list"
    if "anyOf" in schema:
        kinds = [s for s in schema["anyOf"] if s.get("type") != "null"]
        text = " or ".join(json_type(s) for s in kinds)
        return text + " or null" if len(kinds) < len(schema["anyOf"]) else text
    if schema.get("type") == "array":
        if "prefixItems" in schema:
            return "[" + ", ".join(json_type(s) for s in schema["prefixItems"]) + "]"
        return f"array of {json_type(schema.get('items', {}))}"
    names = {"integer": "int", "number": "number", "string": "string", "boolean": "bool"}
    return names.get(schema.get("type", ""), "any JSON value")


def bot_section(game_id: str) -> str:
    """What a bot of the bot protocol receives for this game: its ``view.extra`` fields (name, JSON type, meaning),
    an example, and the actions beyond the 52 cards."""
    spec = get_spec(game_id)
    extras = extras_class(spec.rules_cls)
    props = extra_schema(extras)["properties"]
    comments = field_comments(extras)
    rows = ["| field | JSON type | meaning |", "|---|---|---|"]
    for name, _ in extras_fields(extras):
        meaning = SHAPE_NOTE.sub("", comments.get(name, "")).replace("|", "\\|")
        meaning = re.sub(r"\bNone\b", "null", meaning)  # the JSON the bot reads
        rows.append(f"| `{name}` | {json_type(props[name])} | {_markdown(meaning)} |")
    own = inspect.cleandoc(extras.__doc__ or "") if extras is not ViewExtras else ""
    env = _table(game_id)
    state, game = env.unwrapped.game_state, env.unwrapped.game
    example = ViewCodec(game).to_json(game.view(state, state.to_act))["extra"]
    others = [f"`{a}` `{game.describe_action(a)}`" for a in range(NUM_CARDS, game.num_actions)]
    if len(others) > 4:
        others = [*others[:2], "…", others[-1]]
    actions = (
        f"Actions `0`..`51` play a card; the others (at the default options): {', '.join(others)}. An `act` "
        "message's `legal` list names each legal action with its label."
        if others
        else "Every action is a card: action `c` plays card `c`."
    )
    shipped = f"extra_{game_id}" in schema()["$defs"]  # the shipped schema knows the built-in games
    checked = (
        f"; the shipped JSON Schema `protocol.schema.json` checks them as `$defs/extra_{game_id}`" if shipped else ""
    )
    return "\n".join(
        [
            "A bot of the [bot protocol](../guide/protocol.md) receives each decision's view as JSON: the fields "
            "every game shares, and `view.extra`, this game's own fields, listed here (a set of cards is a list of "
            f"card ids, `13 * suit + rank`{checked}).",
            "",
            *([_markdown(own), ""] if own else []),
            "\n".join(rows),
            "",
            f"The `extra` of the seat to act at the table drawn above: `{json.dumps(example, ensure_ascii=False)}`",
            "",
            actions,
        ]
    )


def rules_section(game_id: str, rules: str) -> str:
    """The game's section of docs/rules.md (its heading names the id), headings one level down, or ''."""
    match = re.search(rf"^## (§\d+) `{re.escape(game_id)}`.*?(?=^## |\Z)", rules, flags=re.M | re.S)
    if match is None:
        return ""
    body = re.sub(r"^(#{2,5}) ", lambda m: "#" + m.group(1) + " ", match.group(0), flags=re.M)
    return body.replace("\n---\n", "\n")


def model_card(game_id: str) -> str:
    """The shipped network's model card, headings two levels down, or ''."""
    card = get_spec(game_id).model_card_file()
    if card is None or not card.is_file():
        return ""
    text = card.read_text(encoding="utf-8")
    return re.sub(r"^(#{1,4}) ", lambda m: "##" + m.group(1) + " ", text, flags=re.M)


def game_page(game_id: str, rules: str) -> str:
    """The whole page of one game."""
    spec = get_spec(game_id)
    title, doc = _doc(game_id)
    env = whist_env.make(game_id, raw=True)
    parts = [
        f"# `{game_id}`",
        "",
        f"*{title}*",
        "",
        '!!! note "Generated"',
        "    This page is written at build time from the game's spec, docstring and code "
        "(`docs/hooks/game_pages.py`); "
        f"`help(whist_env.{game_id})` prints the same overview in Python.",
        "",
        "## Overview",
        "",
        doc,
        "",
        "## Options",
        "",
        f"Constructor keyword arguments of `whist_env.make({game_id!r}, ...)` and of the module's `env()` / "
        "`raw_env()`, checked when the environment is built: a bad one raises `OptionError` naming the allowed "
        "values. Every environment also takes `render_mode` (`None`, `'ansi'`, `'human'`) and `render_seat`, and "
        "`env()` takes `illegal_reward` (default -1.0).",
        "",
        options_table(game_id),
        "",
        "## Spaces",
        "",
        "At the default options:",
        "",
        spaces_section(game_id),
        "",
        "## Observation layout",
        "",
        "The observation vector at the default options, piece by piece (`env.encoder.layout.doc_table()`; "
        "`env.describe(obs)` prints an observation back in words). Seat-indexed pieces are relative to the "
        "observer: `me` first, then clockwise.",
        "",
        env.encoder.layout.doc_table(),
        "",
        "## Rewards",
        "",
        *_paragraph(doc, "**Rewards"),
        f"The arena compares agents on: {spec.unit} (options `{dict(spec.single_deal)}`).",
        "",
        "## A table, rendered",
        "",
        f"`whist_env.make({game_id!r}, render_mode='ansi')` after `reset(seed=0)` and {RENDER_STEPS} random legal "
        "actions, drawn (this page's build draws it from the same state) and as the environment renders it. The "
        "environments render text (`render_mode='ansi'` returns it, `'human'` prints it); this render shows every "
        "hand, `render_seat=s` what seat `s` may see. The browser table of `whist-serve` is in "
        "[Play in the browser](../tutorials/play.md).",
        "",
        f"![{game_id}: a seeded table, every hand shown]({game_id}.svg)",
        "",
        "```text",
        render_text(game_id),
        "```",
        "",
        "## What a bot receives",
        "",
        bot_section(game_id),
        "",
    ]
    rules_text = rules_section(game_id, rules)
    if rules_text:
        parts += [
            "## Rules",
            "",
            "The game's section of [the rulebook](../rules.md), as the code cites it (`RULES.md §n`).",
            "",
            rules_text,
        ]
    card = model_card(game_id)
    if card:
        parts += [
            "## The shipped network",
            "",
            f"`make_agent('pretrained', {game_id!r})`; its model card (`{spec.pretrained.split(':')[0]}`):",
            "",
            card,
        ]
    return "\n".join(parts) + "\n"


def _paragraph(doc: str, start: str) -> list[str]:
    """The docstring's paragraph that starts with ``start``, as lines (none when it has none)."""
    for paragraph in doc.split("\n\n"):
        if paragraph.startswith(start):
            return [paragraph, ""]
    return []
