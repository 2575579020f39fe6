"""The office console in a real headless chromium, against real Servers.

One browser serves every check of the module. Debian's ``chromium`` and ``chromium-driver``
are required: the tests skip with a hint locally and fail in CI (``CI=true``) without them.
The single-node test takes the screenshot docs/operations.md shows (docs/images/console.png,
rewritten when A2C_UPDATE_SCREENSHOT=1).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from a2c_protocol import NAMESPACE, PROTOCOL_VERSION, Event
from a2c_server import ServerSettings
from a2c_testkit.redis_server import redis_server
from a2c_testkit.server import RawClient, RunningServer, joined_raw, running_nodes, running_server

webdriver = pytest.importorskip("selenium.webdriver")
from selenium.common.exceptions import TimeoutException  # noqa: E402
from selenium.webdriver.chrome.options import Options  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

ADMIN = "console-admin-token-3f9c"
DOCS_SCREENSHOT = Path(__file__).resolve().parents[1] / "docs" / "images" / "console.png"


def _binaries() -> tuple[str, str]:
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    if browser is None or driver is None:
        message = "chromium and chromium-driver are not installed (apt-get install chromium chromium-driver)"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    return browser, driver


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    binary, driver_path = _binaries()
    options = Options()
    options.binary_location = binary
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--window-size=1280,1400", "--disable-extensions"):  # fmt: skip
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=driver_path), options=options)
    try:
        yield driver
    finally:
        driver.quit()


async def _until(driver: Any, check: Callable[[Any], Any], what: str, timeout: float = 30) -> Any:
    """Wait in a thread (the Servers run on this event loop) until ``check(driver)`` holds."""

    def wait() -> Any:
        try:
            return WebDriverWait(driver, timeout, poll_frequency=0.1).until(check)
        except TimeoutException:
            raise AssertionError(f"the console never showed {what}") from None

    return await asyncio.to_thread(wait)


async def _log_in(driver: Any, url: str) -> None:
    """Open the console through its login form (a token never goes in a URL)."""

    def fill() -> None:
        driver.get(f"{url}/console")
        if driver.find_elements(By.ID, "token"):
            field = driver.find_element(By.ID, "token")
            field.send_keys(ADMIN)
            field.submit()

    await asyncio.to_thread(fill)
    await _until(driver, lambda d: not d.find_elements(By.ID, "token"), "the console after login")
    # The login page is a 401 by design: drop its log entry, later checks read the rest.
    await asyncio.to_thread(driver.get_log, "browser")


def _rows(table: str) -> Callable[[Any], list[str]]:
    # One script reads the whole table: the page replaces it on every update.
    script = f"return Array.from(document.querySelectorAll('#{table} tbody tr'), r => r.innerText)"

    def read(driver: Any) -> list[str]:
        rows: list[str] = driver.execute_script(script)
        return rows

    return read


def _text(element_id: str) -> Callable[[Any], str]:
    def read(driver: Any) -> str:
        text: str = driver.execute_script(
            "const e = document.getElementById(arguments[0]); return e ? e.innerText : ''",
            element_id,
        )
        return text

    return read


def _live(driver: Any) -> bool:
    return _text("status")(driver) == "live"


def _row_with(table: str, *words: str) -> Callable[[Any], str | None]:
    def check(driver: Any) -> str | None:
        for text in _rows(table)(driver):
            if all(word in text for word in words):
                return text
        return None

    return check


def _number(element_id: str, at_least: int) -> Callable[[Any], bool]:
    def check(driver: Any) -> bool:
        text = _text(element_id)(driver)
        return text.isdigit() and int(text) >= at_least

    return check


class _SlowComputer:
    """Answers ``client:tool_call`` only when the test releases it."""

    def __init__(self, client: RawClient) -> None:
        self.release = asyncio.Event()
        self.started = asyncio.Event()
        client.sio.on(Event.TOOL_CALL.value, self._on_call, namespace=NAMESPACE)

    async def _on_call(self, data: Any) -> dict[str, Any]:
        self.started.set()
        await self.release.wait()
        return {"content": [{"type": "text", "text": "done"}], "isError": False}


def _call(agent: str, computer: str, req_id: str, tool: str = "slow_tool") -> dict[str, Any]:
    return {"agent": agent, "req_id": req_id, "computer": computer, "tool_name": tool,
            "params": {"secret_argument": "do-not-show"}, "timeout": 30}  # fmt: skip


@contextlib.asynccontextmanager
async def _console_server(**fields: Any) -> AsyncIterator[RunningServer]:
    settings = ServerSettings(console=True, admin_token=ADMIN, **fields)
    async with running_server(settings) as server:
        yield server


async def test_console_requires_the_admin_token() -> None:
    async with (
        _console_server() as server,
        httpx.AsyncClient(base_url=server.url) as http,
        contextlib.AsyncExitStack() as stack,
    ):
        await joined_raw(stack, server, "computer", "rendered-desk", "office/1%")
        for path in ("/console", "/console/events", "/console/office/x"):
            answer = await http.get(path)
            assert answer.status_code == 401, path
            assert ADMIN not in answer.text
        assert (await http.post("/console/login", data={"token": "wrong"})).status_code == 401
        # The token is exchanged for a cookie that is not the token (see also
        # test_console_security.py, which proves that only that cookie opens the console).
        answer = await http.post("/console/login", data={"token": ADMIN})
        assert answer.status_code == 303
        assert answer.headers["location"] == "/console"
        cookie = answer.headers["set-cookie"]
        assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and ADMIN not in cookie
        page = await http.get("/console")  # the client kept the cookie
        assert page.status_code == 200 and ADMIN not in page.text
        # Server-rendered before the stream starts; no inline script or style anywhere.
        assert "rendered-desk" in page.text and "office/1%" in page.text
        assert "<script>" not in page.text and "style=" not in page.text
        office = await http.get("/console/office/office%2F1%25")
        assert office.status_code == 200 and "rendered-desk" in office.text
        csp = page.headers["content-security-policy"]
        assert "script-src 'self'" in csp and "unsafe-inline" not in csp
        http.cookies.clear()
        bearer = await http.get("/console", headers={"authorization": f"Bearer {ADMIN}"})
        assert bearer.status_code == 200 and "rendered-desk" in bearer.text
        assert (await http.get("/console")).status_code == 401  # the bearer, not a cookie
        # Without --console there is no console at all.
    async with running_server(ServerSettings()) as plain, httpx.AsyncClient() as http:
        assert (await http.get(plain.url + "/console")).status_code == 404


def test_console_needs_a_token_off_loopback() -> None:
    from a2c_server import SettingsError

    with pytest.raises(SettingsError, match="admin token"):
        ServerSettings(console=True, host="0.0.0.0")
    assert ServerSettings(console=True, host="127.0.0.1").admin_token is None


async def test_console_shows_offices_calls_and_refusals_live(browser: Any, tmp_path: Path) -> None:
    async with _console_server() as server, contextlib.AsyncExitStack() as stack:
        idle = server.app.console
        assert idle is not None and idle.feed.viewers == 0
        await _log_in(browser, server.url)
        assert browser.current_url.endswith("/console")
        assert ADMIN not in browser.page_source
        await _until(browser, _live, "live")

        computer_client = await joined_raw(stack, server, "computer", "desk-1", "office-a")
        computer = _SlowComputer(computer_client)
        agent = await joined_raw(stack, server, "agent", "planner", "office-a")
        await _until(browser, _row_with("sessions", "office-a", "computer", PROTOCOL_VERSION,
                                        "desk-1", "websocket"),
                     "the Computer in its office, with its protocol version")  # fmt: skip
        await _until(browser, _row_with("sessions", "office-a", "agent", "planner"), "the Agent")
        await _until(browser, _row_with("nodes", "local"), "this node")

        call = asyncio.create_task(
            agent.call(Event.TOOL_CALL, _call("planner", "desk-1", "req-slow-1"))
        )
        await asyncio.wait_for(computer.started.wait(), 30)
        await _until(browser, _row_with("inflight", "office-a", "slow_tool", "desk-1", "planner"),
                     "the call in flight")  # fmt: skip
        # A refusal: a Computer that is not in the office.
        refused = await agent.call(Event.TOOL_CALL, _call("planner", "nobody", "req-refused"))
        assert isinstance(refused, dict) and refused.get("code") in (403, 404, 4103, 4104)
        await _until(browser, _number("c-refusals", 1), "the refusal counted")
        computer.release.set()
        answer = await asyncio.wait_for(call, 30)
        assert isinstance(answer, dict) and answer.get("isError") is False
        await _until(browser, _row_with("finished", "office-a", "slow_tool", "ok"),
                     "the finished call")  # fmt: skip
        await _until(browser, lambda d: not _row_with("inflight", "slow_tool")(d),
                     "the in-flight row gone")  # fmt: skip
        assert "do-not-show" not in browser.page_source  # never tool arguments
        assert "done" not in "".join(_rows("finished")(browser))  # never results

        # The office page: its event stream, without taking a seat.
        await asyncio.to_thread(browser.get, f"{server.url}/console/office/office-a")
        await _until(browser, _live, "live")
        second = await joined_raw(stack, server, "computer", "desk-2", "office-a")
        await second.emit(Event.UPDATE_TOOL_LIST, {"computer": "desk-2"})
        await _until(browser, lambda d: "notify:update_tool_list" in _text("events")(d),
                     "the tool list update")  # fmt: skip
        events = _text("events")(browser)
        assert "notify:enter_office" in events and "desk-2" in events
        # Watching took no seat: the office holds exactly its three members.
        await joined_raw(stack, server, "computer", "desk-3", "office-b")
        members = await server.app.store.office_members("office-a")
        assert sorted(m.name or "" for m in members) == ["desk-1", "desk-2", "planner"]
        # The tiles count this office (desk-3 is in office-b), or say they do not.
        await _until(browser, lambda d: _text("c-computers")(d) == "2", "office-a's Computers")
        assert _text("c-agents")(browser) == "1"
        assert "this node, all offices" in browser.page_source

        await asyncio.to_thread(browser.get, f"{server.url}/console")
        await _until(browser, _row_with("finished", "slow_tool", "ok"), "the overview again")
        await _until(browser, _row_with("sessions", "office-b", "desk-3"), "office-b")
        await asyncio.sleep(2.5)  # a few chart points for the screenshot
        # A2C_UPDATE_SCREENSHOT=1 refreshes the committed picture; otherwise a run leaves
        # the work tree clean and the screenshot goes to the test's own directory.
        shot = (
            DOCS_SCREENSHOT if os.environ.get("A2C_UPDATE_SCREENSHOT") else tmp_path / "console.png"
        )
        await asyncio.to_thread(browser.save_screenshot, str(shot))
        assert shot.stat().st_size > 10_000  # a real page, not a blank frame
        problems = [e for e in browser.get_log("browser") if e.get("level") == "SEVERE"]
        assert not problems, problems  # no CSP violation, no script error
        await asyncio.to_thread(browser.get, "about:blank")
        console = server.app.console
        assert console is not None
        for _ in range(600):  # the page's stream closes: nobody watches, the hook is off
            if console.feed.viewers == 0:
                break
            await asyncio.sleep(0.05)
        assert console.feed.viewers == 0


async def test_console_sees_no_call_while_nobody_watches() -> None:
    """No viewer: the namespace never hands a call to the console (its hook is off)."""
    async with _console_server() as server, contextlib.AsyncExitStack() as stack:
        console = server.app.console
        assert console is not None
        feed = console.feed
        computer = _SlowComputer(await joined_raw(stack, server, "computer", "c", "o"))
        computer.release.set()
        agent = await joined_raw(stack, server, "agent", "a", "o")
        await agent.call(Event.TOOL_CALL, _call("a", "c", "r1"))
        assert feed.calls_seen == 0
        async with feed.viewing(None):
            await agent.call(Event.TOOL_CALL, _call("a", "c", "r2"))
            assert feed.calls_seen == 1
        await agent.call(Event.TOOL_CALL, _call("a", "c", "r3"))
        assert feed.calls_seen == 1 and feed.viewers == 0


async def test_console_shows_every_nodes_sessions(browser: Any) -> None:
    with redis_server() as redis:
        settings = ServerSettings(console=True, admin_token=ADMIN)
        async with (
            running_nodes(redis.url, settings) as first,
            contextlib.AsyncExitStack() as stack,
        ):
            node0, node1 = first.nodes
            await joined_raw(stack, node0, "computer", "desk-on-0", "office-m")
            await joined_raw(stack, node1, "agent", "agent-on-1", "office-m")
            for node in (node0, node1):
                await _log_in(browser, node.url)
                await _until(browser, _row_with("sessions", "desk-on-0", "node-0"), "node-0's")
                await _until(browser, _row_with("sessions", "agent-on-1", "node-1"), "node-1's")
                await _until(browser, _row_with("nodes", "node-0", "yes"), "node-0 alive")
                await _until(browser, _row_with("nodes", "node-1", "yes"), "node-1 alive")
            await asyncio.to_thread(browser.get, "about:blank")


async def test_console_stream_ends_with_the_drain() -> None:
    """A shutdown's drain ends the open streams (uvicorn would otherwise wait for them)."""
    async with _console_server() as server, httpx.AsyncClient(base_url=server.url) as http:
        console = server.app.console
        assert console is not None
        headers = {"authorization": f"Bearer {ADMIN}"}
        async with http.stream("GET", "/console/events", headers=headers, timeout=30) as stream:
            assert stream.headers["content-type"].startswith("text/event-stream")
            lines = stream.aiter_lines()
            while "event: state" not in await anext(lines):
                pass
            assert console.feed.viewers == 1
            await server.app.drain.drain(0)

            async def to_the_end() -> None:
                async for _ in lines:
                    pass

            await asyncio.wait_for(to_the_end(), 30)  # keep-alives would reset a read timeout
        assert console.feed.viewers == 0
