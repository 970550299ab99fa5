"""End to end: whole games of every game played by clicking in the system chromium (Playwright).

Each test saves a screenshot of its table under pytest's tmp dir; with ``WHIST_SERVE_SCREENSHOT=<path>`` set, the
four-human classic whist table's screenshot is copied there too (that is how ``docs/img/whist_serve.png`` is made).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
STARTER = ROOT / "whist_env" / "evaluation" / "starters" / "starter.py"
ENABLED = "[data-action]:not([disabled])"
OVER = '#phase[data-phase="over"]'


def _open(base: str, **body: Any) -> dict[str, Any]:
    response = httpx.post(base + "/api/tables", json=body, timeout=30)
    assert response.status_code == 200, response.text
    return response.json()


def _enabled(page: Any) -> list[int]:
    return [int(a) for a in page.locator(ENABLED).evaluate_all("els => els.map(e => e.dataset.action)")]


def _play(pages: list[Any], seed: int, base: str = "", made: dict[str, Any] | None = None, pause: Any = None) -> int:
    """Click a random enabled action on whichever page has one until every page shows the phase ``over``.
    On the first decision of each page, the enabled elements are exactly the seat's legal actions; ``pause(clicks, i)``
    is called before each click on page ``i``."""
    rng = np.random.default_rng(seed)
    clicks, checked = 0, set()
    while not all(p.locator(OVER).count() for p in pages):
        acted = False
        for i, page in enumerate(pages):
            if not page.locator(ENABLED).count():
                continue
            if i not in checked and made is not None:
                token = made["seats"][i]["url"].split("token=")[1]
                view = httpx.get(f"{base}/api/tables/{made['table_id']}/view", params={"token": token}).json()
                assert sorted(_enabled(page)) == sorted(a["action"] for a in view["legal"])
                assert page.locator("[data-action][disabled]").count() + len(_enabled(page)) >= len(view["hand"])
                checked.add(i)
            if pause is not None:
                pause(clicks, i)
            buttons = page.locator(ENABLED)
            buttons.nth(int(rng.integers(buttons.count()))).click()
            clicks += 1
            acted = True
        if not acted:
            if len(pages) == 1:
                pages[0].wait_for_selector(f"{OVER}, {ENABLED}", timeout=60_000)
            else:
                pages[0].wait_for_timeout(25)
        assert clicks < 2000, "the game did not end"
    return clicks


def _check_deal_end(page: Any, deals: int, num_players: int) -> None:
    """The finished deals are listed, the latest open with every hand as played and a working trick replay."""
    assert page.locator("#panel-deals details.deal").count() == deals
    latest = page.locator("#panel-deals details.deal").first
    replay = latest.locator(".replay")
    text = replay.inner_text()
    assert text.startswith("trick ") and " of " in text
    last, total = (int(x) for x in text.split()[1:4:2])
    assert last == total
    replay.locator("button", has_text="◀").click()
    assert (
        page.locator("#panel-deals details.deal")
        .first.locator(".replay")
        .inner_text()
        .startswith(f"trick {total - 1} of")
    )
    shown = page.locator("#panel-deals details.deal").first.locator(".trick svg").count()
    assert shown == num_players


def _shot(page: Any, directory: Path, name: str) -> Path:
    path = directory / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    assert path.stat().st_size > 10_000
    return path


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("whist_serve_screens")


def _view(base: str, url: str) -> dict[str, Any]:
    """The view of the seat whose link (a full URL or the path the API gives) is ``url``."""
    table_id, token = url.split("/table/")[1].split("?token=")
    return httpx.get(f"{base}/api/tables/{table_id}/view", params={"token": token}).json()


@pytest.mark.slow
def test_lobby_opens_a_humbug_table_played_to_the_end(live_server: tuple[str, Any], browser: Any, shots: Path) -> None:
    base, _ = live_server
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(base + "/")
    page.select_option("[data-lobby=game]", "humbug_v0")
    assert page.locator("select[data-lobby^=seat-]").count() == 2
    assert page.locator("[data-option=mode]").input_value() == "hidden_hand"  # the default, preselected
    assert page.locator("[data-option=num_deals]").get_attribute("min") == "1"
    page.select_option("[data-option=mode]", "open_table")
    page.select_option("[data-lobby=seat-1]", "heuristic")
    page.fill("[data-lobby=seed]", "3")
    page.click("[data-lobby=create]")
    page.wait_for_selector("[data-lobby=open]")
    assert page.locator("[data-share]").count() == 1  # one human seat, one link to share
    view = _view(base, page.locator("[data-share='0']").input_value())
    assert view["table"]["options"] == {"mode": "open_table"} and view["table"]["seats"] == ["human", "heuristic"]
    page.click("[data-lobby=open]")
    page.wait_for_selector(f"{ENABLED}, {OVER}")
    assert page.locator("#title").inner_text().startswith("humbug_v0")
    assert _play([page], seed=1) == 26
    _check_deal_end(page, deals=1, num_players=2)
    assert "game over" in page.locator("#status").inner_text()
    _shot(page, shots, "humbug_v0")


@pytest.mark.slow
def test_the_lobby_form_sets_a_pretrained_seats_options_and_shares_the_human_links(
    live_server: tuple[str, Any], browser: Any, shots: Path
) -> None:
    from playwright.sync_api import expect

    base, _ = live_server
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=base)
    page = context.new_page()
    page.goto(base + "/")
    page.select_option("[data-lobby=game]", "oh_hell_v0")
    players = page.locator("[data-option=num_players]")
    assert players.input_value() == "4" and players.get_attribute("max") == "8"
    assert page.locator("[data-option=include_history]").is_checked()
    assert "players at the table" in page.locator("label", has=players).inner_text()  # the description labels it
    players.fill("3")  # the seats follow the number of players
    assert page.locator("select[data-lobby^=seat-]").count() == 3
    assert "pimc" in page.locator("[data-lobby=seat-1] option").all_inner_texts()  # Oh Hell's playout search
    assert not page.locator("[data-lobby=pretrained-note]").is_visible()
    page.select_option("[data-lobby=seat-1]", "pretrained")  # sets the options its network was trained with
    note = page.locator("[data-lobby=pretrained-note]")
    assert note.is_visible() and "episode = deal" in note.inner_text() and "num_players = 4" in note.inner_text()
    assert players.input_value() == "4" and players.is_disabled()
    assert page.locator("[data-option=episode]").input_value() == "deal"
    assert page.locator("select[data-lobby^=seat-]").count() == 4
    page.select_option("[data-lobby=seat-1]", "heuristic")  # another agent frees the options again
    assert not players.is_disabled() and not note.is_visible()
    page.select_option("[data-lobby=seat-1]", "pretrained")
    page.select_option("[data-lobby=seat-2]", "other")  # an agent spec of your own, checked by the server
    page.fill("[data-lobby=seat-2-spec]", "wizard")
    page.click("[data-lobby=create]")
    # the refusal comes back from the server: wait for it (expect retries) rather than read the box at once
    expect(page.locator("[data-lobby=error]")).to_contain_text("seat 2: unknown agent 'wizard'")
    assert not page.locator("[data-lobby=open]").count()
    page.select_option("[data-lobby=seat-2]", "random")
    page.select_option("[data-lobby=seat-3]", "human")
    page.fill("[data-lobby=seed]", "11")
    page.click("[data-lobby=create]")
    page.wait_for_selector("[data-lobby=open]")
    assert page.locator("[data-lobby=error]").inner_text() == ""
    links = {int(s): page.locator(f"[data-share='{s}']").input_value() for s in ("0", "3")}
    assert page.locator("[data-share]").count() == 2 and page.locator("a[data-seat-link]").count() == 2
    page.click("[data-copy='3']")
    expect(page.locator("[data-copy='3']")).to_have_text("Copied ✓")  # the copy is asynchronous too
    assert page.evaluate("navigator.clipboard.readText()") == links[3]
    view = _view(base, links[0])
    assert view["table"]["seats"] == ["human", "pretrained", "random", "human"]
    assert view["table"]["options"] == {"episode": "deal"}  # only what differs from the defaults is sent
    friend = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
    friend.goto(links[3])
    page.click("[data-lobby=open]")  # the lobby opens your own seat
    assert page.url == links[0]
    for p in (page, friend):
        p.wait_for_selector(f"{ENABLED}, {OVER}, #hand svg")
    _play([page, friend], seed=4)
    for p in (page, friend):
        _check_deal_end(p, deals=1, num_players=4)
    _shot(page, shots, "oh_hell_v0_pretrained")
    context.close()


@pytest.mark.slow
@pytest.mark.parametrize(
    ("game", "options", "seats", "study", "deals"),
    [
        ("german_whist_v0", {}, ["human", "pimc:samples=4"], True, 1),
        ("humbug_whist_v0", {"episode": "deal"}, ["human", "heuristic"], True, 1),
        # a multi-deal episode: hands of 2, 1 and 2 cards, each deal bid then played
        ("oh_hell_v0", {"num_players": 3, "max_cards": 2}, ["human", "heuristic", "random"], False, 3),
    ],
)
def test_play_a_whole_game_by_clicking(
    live_server: tuple[str, Any],
    browser: Any,
    shots: Path,
    game: str,
    options: dict[str, Any],
    seats: list[str],
    study: bool,
    deals: int,
) -> None:
    base, _ = live_server
    made = _open(base, game=game, options=options, seats=seats, study=study, seed=5)
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(base + made["url"])
    page.wait_for_selector(f"{ENABLED}, {OVER}")
    if game == "humbug_whist_v0":  # the exchange: keep or exchange buttons
        assert {page.locator(ENABLED).nth(i).inner_text() for i in range(2)} == {"KEEP", "EXCHANGE"}
    if game == "german_whist_v0":
        assert "Face-up stock card" in page.locator("#table-cards").inner_text()
        assert "stock: 26" in page.locator("#table-cards").inner_text()
    if study:  # the open study table shows the agent's hand
        assert page.locator("#panel-agents svg").count() > 0
    assert "hand:" in page.locator("#knows").inner_text()  # the seat's describe() of its observation
    page.uncheck("[data-panel=knows]")  # each study panel can be switched off and on
    assert not page.locator("#panel-knows").is_visible()
    page.check("[data-panel=knows]")
    assert page.locator("#panel-knows").is_visible()
    clicks = _play([page], seed=2, base=base, made=made)
    assert clicks > 0
    _check_deal_end(page, deals=deals, num_players=len(seats))
    if game == "oh_hell_v0":
        assert "bid" in page.locator("#panel-deals").inner_text()
    _shot(page, shots, game)


@pytest.mark.slow
def test_four_humans_play_classic_whist_in_four_pages(live_server: tuple[str, Any], browser: Any, shots: Path) -> None:
    base, _ = live_server
    made = _open(base, game="classic_whist_v0", options={"episode": "deal"}, seats=["human"] * 4, seed=7)
    pages = []
    for seat in made["seats"]:
        context = browser.new_context(viewport={"width": 1400, "height": 1000})  # four separate browsers
        page = context.new_page()
        page.goto(base + seat["url"])
        page.wait_for_selector("#hand svg")
        pages.append(page)
    hands = [
        set(int(a) for a in p.locator("#hand [data-action]").evaluate_all("e => e.map(x => x.dataset.action)"))
        for p in pages
    ]
    assert [len(h) for h in hands] == [13] * 4 and len(set().union(*hands)) == 52
    midgame: list[Path] = []

    def pause(clicks: int, i: int) -> None:
        if clicks >= 20 and i == 0 and not midgame:  # seat 0 to play in the middle of the deal (the README's picture)
            midgame.append(_shot(pages[0], shots, "classic_whist_v0_midgame"))

    assert _play(pages, seed=3, base=base, made=made, pause=pause) == 52
    for page in pages:
        _check_deal_end(page, deals=1, num_players=4)
    _shot(pages[0], shots, "classic_whist_v0")
    target = os.environ.get("WHIST_SERVE_SCREENSHOT")
    if target:
        shutil.copyfile(midgame[0], target)


def _running(text: str) -> list[int]:
    """The processes whose command line holds ``text`` (Linux: read from /proc)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            except OSError:
                continue
            if text.encode() in cmdline:
                found.append(int(entry))
    return found


@pytest.mark.slow
def test_a_human_plays_a_whole_deal_against_a_connected_bot(
    live_server: tuple[str, Any], browser: Any, shots: Path, tmp_path: Path
) -> None:
    """The lobby opens a German Whist table with a bot seat and shows its command; the command's equivalent
    (``python -m whist_env.serve.bridge``) connects the Python starter bot; the page shows the bot connected, the
    human plays the whole deal by clicking, the bridge exits 0 at the end, and no process is left."""
    base, _ = live_server
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(base + "/")
    page.select_option("[data-lobby=game]", "german_whist_v0")
    assert "bot" in page.locator("[data-lobby=seat-1] option").evaluate_all("els => els.map(e => e.value)")
    page.select_option("[data-lobby=seat-1]", "bot")
    page.fill("[data-lobby=seed]", "12")
    page.click("[data-lobby=create]")
    page.wait_for_selector("[data-bot-command='1']")
    assert page.locator("[data-bot-command]").count() == 1 and page.locator("[data-share]").count() == 1
    words = page.locator("[data-bot-command='1']").input_value().split()
    assert words[:2] == ["whist-bot", "connect"] and words[3] == "--token" and words[5:] == ["--", "python", "mybot.py"]
    url, token = words[2], words[4]
    assert url.startswith(base + "/table/") and "token" not in url
    page.click("[data-lobby=open]")
    page.wait_for_selector("[data-seat='1'][data-bot-connected='false']")
    bot = tmp_path / "mybot.py"  # the starter, under a name that only this test's bot process carries
    bot.write_text(STARTER.read_text(encoding="utf-8"), encoding="utf-8")
    log = tmp_path / "bridge.log"
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    command = [sys.executable, "-m", "whist_env.serve.bridge", url, "--token", token, "--", sys.executable, str(bot)]
    with log.open("w") as err:
        bridge = subprocess.Popen(command, cwd=tmp_path, env=env, stdin=subprocess.DEVNULL, stderr=err)
    try:
        page.wait_for_selector("[data-seat='1'][data-bot-connected='true']", timeout=60_000)
        assert _play([page], seed=6) == 26  # German Whist: 13 cards won or drawn from the stock, then 13 played
        assert bridge.wait(timeout=60) == 0, log.read_text()
    finally:
        if bridge.poll() is None:
            bridge.kill()
            bridge.wait(timeout=10)
    page.wait_for_selector("[data-seat='1'][data-bot-connected='false']")  # the bot left when the game ended
    _check_deal_end(page, deals=1, num_players=2)
    assert "the game is over" in log.read_text()
    assert _running(str(bot)) == [], "the bot process outlived the bridge"
    _shot(page, shots, "german_whist_v0_bot")
