"""The error a user fixes: a node input whose value cannot be used.

Its message starts with the input's name and ends with the fix, e.g. ``resolutions: '512x' is not
WIDTHxHEIGHT (e.g. 1024x1024) ...``. The nodes turn it into one line on the node at fault, never
a traceback (``nodes/input_error.py``); scripts and the benchmark meet it as a ValueError.
"""

from __future__ import annotations


class InputError(ValueError):
    """A value of one node input that cannot be used; ``str()`` is ``"<input>: <what> ...; <fix>"``."""

    @property
    def field(self) -> str | None:
        """The input the message names (its text before the first colon), or None."""
        head = str(self).split(":", 1)[0]
        return head if head.isidentifier() else None
