"""Reading a Prometheus ``/metrics`` page in tests: fetch it, pick one sample."""

from __future__ import annotations

import httpx
from prometheus_client.parser import text_string_to_metric_families

__all__ = ["clients_held", "metric_sample", "scrape_metrics"]


def metric_sample(text: str, name: str, **labels: str) -> float | None:
    """The value of sample ``name`` whose labels include ``labels`` (None when absent)."""
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            if s.name == name and all(s.labels.get(k) == v for k, v in labels.items()):
                return float(s.value)
    return None


async def scrape_metrics(url: str) -> str:
    """``GET url`` (a ``/metrics`` address), asserting a 200 text exposition."""
    async with httpx.AsyncClient(timeout=30) as client:
        response = await client.get(url)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/plain")
    return response.text


async def clients_held(server_url: str) -> float:
    """How many clients the Server node at ``server_url`` holds itself (its own
    ``a2c_server_connected_clients``, every role; not the shared registry's count)."""
    text = await scrape_metrics(f"{server_url}/metrics")
    total = 0.0
    for family in text_string_to_metric_families(text):
        total += sum(s.value for s in family.samples if s.name == "a2c_server_connected_clients")
    return total
