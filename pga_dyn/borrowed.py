"""Arrays lent to compiled code without reference counts.

numba's runtime counts the references to every array it allocates or receives (the array's
*meminfo*): a compiled function increments the count of each array argument on entry and
decrements it on exit, a view (a row, a slice, a reshape) increments its parent's, and each
count is an atomic instruction (a few nanoseconds). numba's pruning pass removes a pair only
where nothing in between could decrement, so a kernel whose loop calls other compiled functions
with many arrays keeps them: the record's assembly (:func:`pga_dyn.loops.parts.record_kernel`)
made about 800 counts a sample, a fifth of its time (docs/performance.md, issue 28).

:func:`borrowed` gives the same array, or every array of a tuple (nested tuples too), without
its meminfo: the same data, shape and strides, and numba's counts of it and of its views only
test a null pointer. Nothing then keeps the memory alive: the caller holds the arrays
themselves for as long as the borrowed ones are used, and no borrowed array may leave the call
(be returned or stored). The pattern: a kernel allocates or receives its arrays and passes
them borrowed to the function that loops, which returns no array. The caller of the kernel holds
its arguments; the arrays the kernel allocates it passes a second time, as they are (an argument
the loop does not read): numba drops a local's reference after its last use, which could
otherwise come before the loop runs.

In Python (``NUMBA_DISABLE_JIT=1``, a kernel's source run by :mod:`pga_dyn.interpreted`)
:func:`borrowed` returns its argument.
"""

from __future__ import annotations

from typing import TypeVar

from numba import types
from numba.core import cgutils
from numba.extending import intrinsic, overload

#: The type of what :func:`borrowed` lends: an array or a tuple.
Lent = TypeVar("Lent")


def borrowed(x: Lent) -> Lent:
    """``x`` (an array or a tuple of arrays and other values) for a compiled callee, without
    reference counts (module docstring); in Python, ``x`` itself."""
    return x


def _without_meminfo(context, builder, typ, value):
    """The LLVM value of ``value`` (numba type ``typ``) with the meminfo of every array in it null."""
    if isinstance(typ, types.Array):
        field = context.data_model_manager[typ].get_field_position("meminfo")
        return builder.insert_value(value, cgutils.get_null_value(value.type.elements[field]), field)
    if isinstance(typ, types.BaseTuple):
        for i, member in enumerate(typ):
            value = builder.insert_value(
                value, _without_meminfo(context, builder, member, builder.extract_value(value, i)), i
            )
    return value


@intrinsic
def _lend(typingctx, x):
    def codegen(context, builder, signature, args):
        return _without_meminfo(context, builder, signature.args[0], args[0])

    return x(x), codegen


@overload(borrowed, inline="always")
def _borrowed(x):
    return lambda x: _lend(x)
