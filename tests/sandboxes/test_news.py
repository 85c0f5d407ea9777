"""Tests of the news sandbox app, in-process through the real ToolInvoker (no faults)."""

from __future__ import annotations

import random
import re

import pytest

import mcpgym.sandboxes.news  # noqa: F401 - registers the app
from mcpgym.kernel.clock import EPOCH_START
from mcpgym.kernel.world import World
from mcpgym.tools.invoke import ToolInvoker
from tests.support.app_helpers import err, ok, random_value

SEED = 7


@pytest.fixture
def inv() -> ToolInvoker:
    return ToolInvoker(World(SEED, ["system", "news"]), "none")


def state(inv: ToolInvoker):
    return inv.world.app("news").state


def test_corpus_shape_and_shared_people(inv):
    st = state(inv)
    people = {p.person_id: p.name for p in inv.world.people}
    assert len(st.articles) == 72
    assert sorted(st.sections) == sorted(
        ["world", "business", "tech", "sport", "science", "culture", "health", "travel"]
    )
    assert {a.section for a in st.articles.values()} == set(st.sections)
    for art in st.articles.values():
        assert people[art.author_id] == art.author_name  # authors come from the shared directory
        assert EPOCH_START - 30 * 86_400 <= art.published_at < EPOCH_START
        assert art.title and art.summary and art.body and art.section in art.tags
    assert len({a.title for a in st.articles.values()}) == 72
    premium = sum(a.premium for a in st.articles.values())
    assert 5 < premium < 40
    authors = ok(inv, "news_list_authors")["authors"]
    assert len(authors) == 10
    assert sum(a["article_count"] for a in authors) == 72
    sections = ok(inv, "news_list_sections")["sections"]
    assert [s["article_count"] for s in sections] == [9] * 8


def test_list_latest_by_section(inv):
    st = state(inv)
    out = ok(inv, "news_list_latest", section="tech", limit=5)
    expected = sorted((a for a in st.articles.values() if a.section == "tech"), key=lambda a: -a.published_at)
    assert out["total"] == 9
    assert [a["article_id"] for a in out["articles"]] == [a.article_id for a in expected[:5]]
    times = [a["published_at"] for a in out["articles"]]
    assert times == sorted(times, reverse=True)
    free = ok(inv, "news_list_latest", free_only=True, limit=100)
    assert free["total"] == sum(not a.premium for a in st.articles.values())
    assert err(inv, "news_list_latest", "not_found", section="gossip")["field"] == "section"


def test_keyword_search_matches_every_term(inv):
    st = state(inv)

    def text(a):
        return " ".join([a.title, a.summary, a.body, " ".join(a.tags), a.author_name]).lower()

    expected = {a.article_id for a in st.articles.values() if re.search(r"\blisbon", text(a))}
    out = ok(inv, "news_search_articles", query="Lisbon", limit=100)
    assert expected and {h["article"]["article_id"] for h in out["results"]} == expected
    assert out["total"] == len(expected)
    scores = [h["score"] for h in out["results"]]
    assert scores == sorted(scores, reverse=True)
    if any("lisbon" in a.title.lower() for a in st.articles.values()):
        assert "lisbon" in out["results"][0]["article"]["title"].lower()

    target = sorted(st.articles.values(), key=lambda a: a.article_id)[10]
    words = [w for w in re.findall(r"[a-z]+", target.title.lower()) if len(w) > 3][:2]
    hits = ok(inv, "news_search_articles", query=" ".join(words), limit=100)["results"]
    assert target.article_id in [h["article"]["article_id"] for h in hits]
    assert all(all(w in text(st.articles[h["article"]["article_id"]]) for w in words) for h in hits)

    assert ok(inv, "news_search_articles", query="zzqqxx")["total"] == 0
    assert err(inv, "news_search_articles", "invalid_argument", query="the of")["field"] == "query"
    sec = ok(inv, "news_search_articles", query="the " + target.section, section=target.section, limit=100)
    assert sec["total"] == 9


def test_filter_by_author_and_tag_is_declared_alternative(inv):
    st = state(inv)
    specs = inv.specs
    assert "news_filter_articles" in specs["news_search_articles"].alternatives
    assert "news_search_articles" in specs["news_filter_articles"].alternatives
    author = sorted(st.authors.values(), key=lambda a: a.author_id)[0]
    by_id = ok(inv, "news_filter_articles", author=author.author_id, limit=100)
    by_name = ok(inv, "news_filter_articles", author=author.name.upper(), limit=100)
    expected = sorted(
        (a for a in st.articles.values() if a.author_id == author.author_id),
        key=lambda a: (-a.published_at, a.article_id),
    )
    assert [a["article_id"] for a in by_id["articles"]] == [a.article_id for a in expected]
    assert by_name == by_id
    # the same author is found by keyword search too (author names are searchable)
    kw = {h["article"]["article_id"] for h in ok(inv, "news_search_articles", query=author.name, limit=100)["results"]}
    assert {a.article_id for a in expected} <= kw
    tags = ok(inv, "news_list_tags", limit=500)["tags"]
    tag = next(t for t in tags if t["tag"] == "privacy") if any(t["tag"] == "privacy" for t in tags) else tags[-1]
    by_tag = ok(inv, "news_filter_articles", tag=tag["tag"], limit=100)
    assert by_tag["total"] == tag["count"]
    assert all(tag["tag"] in a["tags"] for a in by_tag["articles"])
    assert err(inv, "news_filter_articles", "invalid_argument")["field"] == "author"
    assert err(inv, "news_filter_articles", "not_found", tag="no-such-tag")["field"] == "tag"
    assert err(inv, "news_filter_articles", "not_found", author="Nobody Atall")["field"] == "author"


def test_bookmarks_add_remove_list(inv):
    st = state(inv)
    seeded = ok(inv, "news_list_bookmarks")["bookmarks"]
    assert len(seeded) == 2
    aid = next(a for a in sorted(st.articles) if a not in st.bookmarks)
    res = ok(inv, "news_add_bookmark", article_id=aid, note="read later")
    assert res == {"article_id": aid, "bookmarked": True, "bookmark_count": 3}
    listed = ok(inv, "news_list_bookmarks")["bookmarks"]
    assert listed[0]["article"]["article_id"] == aid and listed[0]["note"] == "read later"
    assert listed[0]["article"]["bookmarked"] is True
    err(inv, "news_add_bookmark", "conflict", article_id=aid)
    err(inv, "news_add_bookmark", "not_found", article_id="art-999")
    assert ok(inv, "news_remove_bookmark", article_id=aid)["bookmark_count"] == 2
    assert aid not in [b["article"]["article_id"] for b in ok(inv, "news_list_bookmarks")["bookmarks"]]
    err(inv, "news_remove_bookmark", "not_found", article_id=aid)


def test_read_history_grows_on_reading_and_clears(inv):
    st = state(inv)
    before = ok(inv, "news_list_history")
    assert before["total"] == 3
    free = [a for a in sorted(st.articles) if not st.articles[a].premium and a not in st.history]
    view = ok(inv, "news_read_article", article_id=free[0])
    assert view["body"] == st.articles[free[0]].body and view["read_count"] == 1
    hist = ok(inv, "news_list_history")
    assert hist["total"] == 4 and hist["history"][0]["article_id"] == free[0]
    ok(inv, "news_read_article", article_id=free[1])
    assert ok(inv, "news_read_article", article_id=free[0])["read_count"] == 2
    hist = ok(inv, "news_list_history")
    assert hist["total"] == 5
    assert [h["article_id"] for h in hist["history"][:2]] == [free[0], free[1]]
    assert hist["history"][0]["read_count"] == 2
    # details do not touch history
    info = ok(inv, "news_get_article", article_id=free[2])
    assert info["article"]["accessible"] is True and info["unlock_options"] == []
    assert ok(inv, "news_list_history")["total"] == 5
    assert ok(inv, "news_clear_history", article_id=free[1]) == {"removed": 1, "remaining": 4}
    err(inv, "news_clear_history", "not_found", article_id=free[1])
    assert ok(inv, "news_clear_history") == {"removed": 4, "remaining": 0}
    assert ok(inv, "news_list_history") == {"history": [], "total": 0}


def test_premium_gating_privilege_chain_and_exact_charge(inv):
    st = state(inv)
    art = next(a for a in sorted(st.articles.values(), key=lambda a: a.article_id) if a.premium)
    price = st.sections[art.section].premium_price_cents
    ok(inv, "system_revoke_privilege", privilege="news.subscriptions")

    # 1. premium article is locked
    e = err(inv, "news_read_article", "precondition_failed", article_id=art.article_id)
    assert e["details"]["section"] == art.section and e["details"]["author_id"] == art.author_id
    assert "news_add_subscription" in inv.specs["news_read_article"].remedies["precondition_failed"]
    assert art.article_id not in st.history
    info = ok(inv, "news_get_article", article_id=art.article_id)
    assert info["article"]["accessible"] is False and len(info["unlock_options"]) == 2

    # 2. premium subscription needs the privilege
    e = err(
        inv, "news_add_subscription", "permission_denied", target_kind="section", target_id=art.section, tier="premium"
    )
    assert e["details"]["privilege"] == "news.subscriptions"
    assert inv.specs["news_add_subscription"].remedies["permission_denied"] == ("system_request_privilege",)
    ok(inv, "system_request_privilege", privilege="news.subscriptions")

    # 3. and a payment authorisation
    e = err(
        inv,
        "news_add_subscription",
        "precondition_failed",
        target_kind="section",
        target_id=art.section,
        tier="premium",
    )
    assert e["details"]["price_cents"] == price
    small = ok(inv, "system_authorize_payment", limit_cents=price - 1)["authorization"]["auth_id"]
    balance0 = ok(inv, "system_get_wallet_balance")["balance_cents"]
    err(
        inv,
        "news_add_subscription",
        "precondition_failed",
        target_kind="section",
        target_id=art.section,
        tier="premium",
        authorization_id=small,
    )
    assert ok(inv, "system_get_wallet_balance")["balance_cents"] == balance0
    auth = ok(inv, "system_authorize_payment", limit_cents=price, purpose="news")["authorization"]["auth_id"]
    res = ok(
        inv,
        "news_add_subscription",
        target_kind="section",
        target_id=art.section,
        tier="premium",
        authorization_id=auth,
    )
    assert res["charged_cents"] == price and res["transaction_id"]
    assert res["subscription"]["tier"] == "premium" and res["subscription"]["active"] is True
    assert ok(inv, "system_get_wallet_balance")["balance_cents"] == balance0 - price
    txn = ok(inv, "system_list_transactions", limit=1)["transactions"][0]
    assert txn["amount_cents"] == -price and "news premium" in txn["memo"]

    # 4. now readable, and recorded
    view = ok(inv, "news_read_article", article_id=art.article_id)
    assert view["article"]["premium"] is True and view["body"] == art.body
    assert ok(inv, "news_list_history")["history"][0]["article_id"] == art.article_id
    assert ok(inv, "news_get_article", article_id=art.article_id)["unlock_options"] == []

    # 5. the authorisation is one-use; a second premium subscription to the same target conflicts
    err(
        inv,
        "news_add_subscription",
        "conflict",
        target_kind="section",
        target_id=art.section,
        tier="premium",
        authorization_id=auth,
    )
    other = next(a for a in sorted(st.authors) if a != art.author_id)
    err(
        inv,
        "news_add_subscription",
        "precondition_failed",
        target_kind="author",
        target_id=other,
        tier="premium",
        authorization_id=auth,
    )
    assert ok(inv, "system_get_wallet_balance")["balance_cents"] == balance0 - price

    # 6. cancelling ends access at once, without refund
    ok(inv, "news_remove_subscription", subscription_id=f"section:{art.section}")
    err(inv, "news_read_article", "precondition_failed", article_id=art.article_id)
    assert ok(inv, "system_get_wallet_balance")["balance_cents"] == balance0 - price


def test_author_premium_and_free_subscriptions_feed(inv):
    st = state(inv)
    ok(inv, "system_request_privilege", privilege="news.subscriptions")
    subs = ok(inv, "news_list_subscriptions")["subscriptions"]
    assert len(subs) == 2 and all(s["tier"] == "free" for s in subs)
    author = next(
        a
        for a in sorted(st.authors.values(), key=lambda a: a.author_id)
        if f"author:{a.author_id}" not in st.subscriptions
        and any(x.premium and x.author_id == a.author_id for x in st.articles.values())
    )
    res = ok(inv, "news_add_subscription", target_kind="author", target_id=author.name)
    assert res["subscription"]["subscription_id"] == f"author:{author.author_id}" and res["charged_cents"] == 0
    err(inv, "news_add_subscription", "conflict", target_kind="author", target_id=author.author_id)
    feed = ok(inv, "news_list_feed", limit=100)
    followed_sections = {s.target_id for s in st.subscriptions.values() if s.target_kind == "section"}
    followed_authors = {s.target_id for s in st.subscriptions.values() if s.target_kind == "author"}
    expected = {
        a.article_id for a in st.articles.values() if a.section in followed_sections or a.author_id in followed_authors
    }
    assert {a["article_id"] for a in feed["articles"]} == expected and feed["total"] == len(expected)
    locked = next(a for a in st.articles.values() if a.premium and a.author_id == author.author_id)
    err(inv, "news_read_article", "precondition_failed", article_id=locked.article_id)
    # upgrade the free subscription to premium: charged the author's price exactly
    balance0 = ok(inv, "system_get_wallet_balance")["balance_cents"]
    auth = ok(inv, "system_authorize_payment", limit_cents=10_000)["authorization"]["auth_id"]
    res = ok(
        inv,
        "news_add_subscription",
        target_kind="author",
        target_id=author.author_id,
        tier="premium",
        authorization_id=auth,
    )
    assert res["charged_cents"] == author.premium_price_cents
    assert ok(inv, "system_get_wallet_balance")["balance_cents"] == balance0 - author.premium_price_cents
    assert ok(inv, "news_read_article", article_id=locked.article_id)["read_count"] == 1
    ok(inv, "news_remove_subscription", subscription_id=f"author:{author.author_id}")
    err(inv, "news_remove_subscription", "not_found", subscription_id=f"author:{author.author_id}")
    assert len(ok(inv, "news_list_subscriptions")["subscriptions"]) == 2


def _script(inv: ToolInvoker) -> None:
    st = state(inv)
    free = [a for a in sorted(st.articles) if not st.articles[a].premium]
    ok(inv, "news_read_article", article_id=free[5])
    ok(inv, "news_add_bookmark", article_id=free[6], note="x")
    ok(inv, "news_add_subscription", target_kind="section", target_id=_unfollowed(inv))
    ok(inv, "news_clear_history", article_id=free[5])


def _unfollowed(inv: ToolInvoker) -> str:
    return next(s for s in sorted(state(inv).sections) if f"section:{s}" not in state(inv).subscriptions)


def test_same_seed_same_state_hash_and_snapshot_round_trip():
    a, b = World(SEED, ["system", "news"]), World(SEED, ["system", "news"])
    assert a.state_hash() == b.state_hash()
    assert World(SEED + 1, ["system", "news"]).state_hash() != a.state_hash()
    # the news state does not depend on which other apps are present
    assert World(SEED, ["system", "news", "office"]).snapshot()["state"]["news"] == a.snapshot()["state"]["news"]
    ia, ib = ToolInvoker(a, "none"), ToolInvoker(b, "none")
    section = _unfollowed(ia)
    _script(ia)
    _script(ib)
    assert a.state_hash() == b.state_hash()
    restored = World.restore(a.snapshot())
    assert restored.state_hash() == a.state_hash()
    # the restored world carries on exactly like the original
    ir = ToolInvoker(restored, "none")
    first_free = sorted(k for k, v in state(ia).articles.items() if not v.premium)[0]
    for inv in (ia, ir):
        ok(inv, "news_read_article", article_id=first_free)
        ok(inv, "news_remove_subscription", subscription_id=f"section:{section}")
    assert restored.state_hash() == a.state_hash()
    assert f"section:{section}" not in state(ir).subscriptions and first_free in state(ir).history


def test_read_tools_do_not_change_state(inv):
    h = inv.world.state_hash()
    needs_args = {"news_filter_articles", "news_search_articles", "news_get_article"}
    for name, spec in inv.specs.items():
        if spec.app == "news" and spec.kind == "read" and name not in needs_args:
            ok(inv, name)
    ok(inv, "news_filter_articles", tag="tech")
    ok(inv, "news_search_articles", query="bank")
    ok(inv, "news_get_article", article_id="art-001")
    assert inv.world.state_hash() == h


VALUES = {
    "string": ["", " ", "zz", "art-001", "art-999", "tech", "p-001", "section:tech", "../x", "Z" * 300],
    "integer": [0, 1, -3, 10**12],
    "boolean": [True, False],
}


def _value(r: random.Random, schema: dict):
    return random_value(r, schema, VALUES)


def test_no_input_crashes_a_news_tool(inv):
    r = random.Random(0)
    calls = 0
    for name, spec in sorted(inv.specs.items()):
        if spec.app != "news":
            continue
        props = spec.input_schema().get("properties", {})
        for _ in range(25):
            args = {k: _value(r, v) for k, v in props.items() if r.random() < 0.8}
            out = inv.call(name, args)
            calls += 1
            assert not out.record.internal, (name, args, out.payload)
        assert not inv.call(name, {"unexpected": 1}).record.internal
        assert not inv.call(name, ["not", "an", "object"]).record.internal
    assert calls == 17 * 25
