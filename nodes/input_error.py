"""A BCG node that meets an input it cannot use stops with one line, on that node, never a traceback.

Values judged from their text alone fail at validation (``validate_inputs``). Values that can only
be judged once the node runs (a frame count on an image model, a mode the model's family cannot
take, a warm-up without BCG Apply before it) raise :class:`~bcg_runtime.errors.InputError` in
``bcg_runtime.comfy.api``; the node turns it into ComfyUI's execution blocker: the nodes fed by it
do not run, and ComfyUI shows ``Execution Blocked: <message>`` with no traceback. The message
names the node, the input and the fix; the node's badge names the input (``bcg.input_error``
event) and the log gets the same line once.
"""

from __future__ import annotations

import logging

from comfy_api.latest import io

from bcg_runtime.comfy import api
from bcg_runtime.comfy.api import InputError

log = logging.getLogger(__name__)


def message(node: str, node_id: str | None, error: InputError) -> str:
    """``"BCG Warmup Capture #8: resolutions: '64x64x5' gives a frame count, ...; write 64x64"``."""
    where = f"{node} #{node_id}" if node_id is not None else node
    return f"{where}: {error}"


def blocked(node: str, node_id: str | None, error: InputError, ui_text: bool = False) -> io.NodeOutput:
    """The node's output when ``error`` stops it: every output blocked with the message."""
    text = message(node, node_id, error)
    log.error("[BCG] %s", text)
    api.publish_input_error(node_id, text, error.field)
    return io.NodeOutput(None, block_execution=text, ui={"text": (text,)} if ui_text else None)
