"""Argument types the management commands share (argparse `type=`)."""

from __future__ import annotations


def positive_int(value: str) -> int:
    number = int(value)
    if number <= 0:
        raise ValueError(value)
    return number


def positive_float(value: str) -> float:
    number = float(value)
    if number <= 0:
        raise ValueError(value)
    return number
