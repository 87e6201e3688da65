"""``python -m pytvm``: the ``pytvm`` command."""

from __future__ import annotations

from pytvm.cli.main import main

raise SystemExit(main())
