"""Stateful, seeded sandbox apps and the world that holds them (docs/design.md §1-§2)."""
