"""
시간별 바람 세기 그리기
==========================

하루 동안 잰 바람 세기를 선 그래프로 그립니다.
"""

import math

import matplotlib.pyplot as plt

hours = list(range(24))
speeds = [round(3 + 2 * math.sin(hour / 24 * 2 * math.pi), 2) for hour in hours]

fig, ax = plt.subplots(figsize=(5, 3))
ax.plot(hours, speeds, marker="o")
ax.set_title("Wind speed by hour")
ax.set_xlabel("hour")
ax.set_ylabel("m/s")
fig.tight_layout()

# %%
# 바람이 가장 셌던 시각을 찾습니다.

print("가장 센 바람:", max(speeds), "m/s, 시각:", hours[speeds.index(max(speeds))])
