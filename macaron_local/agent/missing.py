"""What a request needs when no installed tool can do it, and the honest reply that says so.

Owns the table of needs the bundled plugins do not cover (weather, prices, orders, bookings,
messages, devices, calendars, news, banking): for each, the words that ask for it, the tool it
would take, the tool modules that would cover it, and the kind of plugin that adds such a tool.
:func:`honest_reply` writes the reply from that and the installed tools: which tool it would
need, that none is installed, which plugin would add it, that nothing was done. It decides
nothing about the answer itself (``truth.py`` does) and must not call the model.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass


@dataclass(frozen=True)
class Need:
    """A kind of tool: ``words`` ask for it; one of ``modules`` installed covers it."""

    words: re.Pattern[str]
    tool: str
    modules: tuple[str, ...]
    plugin: str


def _w(pattern: str) -> re.Pattern[str]:
    return re.compile(rf"\b({pattern})\b", re.I)


NEEDS = (
    Need(
        _w(r"weather|forecast|rain(ing|y)?|snow(ing)?|sunny|humid(ity)?|umbrella|degrees outside"),
        "a weather tool (something like `weather.forecast(city)`)",
        ("weather",),
        "a weather plugin that may reach a weather service",
    ),
    Need(
        _w(
            r"stocks?|shares?|bitcoin|btc|crypto|exchange rate|price of|how much (is|does|are)|"
            r"quote for|nasdaq|s&p"
        ),
        "a market-data tool (something like `markets.quote(symbol)`)",
        ("markets", "prices"),
        "a finance plugin that may reach a market-data service",
    ),
    Need(
        _w(
            r"order(ed|s)?|buy|purchase|deliver(y|ed)?|package|parcel|shipping|tracking|pizza|"
            r"groceries|takeout|take-out|cart|refund|return (my|the|this)"
        ),
        "a shopping or delivery tool (something like `orders.place(item)`)",
        ("orders", "shop", "delivery"),
        "a shop or delivery-service plugin for your account",
    ),
    Need(
        _w(
            r"flights?|trains?|bus|tickets?|hotel|book(ing)?|reserv(e|ation)|table for|uber|"
            r"lyft|taxi|cab|ride to|check[- ]in"
        ),
        "a booking tool (something like `bookings.reserve(...)`)",
        ("bookings", "travel", "rides"),
        "a travel, booking or ride-service plugin",
    ),
    Need(
        _w(
            r"e-?mails?|mail|texts?|sms|message|whatsapp|slack|telegram|signal|dm|call|phone|"
            r"ring"
        ),
        "a messaging tool (something like `messages.send(to, text)`)",
        ("messages", "email", "mail", "sms", "phone"),
        "an email, SMS or chat plugin",
    ),
    Need(
        _w(
            r"lights?|lamps?|thermostat|heat(ing|er)|fans?|a/?c|air ?con|tv|television|"
            r"speakers?|lock|unlock|door|garage|vacuum|smart home|play|music|songs?|playlist|"
            r"spotify|podcast|volume|pause"
        ),
        "a smart-home or media tool (something like `devices.set(name, state)`)",
        ("devices", "home", "media", "music"),
        "a smart-home or media-player plugin",
    ),
    Need(
        _w(r"calendar|meetings?|appointments?|events?|invites?|agenda"),
        "a calendar tool (something like `calendar.add(title, start)`)",
        ("calendar",),
        "a calendar plugin (CalDAV, Google or Outlook)",
    ),
    Need(
        _w(r"news|headlines|scores?|match|game last night|results"),
        "a news or sports tool (something like `news.headlines(topic)`)",
        ("news", "sports"),
        "a news or sports plugin that may reach the web",
    ),
    Need(
        _w(r"bank|balance|transfer|pay|payment|invoice|venmo|paypal"),
        "a banking or payments tool (something like `bank.balance()`)",
        ("bank", "payments"),
        "a banking or payments plugin for your account",
    ),
)


def need_for(request: str, installed: Collection[str]) -> Need | None:
    """The first need ``request`` asks for that no installed tool module covers, if any (None
    too when the request names an installed module: "remind me to call mom" is a reminder)."""
    modules = {name.split(".", 1)[0] for name in installed}
    if any(re.search(rf"\b{re.escape(m.rstrip('s')[:6])}", request, re.I) for m in modules):
        return None
    for need in NEEDS:
        if need.words.search(request) and not modules.intersection(need.modules):
            return need
    return None


def honest_reply(
    request: str,
    installed: Collection[str],
    tried: str = "",
    *,
    changed: bool = False,
    looked: bool = False,
) -> str:
    """The reply for a request no successful tool call answered (``tried``: what failed or
    what ran instead; ``changed``: that call did change something; ``looked``: a call that
    reads did run)."""
    modules = sorted({name.split(".", 1)[0] for name in installed})
    have = f"the tools installed here are {_join(modules)}" if modules else "no tools are installed"
    need = need_for(request, installed)
    if need is None:
        text = f"I did not do that: no tool call of this turn did it, and {have}."
    else:
        text = (
            f"I can't do that here: it needs {need.tool}, and no such tool is installed "
            f"({have}). {need.plugin[0].upper()}{need.plugin[1:]} would add it."
        )
    if tried:
        text += f" {tried}"
    if changed:
        return text + " That call's change stands; nothing else was done."
    return text + (" Nothing was changed." if looked else " Nothing was looked up or changed.")


def plugin_hint(request: str, installed: Collection[str]) -> str | None:
    """One sentence on the missing tool and the plugin that adds it (None: nothing missing)."""
    need = need_for(request, installed)
    if need is None:
        return None
    return f"This needs {need.tool}, which is not installed; {need.plugin} would add it."


def _join(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
