"""
Printed text and representations
================================

Output printed by several blocks, and the value of a block's last expression.
"""

# %%
# Two lines printed by a loop.
for number in range(2):
    print(f"printed line {number}")

# %%
# A block that prints and also ends with a plain value: both show, in that order.
print("before the value")
sum(range(10))

# %%
# An object with an HTML representation as the last expression.


class Table:
    def _repr_html_(self) -> str:
        return "<table><tr><th>name</th></tr><tr><td>parity</td></tr></table>"

    def __repr__(self) -> str:
        return "Table(rows=1)"


Table()

# %%
# An object with only a text representation.


class Point:
    def __repr__(self) -> str:
        return "Point(x=1, y=2)"


Point()

# %%
# A type listed in ``ignore_repr_types``: its representation is not shown.


class Skipped:
    def __repr__(self) -> str:
        return "this representation must not appear"


Skipped()

# %%
# A cell magic in a text block, for ``promote_jupyter_magic``:
#
# .. code-block:: bash
#
#    %%bash
#    echo "a notebook runs this cell"
#
# A block whose last expression is ``None`` shows nothing but what it printed.
print("last block")
print() or None
