"""Bundled plugin: date/time and unit maths (``clock.now``, ``clock.days_until``,
``units.convert``). Pure functions of the tool context's clock; no side effects.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from macaron_local.agent.tools import tool_context
from macaron_local.plugins import hookimpl

# factor to the kind's base unit (m, kg, l, m/s, kPa, m2)
LINEAR: dict[str, dict[str, float]] = {
    "length": {
        "mm": 0.001,
        "cm": 0.01,
        "m": 1.0,
        "km": 1000.0,
        "in": 0.0254,
        "ft": 0.3048,
        "yd": 0.9144,
        "mi": 1609.344,
    },
    "mass": {"g": 0.001, "kg": 1.0, "oz": 0.028349523125, "lb": 0.45359237},
    "volume": {
        "ml": 0.001,
        "l": 1.0,
        "tsp": 0.00492892159375,
        "tbsp": 0.01478676478125,
        "cup": 0.2365882365,
        "fl_oz": 0.0295735295625,
        "gal": 3.785411784,
    },
    "speed": {"kph": 1 / 3.6, "mph": 0.44704, "m/s": 1.0},
    "pressure": {"psi": 6.894757293168, "bar": 100.0, "kPa": 1.0},
    "area": {"m2": 1.0, "km2": 1e6, "ft2": 0.09290304, "acre": 4046.8564224, "ha": 10000.0},
}
TEMPERATURE = ("C", "F", "K")


def clock_now() -> str:
    """The current local time, 'YYYY-MM-DDTHH:MM:SS'."""
    return tool_context().now().strftime("%Y-%m-%dT%H:%M:%S")


def clock_days_until(date: str) -> int:
    """Days from today to 'YYYY-MM-DD' (negative if past)."""
    return (dt.date.fromisoformat(str(date)[:10]) - tool_context().now().date()).days


def _kind(unit: str) -> str | None:
    if unit in TEMPERATURE:
        return "temperature"
    return next((k for k, table in LINEAR.items() if unit in table), None)


def _to_kelvin(v: float, unit: str) -> float:
    return {"C": v + 273.15, "F": (v - 32) * 5 / 9 + 273.15, "K": v}[unit]


def _from_kelvin(k: float, unit: str) -> float:
    return {"C": k - 273.15, "F": (k - 273.15) * 9 / 5 + 32, "K": k}[unit]


def _known(kind: str | None) -> str:
    if kind == "temperature":
        return f"known temperature units: {' '.join(TEMPERATURE)}"
    if kind:
        return f"known {kind} units: {' '.join(LINEAR[kind])}"
    return "known units: " + "; ".join(
        f"{k} {' '.join(t)}" for k, t in {**LINEAR, "temperature": TEMPERATURE}.items()
    )


def units_convert(value: float, from_unit: str, to_unit: str) -> float:
    """Convert ``value`` between units of one kind; rounded to 4 decimals."""
    src, dst = _kind(from_unit), _kind(to_unit)
    if src is None:
        raise ValueError(f"unknown unit {from_unit!r} ({_known(dst)})")
    if dst is None:
        raise ValueError(f"unknown unit {to_unit!r} ({_known(src)})")
    if src != dst:
        raise ValueError(f"cannot convert {src} ({from_unit}) to {dst} ({to_unit})")
    v = float(value)
    if src == "temperature":
        return round(_from_kelvin(_to_kelvin(v, from_unit), to_unit), 4)
    return round(v * LINEAR[src][from_unit] / LINEAR[src][to_unit], 4)


@hookimpl
def register_tools(register: Any) -> None:
    register.module("clock", "the current date and time, days until a date")
    register.module("units", "convert units and do arithmetic on the user's numbers")
    register(clock_now, name="clock.now")
    register(clock_days_until, name="clock.days_until")
    register(units_convert, name="units.convert")
