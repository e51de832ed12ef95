"""The client's errors: each message names the input at fault and the fix (the CLI prints it as one line)."""

from __future__ import annotations

import errno
from pathlib import Path


class ClientError(RuntimeError):
    """A prompt was refused or failed, or the input is bad; the message says which and the fix."""


class ServerDown(ClientError):
    """The server did not answer (refused, reset, timed out, 502-504): try it again later."""


class SpecError(ClientError):
    """A job spec field is bad; the message names the field and the fix."""


class WriteError(ClientError):
    """A results or image file could not be written; the batch stops (the message names the path and the fix)."""


def write_error(path: Path, e: OSError, what: str, option: str) -> WriteError:
    """A one-line WriteError for ``e`` raised while writing ``what`` at ``path`` (given by ``option``)."""
    where = e.filename or path
    if isinstance(e, (FileExistsError, NotADirectoryError)):
        fix = f"a file is where a folder should be on that path; remove it or give another {option}"
    elif isinstance(e, IsADirectoryError):
        fix = f"a folder is where the file should be; give {option} a file name"
    elif isinstance(e, PermissionError) or e.errno in (errno.EACCES, errno.EPERM):
        fix = f"no permission to write there; give {option} a folder you can write"
    elif e.errno == errno.ENOSPC or e.errno == getattr(errno, "EDQUOT", None):
        fix = f"the disk is full; free some space or give {option} a path on another disk"
    elif e.errno == errno.EROFS:
        fix = f"that file system is read-only; give {option} a writable path"
    else:
        fix = f"check that path, or give {option} another one"
    reason = (e.strerror or str(e) or type(e).__name__).replace("\n", " ")
    return WriteError(f"cannot write the {what} at {str(where)!r} ({reason}); {fix}")
