"""The ``system`` app: virtual time, the user's profile, privileges, authentication, the
shared wallet and one-use payment authorisations (see :mod:`mcpgym.sandboxes.system.app`)."""

from mcpgym.sandboxes.system.app import SystemApp, SystemState

__all__ = ["SystemApp", "SystemState"]
