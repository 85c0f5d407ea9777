"""Sending money to a person: the system tool that needs the user.

``system_send_money`` pays a person of the user's directory from the wallet. Two things only
the user can settle (see :mod:`mcpgym.kernel.user`):

* a recipient name that matches several people (``choose``: argument ``recipient``);
* a payment over :data:`CONFIRM_ABOVE_CENTS` (``confirm``: argument ``confirmed_by_user``);
* a payment over :data:`ONE_TIME_CODE_ABOVE_CENTS`, once confirmed: the bank's one-time code,
  texted to the user's phone (``provide``: argument ``one_time_code``). Only the user has it:
  no tool reads it; it is drawn from the world seed, the recipient and the amount
  (:meth:`PaymentsMixin.one_time_code`), so a task's user profile can hold it.

Effects of the user's answer (an MCP elicitation, or the argument given after asking in
text): accept -> the payment is made (``status`` ``sent``); decline of a confirmation
(``confirmed_by_user`` false) -> nothing is sent, a notification records the refusal, the call
answers ``status`` ``declined``; decline of a choice or of the one-time code, or cancel ->
nothing changes (tool errors ``user_declined`` / ``user_input_required``); a one-time code that
does not match -> ``permission_denied`` on ``one_time_code``, nothing sent.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import BaseModel, Field

from mcpgym.kernel.errors import ErrorCode, ToolError
from mcpgym.kernel.spec import tool
from mcpgym.kernel.user import UserInputRequired, UserRequest

if TYPE_CHECKING:
    from mcpgym.kernel.people import Person

CONFIRM_ABOVE_CENTS = 10_000
"""Payments above this (cents; $100.00) need the user's confirmation."""

ONE_TIME_CODE_ABOVE_CENTS = 50_000
"""Payments above this (cents; $500.00) also need the bank's one-time code, which only the user has."""


def usd(cents: int) -> str:
    """``12345`` -> ``"$123.45"`` (cents to a dollar amount, for messages)."""
    sign = "-" if cents < 0 else ""
    return f"{sign}${abs(cents) // 100:,}.{abs(cents) % 100:02d}"


class SentPayment(BaseModel):
    """A payment to a person: sent, or declined by the user (nothing sent); the
    recipient, the amount (cents), the memo and the wallet balance after it (cents)."""

    status: Literal["sent", "declined"]
    recipient: str
    person_id: str
    amount_cents: int
    memo: str
    balance_cents: int


class PaymentsMixin:
    """``system_send_money`` and its user check (mixed into ``SystemApp``)."""

    def _recipients(self, recipient: str) -> list[Person]:
        """People matching ``recipient``: an exact person id or full name (case-insensitive)
        gives one; otherwise everyone whose name has a word starting with each word given."""
        people = self.world.people  # type: ignore[attr-defined]
        wanted = recipient.strip().lower()
        exact = [p for p in people if p.person_id == recipient.strip() or p.name.lower() == wanted]
        if exact:
            return exact
        words = wanted.split()
        if not words:
            return []
        return [p for p in people if all(any(part.startswith(w) for part in p.name.lower().split()) for w in words)]

    def one_time_code(self, person_id: str, amount_cents: int) -> str:
        """The 6-digit one-time code the bank texts the user for a payment of ``amount_cents``
        (cents) to ``person_id``: drawn from the world seed, the recipient and the amount
        (the same on every run of a world seed; no tool shows it)."""
        r = self.stream(self.world, f"one-time-code:{person_id}:{amount_cents}")  # type: ignore[attr-defined]
        return f"{r.randrange(1_000_000):06d}"

    def _send_money_request(
        self,
        recipient: str,
        amount_cents: int,
        memo: str = "",
        confirmed_by_user: bool | None = None,
        one_time_code: str | None = None,
    ) -> UserRequest | None:
        """The question ``system_send_money`` would put to the user with these arguments (a
        choice among matching people, else a confirmation above the threshold, else the
        one-time code of a confirmed payment above :data:`ONE_TIME_CODE_ABOVE_CENTS`), or None."""
        matches = self._recipients(recipient)
        if len(matches) > 1:
            names = sorted(p.name for p in matches)
            return UserRequest(
                kind="choose",
                tool="system_send_money",
                argument="recipient",
                topic="recipient",
                options=names,
                message=f"{recipient!r} matches {len(names)} people ({', '.join(names)}): who should receive "
                f"{usd(amount_cents)}?",
                summary={"amount_cents": amount_cents, "memo": memo, "query": recipient},
            )
        if len(matches) == 1 and amount_cents > CONFIRM_ABOVE_CENTS and confirmed_by_user is None:
            return UserRequest(
                kind="confirm",
                tool="system_send_money",
                argument="confirmed_by_user",
                topic="payment",
                decline_value=False,
                message=f"Send {usd(amount_cents)} to {matches[0].name}" + (f" ({memo})" if memo else "") + "?",
                summary={"amount_cents": amount_cents, "memo": memo, "recipient": matches[0].name},
            )
        if (
            len(matches) == 1
            and amount_cents > ONE_TIME_CODE_ABOVE_CENTS
            and confirmed_by_user is True
            and one_time_code is None
        ):
            return UserRequest(
                kind="provide",
                tool="system_send_money",
                argument="one_time_code",
                topic="one_time_code",
                message=f"Your bank texted you a one-time code to approve {usd(amount_cents)} to {matches[0].name}: "
                "what is it?",
                summary={"amount_cents": amount_cents, "memo": memo, "recipient": matches[0].name},
            )
        return None

    @tool(
        "write",
        ["wallet.balance", "wallet.transaction", "system.notification"],
        preconditions=["wallet.balance"],
        id_args=[],
        remedies={"precondition_failed": ["system_transfer_from_savings"]},
        user_arguments={"recipient": "choose", "confirmed_by_user": "confirm", "one_time_code": "provide"},
        user_check="_send_money_request",
    )
    def system_send_money(
        self,
        recipient: Annotated[
            str,
            Field(
                min_length=1,
                max_length=200,
                description="the person's full name or person id (a first name alone may match several)",
            ),
        ],
        amount_cents: Annotated[int, Field(ge=1, le=1_000_000, description="amount in cents")],
        memo: Annotated[str, Field(max_length=200, description="what it is for")] = "",
        confirmed_by_user: Annotated[
            bool | None,
            Field(description="the user's answer when asked to confirm (needed above $100.00); never set it unasked"),
        ] = None,
        one_time_code: Annotated[
            str | None,
            Field(
                max_length=12,
                description="the one-time code the bank texted the user (needed above $500.00); only the user has it",
            ),
        ] = None,
    ) -> SentPayment:
        """Send money from the wallet to a person of the user's contacts directory.

        A name matching several people needs the user's choice; a payment over $100.00 needs
        the user's confirmation, and one over $500.00 also the one-time code the bank texts
        the user (the server asks through MCP elicitation when the client supports it;
        otherwise the error user_input_required says what to ask). A refusal
        (confirmed_by_user false) sends nothing, is recorded as a notification and answers
        status: declined. A wrong one-time code is permission_denied and sends nothing.
        """
        matches = self._recipients(recipient)
        if not matches:
            raise ToolError(ErrorCode.NOT_FOUND, f"no person matches {recipient!r}", field="recipient")
        request = self._send_money_request(recipient, amount_cents, memo, confirmed_by_user, one_time_code)
        if request is not None:
            raise UserInputRequired(request)
        person = matches[0]
        if (
            confirmed_by_user is not False
            and amount_cents > ONE_TIME_CODE_ABOVE_CENTS
            and str(one_time_code).strip() != self.one_time_code(person.person_id, amount_cents)
        ):
            raise ToolError(
                ErrorCode.PERMISSION_DENIED,
                "the one-time code does not match the one the bank texted the user: ask the user for it again",
                retryable=False,
                field="one_time_code",
            )
        state = self.state  # type: ignore[attr-defined]
        if confirmed_by_user is False:
            key = f"n-declined-{person.person_id}-{amount_cents}"
            from mcpgym.sandboxes.system.app import Notification

            state.notifications[key] = Notification(
                notification_id=key, text=f"You declined a payment of {usd(amount_cents)} to {person.name}."
            )
            return SentPayment(
                status="declined",
                recipient=person.name,
                person_id=person.person_id,
                amount_cents=amount_cents,
                memo=memo,
                balance_cents=state.wallet.balance_cents,
            )
        if amount_cents > state.wallet.balance_cents:
            raise ToolError(
                ErrorCode.PRECONDITION_FAILED,
                f"insufficient balance: {state.wallet.balance_cents} cents available, {amount_cents} needed",
                field="amount_cents",
                details={"balance_cents": state.wallet.balance_cents},
            )
        text = f"to {person.name}" + (f": {memo}" if memo else "")
        self.record(-amount_cents, text[:200], person.person_id)  # type: ignore[attr-defined]
        return SentPayment(
            status="sent",
            recipient=person.name,
            person_id=person.person_id,
            amount_cents=amount_cents,
            memo=memo,
            balance_cents=state.wallet.balance_cents,
        )
