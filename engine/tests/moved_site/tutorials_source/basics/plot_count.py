"""
바람 세기 세어 보기
======================

기록표의 바람 세기를 약, 중, 강의 세 등급으로 나누어 셉니다.
"""

from collections import Counter

readings = [2, 5, 3, 5, 8, 2, 5]
grades = Counter("약" if speed < 4 else "중" if speed < 7 else "강" for speed in readings)
for grade in ("약", "중", "강"):
    print(grade, grades[grade])
