"""The ``pytvm`` command: one thin argparse module per subcommand."""

from __future__ import annotations

__all__: list[str] = []
