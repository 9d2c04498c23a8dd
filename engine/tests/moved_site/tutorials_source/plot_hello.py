r"""
바람개비에게 인사하기
========================

몇 줄을 출력하는 가장 짧은 예제입니다. |site|\ 의 첫 예제입니다.

.. image:: /_static/img/pinwheel.svg
   :alt: 날개가 넷인 바람개비 그림
   :width: 120px
"""

# %%
# 날개 네 개의 이름을 차례로 출력합니다.

wings = ["북", "동", "남", "서"]
for number, wing in enumerate(wings, 1):
    print(f"날개 {number}: {wing}")

# %%
# 사이트의 지시문은 예제의 글에서도 쓸 수 있습니다.
#
# .. spin:: 4

print("한 바퀴를 다 돌았습니다")
