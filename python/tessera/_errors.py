"""The exceptions of the tessera package.

Every error the C++ core reports arrives as one of these, carrying the
message the ``tessera`` CLI prints after ``tessera: error:``, word for word:
the file or option, the line and field, and what is wrong.
"""

from __future__ import annotations


class TesseraError(Exception):
    """Base class of every tessera error.

    ``exit_code`` is what the CLI exits with for the same error: 2 for bad
    input, 1 for an internal error (a bug), 3 for an infeasible request.
    """

    exit_code = 1


class InputError(TesseraError, ValueError):
    """Bad input: a malformed file, an out-of-range value, an unknown option."""

    exit_code = 2


class NotFoundError(InputError, LookupError):
    """A named file, model, GPU, planner or policy does not exist."""


class FileError(InputError, OSError):
    """The file system refused a read."""


class InfeasibleError(TesseraError):
    """What was asked cannot be done, e.g. no transition keeps every floor
    within the spare GPUs given (the message says how many are needed)."""

    exit_code = 3


class InternalError(TesseraError, RuntimeError):
    """An invariant does not hold: a bug in tessera (please report it)."""

    exit_code = 1
