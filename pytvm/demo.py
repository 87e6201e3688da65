"""Placeholder demo: ``make demo`` runs this module."""

from __future__ import annotations


def main() -> None:
    print("pytvm demo")


if __name__ == "__main__":
    main()
