"""Stateful, seeded sandbox apps and the world that holds them (DESIGN sections 1-2)."""
