"""The user in the loop: the task's user profile (:mod:`.profile`), seeded user simulators
(:mod:`.simulator`) and the channel through which an agent reaches the user and its turns are
recorded (:mod:`.channel`)."""

from mcpgym.evaluation.users.channel import UserChannel
from mcpgym.evaluation.users.profile import UserProfile
from mcpgym.evaluation.users.simulator import ScriptedUser, UserReply, UserSimulator, make_simulator

__all__ = ["ScriptedUser", "UserChannel", "UserProfile", "UserReply", "UserSimulator", "make_simulator"]
