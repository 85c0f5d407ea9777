"""Calendar tools of the office app: events in a time range, create/update/delete with
conflict detection, attendees, invitations received, and free/busy.

Two events overlap when ``a.start < b.end and b.start < a.end`` (back-to-back is fine).
Creating, moving or accepting into an overlap fails with ``conflict`` unless
``allow_overlap`` is true.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from mcpgym.kernel.clock import iso
from mcpgym.kernel.errors import ErrorCode, ToolError
from mcpgym.kernel.spec import tool
from mcpgym.sandboxes.office.common import OfficeBase
from mcpgym.sandboxes.office.models import Attendee, Event, Invitation
from mcpgym.sandboxes.office.views import (
    EventDeleted,
    EventList,
    EventResult,
    EventView,
    FreeBusy,
    Interval,
    InvitationList,
    InvitationResult,
    InvitationView,
)

EventId = Annotated[str, Field(description="event id, e.g. ev-003")]
Time = Annotated[str, Field(description="ISO-8601 date-time in UTC, e.g. 2026-06-02T14:00:00Z")]
OptTime = Annotated[str | None, Field(description="ISO-8601 date-time in UTC, e.g. 2026-06-02T14:00:00Z")]
AllowOverlap = Annotated[bool, Field(description="accept an overlap with existing events instead of failing")]
MAX_EVENT = 14 * 86_400
"""Longest event (virtual seconds)."""
EVENT_NOT_FOUND = ["office_list_events"]
CONFLICT_CURES = ["office_get_free_busy", "office_list_events"]


class CalendarTools(OfficeBase):
    """Mixin: the calendar tools (see the module docstring)."""

    # -- helpers ---------------------------------------------------------------------------
    def _event(self, event_id: str) -> Event:
        e = self.state.events.get(event_id)
        if e is None:
            raise ToolError(ErrorCode.NOT_FOUND, f"no event {event_id!r}; see office_list_events", field="event_id")
        return e

    def _event_view(self, e: Event) -> EventView:
        return EventView(
            event_id=e.event_id,
            title=e.title,
            start=e.start,
            end=e.end,
            start_iso=iso(e.start),
            end_iso=iso(e.end),
            location=e.location,
            description=e.description,
            organizer=e.organizer,
            organizer_name=e.organizer_name,
            is_organizer=e.organizer == self.user_email,
            attendees=[a.model_copy() for a in e.attendees],
            invitation_id=e.invitation_id,
        )

    def _overlapping(self, start: int, end: int, exclude: str | None = None) -> list[Event]:
        hits = [e for e in self.state.events.values() if e.start < end and start < e.end and e.event_id != exclude]
        return sorted(hits, key=lambda e: (e.start, e.event_id))

    def _check_free(self, start: int, end: int, exclude: str | None, allow_overlap: bool) -> None:
        if allow_overlap:
            return
        hits = self._overlapping(start, end, exclude)
        if hits:
            names = "; ".join(f"{e.event_id} {e.title!r} {iso(e.start)}-{iso(e.end)}" for e in hits)
            raise ToolError(
                ErrorCode.CONFLICT,
                f"{iso(start)}-{iso(end)} overlaps {names}: pick a free time (office_get_free_busy) or pass "
                "allow_overlap=true",
                field="start",
                details={"conflicts": [e.event_id for e in hits]},
            )

    def _times(self, start: int, end: int) -> None:
        if end <= start:
            raise ToolError(ErrorCode.INVALID_ARGUMENT, "end must be after start", field="end")
        if end - start > MAX_EVENT:
            raise ToolError(ErrorCode.INVALID_ARGUMENT, "an event may last at most 14 days", field="end")

    def _require_organizer(self, e: Event) -> None:
        if e.organizer != self.user_email:
            raise ToolError(
                ErrorCode.PRECONDITION_FAILED,
                f"{e.event_id} is organised by {e.organizer_name}; only the "
                "organizer can change it (decline the invitation or delete the event instead)",
                field="event_id",
            )

    def _attendees(self, values: list[str], field: str) -> list[Attendee]:
        out: list[Attendee] = []
        for i, v in enumerate(values):
            addr = self.resolve_person(v, f"{field}.{i}")
            if addr != self.user_email and all(a.email != addr for a in out):
                out.append(Attendee(email=addr, name=self.display_name(addr)))
        return out

    def _invitation(self, invitation_id: str) -> Invitation:
        inv = self.state.invitations.get(invitation_id)
        if inv is None:
            raise ToolError(
                ErrorCode.NOT_FOUND,
                f"no invitation {invitation_id!r}; see office_list_invitations",
                field="invitation_id",
            )
        return inv

    def _invitation_view(self, inv: Invitation) -> InvitationView:
        conflicts = [e.event_id for e in self._overlapping(inv.start, inv.end, inv.event_id)]
        return InvitationView(
            invitation_id=inv.invitation_id,
            organizer=inv.organizer,
            organizer_name=inv.organizer_name,
            title=inv.title,
            start=inv.start,
            end=inv.end,
            start_iso=iso(inv.start),
            end_iso=iso(inv.end),
            location=inv.location,
            description=inv.description,
            other_attendees=list(inv.other_attendees),
            status=inv.status,
            event_id=inv.event_id,
            conflicts=conflicts,
        )

    # -- events ----------------------------------------------------------------------------
    @tool("read", ["office.event"])
    def office_list_events(
        self,
        start: Annotated[str | None, Field(description="range start, ISO-8601 UTC (default: now)")] = None,
        end: Annotated[str | None, Field(description="range end, ISO-8601 UTC (default: start + 7 days)")] = None,
        query: Annotated[
            str | None, Field(max_length=100, description="text in title, location or description")
        ] = None,
    ) -> EventList:
        """List calendar events overlapping a time range (default: the next 7 days), by start
        time; times in virtual seconds and ISO-8601 UTC."""
        lo, hi = self.parse_range(start, end)
        needle = None if query is None else query.strip().lower()
        events = [
            e
            for e in self._overlapping(lo, hi)
            if not needle or needle in f"{e.title} {e.location} {e.description}".lower()
        ]
        return EventList(range_start_iso=iso(lo), range_end_iso=iso(hi), events=[self._event_view(e) for e in events])

    @tool("read", ["office.event"], remedies={"not_found": EVENT_NOT_FOUND})
    def office_get_event(self, event_id: EventId) -> EventResult:
        """Show one event with its attendees and their responses."""
        return EventResult(event=self._event_view(self._event(event_id)))

    @tool(
        "write",
        ["office.event"],
        preconditions=["office.event"],
        remedies={"conflict": CONFLICT_CURES, "not_found": ["office_list_contacts"]},
    )
    def office_create_event(
        self,
        title: Annotated[str, Field(min_length=1, max_length=200, description="event title")],
        start: Time,
        end: Time,
        location: Annotated[str, Field(max_length=200)] = "",
        description: Annotated[str, Field(max_length=2_000)] = "",
        attendees: Annotated[
            list[str], Field(max_length=50, description="people to invite: emails, directory ids or names")
        ] = [],
        allow_overlap: AllowOverlap = False,
    ) -> EventResult:
        """Create an event organised by the user, optionally inviting attendees.

        Errors: conflict when it overlaps an existing event (unless allow_overlap); check
        office_get_free_busy for free time.
        """
        if not title.strip():
            raise ToolError(ErrorCode.INVALID_ARGUMENT, "the title must not be blank", field="title")
        lo, hi = self.parse_time(start, "start"), self.parse_time(end, "end")
        self._times(lo, hi)
        people = self._attendees(attendees, "attendees")
        self._check_free(lo, hi, None, allow_overlap)
        eid = self.new_id("ev")
        e = Event(
            event_id=eid,
            title=title.strip(),
            start=lo,
            end=hi,
            location=location.strip(),
            description=description,
            organizer=self.user_email,
            organizer_name=self.world.user.name,
            attendees=people,
        )
        self.state.events[eid] = e
        return EventResult(event=self._event_view(e), added=[a.email for a in people])

    @tool(
        "write",
        ["office.event"],
        preconditions=["office.event"],
        remedies={
            "conflict": CONFLICT_CURES,
            "not_found": EVENT_NOT_FOUND,
            "precondition_failed": ["office_respond_invitation"],
        },
    )
    def office_update_event(
        self,
        event_id: EventId,
        title: Annotated[str | None, Field(max_length=200)] = None,
        start: Annotated[
            str | None, Field(description="new start, ISO-8601 UTC; without end the duration is kept")
        ] = None,
        end: OptTime = None,
        location: Annotated[str | None, Field(max_length=200)] = None,
        description: Annotated[str | None, Field(max_length=2_000)] = None,
        allow_overlap: AllowOverlap = False,
    ) -> EventResult:
        """Change an event the user organises: title, time (a new start alone keeps the
        duration), location or description.

        Errors: conflict when the new time overlaps another event (unless allow_overlap);
        precondition_failed for someone else's event.
        """
        e = self._event(event_id)
        self._require_organizer(e)
        if all(v is None for v in (title, start, end, location, description)):
            raise ToolError(ErrorCode.INVALID_ARGUMENT, "give at least one field to change", field="title")
        lo = e.start if start is None else self.parse_time(start, "start")
        hi = (lo + (e.end - e.start) if start is not None else e.end) if end is None else self.parse_time(end, "end")
        self._times(lo, hi)
        if title is not None and not title.strip():
            raise ToolError(ErrorCode.INVALID_ARGUMENT, "the title must not be blank", field="title")
        if (lo, hi) != (e.start, e.end):
            self._check_free(lo, hi, e.event_id, allow_overlap)
        e.start, e.end = lo, hi
        if title is not None:
            e.title = title.strip()
        if location is not None:
            e.location = location.strip()
        if description is not None:
            e.description = description
        return EventResult(event=self._event_view(e))

    @tool("write", ["office.event"], remedies={"not_found": EVENT_NOT_FOUND}, destructive=True)
    def office_delete_event(self, event_id: EventId) -> EventDeleted:
        """Delete an event from the calendar. Deleting an accepted invitation's event declines
        that invitation."""
        e = self._event(event_id)
        del self.state.events[event_id]
        declined = None
        if e.invitation_id is not None and e.invitation_id in self.state.invitations:
            inv = self.state.invitations[e.invitation_id]
            inv.status, inv.event_id, declined = "declined", None, inv.invitation_id
        return EventDeleted(event_id=event_id, title=e.title, declined_invitation=declined)

    @tool("write", ["office.event"], remedies={"not_found": [*EVENT_NOT_FOUND, "office_list_contacts"]})
    def office_invite_attendees(
        self,
        event_id: EventId,
        attendees: Annotated[
            list[str],
            Field(min_length=1, max_length=50, description="people to invite: emails, directory ids or names"),
        ],
    ) -> EventResult:
        """Invite people to an event the user organises; already invited people are skipped
        (added lists the new ones). New attendees start as needs_action."""
        e = self._event(event_id)
        self._require_organizer(e)
        have = {a.email for a in e.attendees}
        new = [a for a in self._attendees(attendees, "attendees") if a.email not in have]
        e.attendees = [*e.attendees, *new]
        return EventResult(event=self._event_view(e), added=[a.email for a in new])

    # -- invitations -----------------------------------------------------------------------
    @tool("read", ["office.invitation"])
    def office_list_invitations(
        self,
        status: Annotated[
            Literal["pending", "accepted", "declined", "all"], Field(description="which invitations")
        ] = "pending",
    ) -> InvitationList:
        """List invitations the user received to other people's events, with the user's events
        each one overlaps (conflicts)."""
        invs = [i for i in self.state.invitations.values() if status == "all" or i.status == status]
        invs.sort(key=lambda i: (i.start, i.invitation_id))
        return InvitationList(invitations=[self._invitation_view(i) for i in invs])

    @tool(
        "write",
        ["office.invitation", "office.event"],
        preconditions=["office.invitation", "office.event"],
        remedies={"conflict": [*CONFLICT_CURES, "office_delete_event"], "not_found": ["office_list_invitations"]},
    )
    def office_respond_invitation(
        self,
        invitation_id: Annotated[str, Field(description="invitation id, e.g. inv-002")],
        response: Annotated[Literal["accept", "decline"], Field(description="accept or decline")],
        allow_overlap: AllowOverlap = False,
    ) -> InvitationResult:
        """Accept or decline an invitation. Accepting adds the event to the calendar (conflict
        when it overlaps an existing event, unless allow_overlap); declining an accepted
        invitation removes its event."""
        inv = self._invitation(invitation_id)
        if response == "accept":
            if inv.status == "accepted" and inv.event_id in self.state.events:
                return InvitationResult(
                    invitation=self._invitation_view(inv),
                    event=self._event_view(self.state.events[inv.event_id]),
                    changed=False,
                )
            self._check_free(inv.start, inv.end, None, allow_overlap)
            eid = self.new_id("ev")
            e = Event(
                event_id=eid,
                title=inv.title,
                start=inv.start,
                end=inv.end,
                location=inv.location,
                description=inv.description,
                organizer=inv.organizer,
                organizer_name=inv.organizer_name,
                attendees=[Attendee(email=a, name=self.display_name(a)) for a in inv.other_attendees],
                invitation_id=inv.invitation_id,
            )
            self.state.events[eid] = e
            inv.status, inv.event_id = "accepted", eid
            return InvitationResult(invitation=self._invitation_view(inv), event=self._event_view(e), changed=True)
        changed = inv.status != "declined"
        if inv.event_id is not None:
            self.state.events.pop(inv.event_id, None)
        inv.status, inv.event_id = "declined", None
        return InvitationResult(invitation=self._invitation_view(inv), event=None, changed=changed)

    # -- free/busy -------------------------------------------------------------------------
    @tool("read", ["office.event"])
    def office_get_free_busy(
        self,
        start: Time,
        end: Time,
        min_free_minutes: Annotated[
            int, Field(ge=0, le=1_440, description="only report free gaps at least this long")
        ] = 0,
    ) -> FreeBusy:
        """Free/busy for a time range: the user's busy intervals (overlapping events merged,
        with their event ids) and the free gaps between them (those of at least
        min_free_minutes), clipped to the range; busy_seconds + free_seconds = the range."""
        lo, hi = self.parse_range(start, end)
        busy: list[list] = []
        for e in self._overlapping(lo, hi):
            s, t = max(e.start, lo), min(e.end, hi)
            if busy and s <= busy[-1][1]:
                busy[-1][1] = max(busy[-1][1], t)
                busy[-1][2].append(e.event_id)
            else:
                busy.append([s, t, [e.event_id]])
        free: list[Interval] = []
        cursor = lo
        for s, t, _ in busy:
            if s > cursor:
                free.append(Interval(start=cursor, end=s, start_iso=iso(cursor), end_iso=iso(s)))
            cursor = max(cursor, t)
        if cursor < hi:
            free.append(Interval(start=cursor, end=hi, start_iso=iso(cursor), end_iso=iso(hi)))
        free = [f for f in free if f.end - f.start >= min_free_minutes * 60]
        busy_iv = [Interval(start=s, end=t, start_iso=iso(s), end_iso=iso(t), event_ids=ids) for s, t, ids in busy]
        return FreeBusy(
            range_start_iso=iso(lo),
            range_end_iso=iso(hi),
            busy=busy_iv,
            free=free,
            busy_seconds=sum(b.end - b.start for b in busy_iv),
            free_seconds=(hi - lo) - sum(b.end - b.start for b in busy_iv),
        )
