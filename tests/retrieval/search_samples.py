"""Documents that the search and snapshot tests ingest."""

from __future__ import annotations

LEAVE = b"# Leave\n\nEvery employee receives 25 days of paid annual leave per year.\n"
HOTEL = (
    "# 住宿标准\n\n一线城市住宿费每晚不超过 600 元；其他城市每晚不超过 450 元。\n"
).encode()
HOTEL_TRADITIONAL = (
    "# 住宿標準\n\n一線城市住宿費每晚不超過 600 元；其他城市每晚不超過 450 元。\n"
).encode()
