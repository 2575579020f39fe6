"""The sign-in's loopback listener settles only on its own redirect.

A real listener and real HTTP requests: any local process or page can reach the port, so
a redirect whose ``state`` is not the one sent to the browser must not end the sign-in.
"""

from __future__ import annotations

import asyncio

import httpx

from a2c_computer._oauth._login import _Loopback

STATE = "st-4f1c2a9b8e7d"


async def test_loopback_ignores_redirects_with_another_state() -> None:
    async with _Loopback(0, "/callback") as loopback, httpx.AsyncClient(timeout=30) as http:
        loopback.expect(f"https://auth.test/authorize?client_id=c&state={STATE}&x=1")
        url = loopback.redirect_uri
        for params in (
            {"code": "evil", "state": "other"},
            {"code": "evil"},
            {"error": "access_denied", "state": "other"},
            {"error": "access_denied"},
            {"code": "evil", "state": STATE[:-1]},
        ):
            answer = await http.get(url, params=params)
            assert answer.status_code == 400, params
            assert not loopback.result.done(), params
        good = await http.get(url, params={"code": "the-code", "state": STATE})
        assert good.status_code == 200
        got = await asyncio.wait_for(loopback.result, 30)
        assert (got.code, got.state) == ("the-code", STATE)


async def test_loopback_before_the_browser_was_sent_settles_nothing() -> None:
    async with _Loopback(0, "/callback") as loopback, httpx.AsyncClient(timeout=30) as http:
        answer = await http.get(loopback.redirect_uri, params={"code": "c", "state": "s"})
        assert answer.status_code == 400 and not loopback.result.done()
