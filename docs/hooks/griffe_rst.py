"""Griffe extension for the API pages: the docstrings' reStructuredText roles as Markdown code.

The library's docstrings are Google style with Sphinx roles (``:class:`~whist_env.spec.GameSpec```); mkdocstrings
reads docstrings as Markdown, where a role would print as written. Each role becomes a code span of the name
(the last dotted part when the role has ``~``), so the API pages read as the docstrings mean.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

ROLE = re.compile(r":(?:class|func|meth|mod|attr|data|obj|exc|py:\w+):`(~?)([^`]+)`")


def _code(match: re.Match[str]) -> str:
    name = match.group(2)
    return f"`{name.rsplit('.', 1)[-1] if match.group(1) else name}`"


class RstRoles(griffe.Extension):
    """Rewrites every docstring's roles when griffe loads an object."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = ROLE.sub(_code, obj.docstring.value)
