"""Small documents for the answer tests: every number in them is distinctive."""

from __future__ import annotations

TRAVEL = """# 差旅报销制度

## 住宿标准

一线城市住宿费每晚不超过 600 元。其他城市每晚不超过 450 元。

## 餐饮补助

出差期间每天发放餐饮补助 100 元，按实际出差天数计算，无需提供发票。
""".encode()

HANDBOOK = b"""# Employee Handbook

## Annual leave

Every full-time employee receives 25 days of paid annual leave per calendar year.
Leave requests are submitted in the HR portal.

## Working hours

Our core working hours are 10:00 to 16:00 in your local time zone.
"""

TABLE = """# 住宿标准

| 城市类别 | 每晚上限（元） |
|---|---|
| 一线城市 | 600 |
| 其他城市 | 450 |
""".encode()


def leave(days: int) -> bytes:
    return f"# 年假\n\n每位员工每年享有 {days} 天带薪年假。\n".encode()


# Parallel items: a follow-up about one level must find that level's sentence.
LEVELS = b"""# Incident response

## Level 1
A level 1 incident must be answered within 7 minutes.

## Level 2
A level 2 incident must be answered within 30 minutes.
"""

LEVELS_ZH = """# 事件响应

## 一级事件
一级事件必须在 7 分钟内响应，由值班工程师处理。

## 二级事件
二级事件必须在 30 分钟内响应，由团队负责人处理。
""".encode()

# TRAVEL as a Taiwan or Hong Kong office would write it.
TRAVEL_TRADITIONAL = """# 差旅報銷制度

## 住宿標準

一線城市住宿費每晚不超過 600 元。其他城市每晚不超過 450 元。

## 餐飲補助

出差期間每天發放餐飲補助 100 元，按實際出差天數計算，無需提供發票。
""".encode()
