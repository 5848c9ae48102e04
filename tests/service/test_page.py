"""The board page in a real headless Chromium (Debian's ``chromium`` and
``chromium-driver``, driven by Selenium; no browser is downloaded): the top rows, a live
update arriving after a submit, the window tabs (mouse and keyboard), the player search
with the player's history, the score histogram (and its refresh after writes), and
screenshots (phone and desktop width) saved under the test's directory. Without Chromium
the test fails: it never passes silently (scripts/setup.sh installs it)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service as DriverService
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support.ui import WebDriverWait

from ranked.service.keys import KeyStore, Scope
from servers import RankedService, ServerError, free_port


@pytest.fixture(scope="module")
def browser() -> Iterator[WebDriver]:
    chromium, driver = shutil.which("chromium"), shutil.which("chromedriver")
    if chromium is None or driver is None:
        pytest.fail(
            "chromium and chromium-driver are missing (apt-get install chromium"
            " chromium-driver; scripts/setup.sh does it)",
            pytrace=False,
        )
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for argument in (
        "--headless=new",
        "--no-sandbox",
        "--disable-dev-shm-usage",
        "--disable-gpu",
        "--window-size=412,1000",  # a phone's width
    ):
        options.add_argument(argument)
    chrome = webdriver.Chrome(options=options, service=DriverService(executable_path=driver))
    try:
        yield chrome
    finally:
        chrome.quit()


@pytest.fixture(scope="module")
def arena(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[RankedService, str]]:
    """A service with a demo-like public board ``arena`` (all-time, then daily) of 150
    players; and a write key."""
    data_dir = tmp_path_factory.mktemp("page")
    with KeyStore(data_dir) as store:
        key = store.create(Scope.ADMIN)[1]
    service = RankedService(data_dir, ["--live-port", str(free_port())])
    try:
        service.start()
    except ServerError as error:
        pytest.fail(str(error), pytrace=False)
    headers = {"Authorization": f"Bearer {key}"}
    with httpx.Client(base_url=service.url, headers=headers, timeout=30) as http:
        created = http.put(
            "/v1/boards/arena", json={"windows": ["all", "daily"], "public_reads": True}
        )
        assert created.status_code == 201, created.text
        scores = [{"member": f"player-{i:03d}", "score": i * 10} for i in range(150)]
        assert (
            http.post("/v1/boards/arena/scores/batch", json={"scores": scores}).status_code == 200
        )
    try:
        yield service, key
    finally:
        service.close()


def _rows(browser: WebDriver) -> list[list[str]]:
    rows = browser.find_elements(By.CSS_SELECTOR, "#rows tr")
    return [[cell.text for cell in row.find_elements(By.TAG_NAME, "td")] for row in rows]


def _wait(browser: WebDriver, condition: Any, message: str) -> Any:
    return WebDriverWait(browser, 15).until(lambda _: condition(), message)


def test_the_board_page_live(
    browser: WebDriver, arena: tuple[RankedService, str], tmp_path: Path
) -> None:
    service, key = arena
    browser.get(service.url + "/")
    assert browser.find_element(By.LINK_TEXT, "arena").get_attribute("href") is not None
    browser.find_element(By.LINK_TEXT, "arena").click()

    # the top rows, from the live channel's snapshot
    _wait(browser, lambda: len(_rows(browser)) == 100, "the top 100 rows")
    assert _rows(browser)[:2] == [["1", "player-149", "1,490"], ["2", "player-148", "1,480"]]
    # over the service's live port, which the page is told in a <meta>
    status = browser.find_element(By.ID, "status")
    assert status.get_attribute("data-transport") == "live-port"

    # a submit over HTTP arrives as an update, highlighted
    with httpx.Client(base_url=service.url, headers={"Authorization": f"Bearer {key}"}) as http:
        answer = http.post("/v1/boards/arena/scores", json={"member": "newcomer", "score": 5000})
        assert answer.status_code == 200
    _wait(browser, lambda: _rows(browser)[0][1] == "newcomer", "the update arriving")
    first = browser.find_element(By.CSS_SELECTOR, "#rows tr")
    assert "new" in (first.get_attribute("class") or "")
    assert _rows(browser)[1] == ["2", "player-149", "1,490"]

    # window tabs: click the daily one, then back to all-time with the keyboard
    tabs = _wait(
        browser, lambda: browser.find_elements(By.CSS_SELECTOR, "#tabs button"), "the tabs"
    )
    assert [t.text for t in tabs] == ["All time", "Today"]
    tabs[1].click()
    daily = tabs[1].get_attribute("data-window") or ""
    assert daily.startswith("d")
    _wait(browser, lambda: daily in browser.find_element(By.ID, "caption").text, "daily top")
    assert tabs[1].get_attribute("aria-selected") == "true"
    assert f"window={daily}" in browser.current_url
    _wait(browser, lambda: _rows(browser)[:1] == [["1", "newcomer", "5,000"]], "daily rows")
    tabs[1].send_keys(Keys.ARROW_LEFT)
    _wait(browser, lambda: tabs[0].get_attribute("aria-selected") == "true", "keyboard tab")
    _wait(browser, lambda: "all" in browser.find_element(By.ID, "caption").text, "all-time")

    # find a player: around-me over the HTTP API
    search = browser.find_element(By.ID, "player")
    search.send_keys("player-010", Keys.ENTER)
    standing = _wait(
        browser, lambda: browser.find_elements(By.ID, "found-standing"), "the search answer"
    )
    assert standing[0].text.startswith("player-010: rank 141, score 100")
    around = [li.text for li in browser.find_elements(By.CSS_SELECTOR, "#found li")]
    assert "player-010 · 100" in around and len(around) == 11
    search.clear()
    search.send_keys("nobody", Keys.ENTER)
    _wait(
        browser,
        lambda: "not on this board" in browser.find_element(By.ID, "found").text,
        "an unknown player",
    )
    with httpx.Client(base_url=service.url, headers={"Authorization": f"Bearer {key}"}) as http:
        for score in (1300, 1410):  # player-140's history: 1400 (the batch), 1300, 1410
            answer = http.post(
                "/v1/boards/arena/scores", json={"member": "player-140", "score": score}
            )
            assert answer.status_code == 200
    search.clear()
    search.send_keys("player-140", Keys.ENTER)
    _wait(browser, lambda: browser.find_elements(By.ID, "found-standing"), "search again")

    # the found player's history: a sparkline of the three writes, the latest listed first
    _wait(browser, lambda: browser.find_elements(By.ID, "history"), "the history")
    points = browser.find_element(By.CSS_SELECTOR, "#history svg polyline").get_attribute("points")
    assert len((points or "").split()) == 3
    writes = [
        [cell.text for cell in row.find_elements(By.TAG_NAME, "td")]
        for row in browser.find_elements(By.CSS_SELECTOR, "#history tbody tr")
    ]
    assert [w[1:] for w in writes] == [["best", "1,410"], ["best", "1,300"], ["best", "1,400"]]

    me = browser.find_element(By.CSS_SELECTOR, '#rows tr[data-member="player-140"]')
    assert "me" in (me.get_attribute("class") or "")

    # the histogram of the window: 20 buckets holding the 151 players, player-140's marked
    def members() -> str:
        return browser.find_element(By.ID, "histogram-summary").get_attribute("data-members") or ""

    _wait(browser, lambda: members() == "151", "the histogram")
    bars = browser.execute_script(  # in one step: a refresh may redraw the bars
        "return Array.from(document.querySelectorAll('#histogram rect'),"
        " (bar) => [Number(bar.getAttribute('data-count')), bar.classList.contains('me')])"
    )
    assert len(bars) == 20
    assert sum(count for count, _ in bars) == 151
    assert [i for i, (_, me) in enumerate(bars) if me] == [5]  # 1,410: in 1,250 to 1,500
    summary = browser.find_element(By.ID, "histogram-summary").text
    assert summary == "151 players in all, scores 0 to 5,000"
    # ... read again (throttled) once updates arrive
    with httpx.Client(base_url=service.url, headers={"Authorization": f"Bearer {key}"}) as http:
        answer = http.post("/v1/boards/arena/scores", json={"member": "late", "score": 3})
        assert answer.status_code == 200
    _wait(browser, lambda: members() == "152", "the histogram refreshed")

    # a player climbing is marked as it arrives (the screenshot shows it)
    with httpx.Client(base_url=service.url, headers={"Authorization": f"Bearer {key}"}) as http:
        answer = http.post("/v1/boards/arena/scores", json={"member": "player-100", "score": 1455})
        assert answer.json()["rank"] == 6
    _wait(browser, lambda: _rows(browser)[5][1] == "player-100", "the climb arriving")
    climbed = browser.find_element(By.CSS_SELECTOR, '#rows tr[data-member="player-100"]')
    assert "up" in (climbed.get_attribute("class") or "")
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", climbed)
    shot = tmp_path / "board.png"
    assert browser.save_screenshot(str(shot))
    print(f"screenshot: {shot}")
    browser.set_window_size(1280, 1100)  # a desktop's width: the top beside the search
    browser.execute_script("window.scrollTo(0, 0)")
    wide = tmp_path / "board-desktop.png"
    assert browser.save_screenshot(str(wide))
    print(f"screenshot: {wide}")
