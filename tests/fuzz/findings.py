"""What counts as a finding when fuzzing: any exception but edgepipe's clean refusal, and a refusal that wraps
an unexpected exception (a bug dressed up as a user error)."""

from __future__ import annotations

import tomllib

from pydantic import ValidationError

from edgepipe.errors import EdgepipeError, UserError
from edgepipe.load.rejections import is_expected_rejection

#: Exceptions a config or profile refusal may come from: the TOML parser, the decoder, pydantic, a missing file.
PARSER_REJECTIONS = (tomllib.TOMLDecodeError, UnicodeDecodeError, ValidationError, FileNotFoundError)


def assert_expected_refusal(error: EdgepipeError,
                            expected_context: tuple[type[BaseException], ...] = PARSER_REJECTIONS) -> None:
    """``error`` is a user error whose cause is a library's rejection (or none), raised while handling at most
    an expected parser error; anything else is a finding."""
    assert isinstance(error, UserError), f"not a user error: {error!r}"
    assert is_expected_rejection(error), f"wraps an unexpected {type(error.__cause__).__name__}: {error.__cause__!r}"
    context = error.__context__
    assert context is None or isinstance(context, (*expected_context, EdgepipeError)), \
        f"raised while handling an unexpected {type(context).__name__}: {context!r}"
    assert error.one_line() and "\n" not in error.one_line().strip()
