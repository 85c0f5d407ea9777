"""The ``talk`` messaging app: contacts, 1:1 and group chats, a feed, location sharing.

Tools are grouped by area in mixins (:mod:`.contacts`, :mod:`.chats`, :mod:`.groups`,
:mod:`.social`); this module assembles and registers the app.

Interdependencies an agent must handle:
- privileges of the system app: ``talk.contacts_write`` (change contacts),
  ``talk.group_admin`` (create and administer groups), ``talk.location`` (read or set the
  location, share it); a missing one gives ``permission_denied`` cured by
  ``system_request_privilege``;
- a blocked contact cannot be messaged, invited or shared with: ``precondition_failed``
  cured by ``talk_unblock_contact`` (itself needing ``talk.contacts_write``);
- a group owner must ``talk_transfer_group_ownership`` before ``talk_leave_group``.
"""

from __future__ import annotations

from mcpgym.kernel.app import App, register_app
from mcpgym.kernel.world import World
from mcpgym.sandboxes.talk.chats import ChatTools
from mcpgym.sandboxes.talk.contacts import ContactTools
from mcpgym.sandboxes.talk.generate import generate_state
from mcpgym.sandboxes.talk.groups import GroupTools
from mcpgym.sandboxes.talk.models import TalkState
from mcpgym.sandboxes.talk.social import SocialTools


@register_app
class TalkApp(ContactTools, ChatTools, GroupTools, SocialTools, App):
    """Messaging: contacts with tags and remarks, chats with read state, groups, posts, location."""

    name = "talk"
    title = "Talk"
    State = TalkState
    state: TalkState

    @classmethod
    def generate(cls, world: World) -> TalkState:
        """Seeded initial state (see :func:`mcpgym.sandboxes.talk.generate.generate_state`)."""
        return generate_state(world, lambda purpose: cls.stream(world, purpose))
