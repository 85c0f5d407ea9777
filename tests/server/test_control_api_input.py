"""The control API of ``serve --transport http`` answers odd episode-creation bodies, unknown
routes and wrong methods with a 4xx JSON error that names the field in the request's own terms,
and keeps serving (issue: breaker2, bodies nobody on the team wrote)."""

from __future__ import annotations

import httpx
import pytest

ODD_BODIES = [
    # (body, status, the error says) -- the field as the request spells it, never a pydantic union tag
    (
        '{"apps": 5}',
        422,
        "invalid field 'apps': expected a list of app names or a comma-separated string, got a JSON number",
    ),
    (
        '{"apps": {"shop": true}}',
        422,
        "invalid field 'apps': expected a list of app names or a comma-separated string, got a JSON object",
    ),
    (
        '{"apps": ["shop", null]}',
        422,
        "invalid field 'apps.1': expected a list of app names or a comma-separated string, got a JSON null",
    ),
    (
        '{"faults": 3}',
        422,
        "invalid field 'faults': expected a built-in profile name (none, default, harsh) or an inline profile object, got a JSON number",
    ),
    (
        '{"faults": ["default"]}',
        422,
        "invalid field 'faults': expected a built-in profile name (none, default, harsh) or an inline profile object, got a JSON array",
    ),
    ('{"tools": "shop_get_item"}', 422, "invalid field 'tools': Input should be a valid list"),
    ('{"seed": -1}', 422, "invalid field 'seed': Input should be greater than or equal to 0"),
    (
        "[]",
        422,
        "the body must be a JSON object of episode fields (seed, apps, faults, fault_seed, tools, search_tools), got a JSON array",
    ),
    ("null", 422, "the body must be a JSON object of episode fields"),
    ('"seed"', 422, "got a JSON string"),
    ('{"apps": []}', 422, "invalid field 'apps': names no app"),
    ('{"apps": ""}', 422, "invalid field 'apps': names no app"),
    ('{"apps": " , ,"}', 422, "invalid field 'apps': names no app"),
]


@pytest.mark.parametrize(("body", "status", "says"), ODD_BODIES, ids=[b for b, _, _ in ODD_BODIES])
def test_odd_creation_bodies_get_a_json_error_naming_the_field(body, status, says, http_server):
    url, token = http_server
    r = httpx.post(f"{url}/control/episodes", content=body, headers={"Authorization": f"Bearer {token}"}, timeout=30)
    assert r.status_code == status, r.text
    assert says in r.json()["error"], r.json()["error"]
    assert httpx.get(f"{url}/health", timeout=30).json()["status"] == "ok"


@pytest.mark.parametrize(
    ("method", "path", "status"),
    [
        ("PUT", "/control/episodes", 405),
        ("DELETE", "/control/episodes", 405),
        ("POST", "/control/episodes/abc", 405),
        ("GET", "/control/nothing", 404),
        ("GET", "/", 404),
    ],
)
def test_unknown_routes_and_methods_answer_json(method, path, status, http_server):
    url, token = http_server
    r = httpx.request(method, f"{url}{path}", headers={"Authorization": f"Bearer {token}"}, timeout=30)
    assert r.status_code == status
    assert r.headers["content-type"].startswith("application/json")
    assert r.json()["error"] in ("Method Not Allowed", "Not Found")
    if status == 405:
        assert r.headers["allow"]


def test_an_inline_fault_profile_error_names_the_faults_field(http_server):
    url, token = http_server
    r = httpx.post(
        f"{url}/control/episodes",
        json={"faults": {"rates": {"transient": 5}}},
        headers={"Authorization": f"Bearer {token}"},
        timeout=30,
    )
    assert r.status_code == 422
    assert r.json()["error"].startswith("invalid field 'faults': invalid fault profile: field 'rates.transient' = 5")
    assert "<mapping>" not in r.json()["error"]


def test_many_unknown_tools_get_a_short_error(http_server):
    """50,000 unknown names came back whole in one error (400 KB)."""
    url, token = http_server
    names = [f"nope_{i:05d}" for i in range(50_000)]
    r = httpx.post(
        f"{url}/control/episodes",
        json={"tools": ["system_get_time", *names]},
        headers={"Authorization": f"Bearer {token}"},
        timeout=30,
    )
    assert r.status_code == 422 and len(r.text) < 1_000, len(r.text)
    assert r.json()["error"].startswith(
        "invalid field 'tools': 50000 unknown tools for this episode: nope_00000, nope_00001"
    )
