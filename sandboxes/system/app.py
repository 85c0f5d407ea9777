"""The ``system`` app.

It owns what the other apps share: the virtual clock's tools, the user's profile, the
privileges other apps ask for (``permission_denied`` -> ``system_request_privilege``), the
session authentication that cures ``auth_required``, and the one wallet all money goes
through, with one-use payment authorisations that a checkout or booking consumes.
Money is in integer cents (USD).
"""

from __future__ import annotations

from datetime import UTC
from typing import Annotated

from pydantic import BaseModel, Field

from mcpgym.kernel.app import App, AppState, register_app
from mcpgym.kernel.clock import iso
from mcpgym.kernel.errors import ErrorCode, ToolError
from mcpgym.kernel.spec import tool
from mcpgym.kernel.volatile import VOLATILE, VOLATILE_KEYS
from mcpgym.kernel.world import World
from mcpgym.sandboxes.system.payments import PaymentsMixin

PRIVILEGES: dict[str, str] = {
    "talk.location": "share the user's location in messaging",
    "talk.group_admin": "create and administer group chats",
    "talk.contacts_write": "change contacts (block, remarks, tags)",
    "stocks.trading": "place orders in the brokerage account",
    "stocks.short_selling": "sell short in the brokerage account",
    "office.share": "share files outside the user's drive",
    "flights.booking": "book and change flights",
    "news.subscriptions": "manage paid news subscriptions",
}
"""Every privilege an app may ask for, with what it allows."""

PAYMENT_AUTH_TTL = 15 * 60
"""Virtual seconds a payment authorisation stays valid."""

SETTINGS_ALLOWED: dict[str, tuple[str, ...]] = {
    "language": ("en", "de", "fr", "es", "pt", "it"),
    "theme": ("light", "dark"),
    "do_not_disturb": ("on", "off"),
    "notifications": ("all", "mentions", "none"),
}


class Profile(BaseModel):
    """The user's profile."""

    name: str
    email: str
    phone: str
    city: str
    timezone: str = "UTC"
    birthday: str = "1990-01-01"


class Privilege(BaseModel):
    """A privilege and whether it is granted."""

    name: str
    description: str
    granted: bool = False
    granted_at: Annotated[int | None, VOLATILE] = None


class Wallet(BaseModel):
    """The one wallet of the world (cents, USD)."""

    balance_cents: int
    savings_cents: int
    currency: str = "USD"


class Transaction(BaseModel):
    """A wallet movement: negative debits, positive credits (cents)."""

    txn_id: Annotated[str, VOLATILE]
    amount_cents: int
    memo: str
    reference: Annotated[str, VOLATILE] = ""
    at: Annotated[int, VOLATILE] = 0


class PaymentAuthorization(BaseModel):
    """A one-use payment authorisation (limit in cents, expiry in virtual seconds)."""

    auth_id: Annotated[str, VOLATILE]
    limit_cents: int
    purpose: str
    created_at: Annotated[int, VOLATILE]
    expires_at: Annotated[int, VOLATILE]
    used: bool = False


class Notification(BaseModel):
    """A system notification."""

    notification_id: str
    text: str
    read: bool = False


class SystemState(AppState):
    """State of the system app."""

    profile: Profile
    privileges: dict[str, Privilege]
    wallet: Wallet
    transactions: Annotated[dict[str, Transaction], VOLATILE_KEYS] = Field(default_factory=dict)
    payment_auths: Annotated[dict[str, PaymentAuthorization], VOLATILE] = Field(default_factory=dict)
    settings: dict[str, str] = Field(default_factory=dict)
    notifications: dict[str, Notification] = Field(default_factory=dict)
    authenticated_at: Annotated[int | None, VOLATILE] = None


# -- outputs -----------------------------------------------------------------------------
class TimeView(BaseModel):
    """Virtual time: now in seconds since the epoch and as ISO-8601, plus the weekday."""

    now: int
    iso: str
    weekday: str


class ProfileView(BaseModel):
    """The user's profile."""

    profile: Profile


class PrivilegeList(BaseModel):
    """Every privilege with its granted flag."""

    privileges: list[Privilege]


class PrivilegeView(BaseModel):
    """One privilege."""

    privilege: Privilege


class AuthView(BaseModel):
    """Result of authentication: a session token and when it was issued."""

    token: str
    authenticated_at: str


class BalanceView(BaseModel):
    """Wallet balance in cents."""

    balance_cents: int
    savings_cents: int
    currency: str


class TransactionList(BaseModel):
    """Wallet movements, newest first."""

    transactions: list[Transaction]


class PaymentAuthView(BaseModel):
    """A payment authorisation."""

    authorization: PaymentAuthorization


class PaymentAuthList(BaseModel):
    """Payment authorisations, newest first."""

    authorizations: list[PaymentAuthorization]


class SettingsView(BaseModel):
    """Device settings."""

    settings: dict[str, str]


class NotificationList(BaseModel):
    """Notifications."""

    notifications: list[Notification]


@register_app
class SystemApp(PaymentsMixin, App):
    """Virtual time, profile, privileges, authentication, wallet and payment authorisation."""

    name = "system"
    always_included = True  # the wallet, privileges and payment authorisation the other apps use
    title = "System"
    State = SystemState
    state: SystemState

    @classmethod
    def generate(cls, world: World) -> SystemState:
        """Seeded initial state: balance 800-2500 USD, savings, no privilege granted."""
        r = cls.stream(world, "initial")
        user = world.user
        granted = set(r.sample(sorted(PRIVILEGES), 2))
        return SystemState(
            profile=Profile(name=user.name, email=user.email, phone=user.phone, city=user.city),
            privileges={
                name: Privilege(name=name, description=desc, granted=name in granted)
                for name, desc in sorted(PRIVILEGES.items())
            },
            wallet=Wallet(
                balance_cents=r.randrange(80_000, 250_000, 100), savings_cents=r.randrange(100_000, 500_000, 100)
            ),
            settings={"language": "en", "theme": "light", "do_not_disturb": "off", "notifications": "all"},
            notifications={
                f"n-{i}": Notification(notification_id=f"n-{i}", text=text)
                for i, text in enumerate(["Welcome back", "Your statement is ready", "New device signed in"], start=1)
            },
        )

    # -- helpers used by other apps ----------------------------------------------------
    def require_privilege(self, privilege: str) -> None:
        """Raise ``permission_denied`` (remedy: ``system_request_privilege``) unless granted."""
        p = self.state.privileges.get(privilege)
        if p is None or not p.granted:
            raise ToolError(
                ErrorCode.PERMISSION_DENIED,
                f"missing privilege {privilege!r}: call system_request_privilege first",
                retryable=False,
                details={"privilege": privilege},
            )

    def charge(self, authorization_id: str, amount_cents: int, memo: str, reference: str = "") -> str:
        """Debit ``amount_cents`` using a one-use payment authorisation; return the transaction id.

        Raises:
            ToolError: ``not_found`` (unknown authorisation), ``precondition_failed`` (used,
                expired, over its limit, or not enough balance).
        """
        auth = self.state.payment_auths.get(authorization_id)
        if auth is None:
            raise ToolError(
                ErrorCode.NOT_FOUND,
                f"no payment authorisation {authorization_id!r}; call system_authorize_payment",
                field="authorization_id",
            )
        if auth.used:
            raise ToolError(
                ErrorCode.PRECONDITION_FAILED,
                f"payment authorisation {authorization_id} was already used; authorise a new payment",
                field="authorization_id",
            )
        if auth.expires_at < self.now:
            raise ToolError(
                ErrorCode.PRECONDITION_FAILED,
                f"payment authorisation {authorization_id} expired",
                field="authorization_id",
            )
        if amount_cents > auth.limit_cents:
            raise ToolError(
                ErrorCode.PRECONDITION_FAILED,
                f"amount {amount_cents} cents exceeds the authorised limit {auth.limit_cents} cents",
                field="authorization_id",
            )
        if amount_cents > self.state.wallet.balance_cents:
            raise ToolError(
                ErrorCode.PRECONDITION_FAILED,
                f"insufficient balance: {self.state.wallet.balance_cents} cents available, {amount_cents} needed",
                details={"balance_cents": self.state.wallet.balance_cents},
            )
        auth.used = True
        return self.record(-amount_cents, memo, reference)

    def refund(self, amount_cents: int, memo: str, reference: str = "") -> str:
        """Credit ``amount_cents`` back to the wallet; return the transaction id."""
        return self.record(amount_cents, memo, reference)

    def record(self, amount_cents: int, memo: str, reference: str = "") -> str:
        """Apply a wallet movement of ``amount_cents`` (signed) and log it; return its id."""
        self.state.wallet.balance_cents += amount_cents
        txn_id = self.new_id("txn")
        self.state.transactions[txn_id] = Transaction(
            txn_id=txn_id, amount_cents=amount_cents, memo=memo, reference=reference, at=self.now
        )
        return txn_id

    # -- time ------------------------------------------------------------------------------
    @tool("read", ["system.clock"], never_faulted=True)
    def system_get_time(self) -> TimeView:
        """Return the current virtual time (seconds since the epoch, ISO-8601, weekday)."""
        from datetime import datetime

        dt = datetime.fromtimestamp(self.now, tz=UTC)
        return TimeView(now=self.now, iso=iso(self.now), weekday=dt.strftime("%A"))

    @tool("write", ["system.clock"], role="wait")
    def system_wait(
        self, seconds: Annotated[int, Field(ge=1, le=7 * 86_400, description="virtual seconds to wait")]
    ) -> TimeView:
        """Wait: advance the virtual clock by seconds (1 to 604800). Cures rate limits."""
        self.world.clock.advance(seconds)
        return self.system_get_time()

    # -- profile ---------------------------------------------------------------------------
    @tool("read", ["system.profile"])
    def system_get_profile(self) -> ProfileView:
        """Return the user's profile: name, email, phone, city, timezone, birthday."""
        return ProfileView(profile=self.state.profile)

    @tool("write", ["system.profile"])
    def system_update_profile(
        self,
        city: Annotated[str | None, Field(description="new home city")] = None,
        phone: Annotated[str | None, Field(description="new phone number")] = None,
        timezone: Annotated[str | None, Field(description="IANA zone name, e.g. Europe/Lisbon")] = None,
    ) -> ProfileView:
        """Update the user's city, phone or timezone (at least one)."""
        if city is None and phone is None and timezone is None:
            raise ToolError(ErrorCode.INVALID_ARGUMENT, "give at least one of city, phone, timezone", field="city")
        changes = {k: v for k, v in (("city", city), ("phone", phone), ("timezone", timezone)) if v is not None}
        for fname, value in changes.items():
            if not value.strip():
                raise ToolError(ErrorCode.INVALID_ARGUMENT, f"{fname} must not be empty", field=fname)
        for fname, value in changes.items():
            setattr(self.state.profile, fname, value.strip())
        return ProfileView(profile=self.state.profile)

    # -- privileges ------------------------------------------------------------------------
    @tool("read", ["system.privilege"])
    def system_list_privileges(self) -> PrivilegeList:
        """List every privilege the apps may require and whether it is granted."""
        return PrivilegeList(privileges=list(self.state.privileges.values()))

    @tool("auth", ["system.privilege"], id_args=["privilege"], role="grant")
    def system_request_privilege(
        self, privilege: Annotated[str, Field(description="privilege name, e.g. talk.location")]
    ) -> PrivilegeView:
        """Ask for a privilege (e.g. talk.location); it is granted at once. Cures permission_denied."""
        p = self.state.privileges.get(privilege)
        if p is None:
            raise ToolError(
                ErrorCode.NOT_FOUND, f"unknown privilege {privilege!r}; see system_list_privileges", field="privilege"
            )
        if not p.granted:
            p.granted = True
            p.granted_at = self.now
        return PrivilegeView(privilege=p)

    @tool("write", ["system.privilege"], id_args=["privilege"], destructive=True)
    def system_revoke_privilege(self, privilege: Annotated[str, Field(description="privilege name")]) -> PrivilegeView:
        """Revoke a granted privilege."""
        p = self.state.privileges.get(privilege)
        if p is None:
            raise ToolError(ErrorCode.NOT_FOUND, f"unknown privilege {privilege!r}", field="privilege")
        p.granted = False
        p.granted_at = None
        return PrivilegeView(privilege=p)

    @tool("auth", ["system.session"], role="reauth")
    def system_authenticate(self) -> AuthView:
        """Re-authenticate the user's session. Cures auth_required on any tool."""
        self.state.authenticated_at = self.now
        token = self.new_id("tok")
        return AuthView(token=token, authenticated_at=iso(self.now))

    # -- wallet ----------------------------------------------------------------------------
    @tool("read", ["wallet.balance"])
    def system_get_wallet_balance(self) -> BalanceView:
        """Return the wallet balance and savings, in cents (USD)."""
        w = self.state.wallet
        return BalanceView(balance_cents=w.balance_cents, savings_cents=w.savings_cents, currency=w.currency)

    @tool("read", ["wallet.transaction"])
    def system_list_transactions(self, limit: Annotated[int, Field(ge=1, le=200)] = 20) -> TransactionList:
        """List the latest wallet movements (cents; negative = debit), newest first."""
        txns = sorted(self.state.transactions.values(), key=lambda t: (t.at, t.txn_id), reverse=True)
        return TransactionList(transactions=txns[:limit])

    @tool("write", ["wallet.balance"], preconditions=["wallet.balance"])
    def system_transfer_from_savings(
        self, amount_cents: Annotated[int, Field(ge=1, le=10_000_000, description="amount in cents")]
    ) -> BalanceView:
        """Move amount_cents from savings into the spendable wallet balance."""
        w = self.state.wallet
        if amount_cents > w.savings_cents:
            raise ToolError(
                ErrorCode.PRECONDITION_FAILED, f"savings hold only {w.savings_cents} cents", field="amount_cents"
            )
        w.savings_cents -= amount_cents
        self.record(amount_cents, "transfer from savings")
        return self.system_get_wallet_balance()

    @tool("auth", ["system.payment_auth"])
    def system_authorize_payment(
        self,
        limit_cents: Annotated[
            int, Field(ge=1, le=10_000_000, description="most this authorisation may charge, in cents")
        ],
        purpose: Annotated[str, Field(description="what it is for, e.g. 'shop checkout'")] = "payment",
    ) -> PaymentAuthView:
        """Obtain a one-use payment authorisation for up to limit_cents, valid 15 virtual minutes.

        A checkout or booking consumes it; a used or expired one must be replaced.
        """
        auth_id = self.new_id("pay")
        auth = PaymentAuthorization(
            auth_id=auth_id,
            limit_cents=limit_cents,
            purpose=purpose[:200],
            created_at=self.now,
            expires_at=self.now + PAYMENT_AUTH_TTL,
        )
        self.state.payment_auths[auth_id] = auth
        return PaymentAuthView(authorization=auth)

    @tool("read", ["system.payment_auth"])
    def system_list_payment_authorizations(self) -> PaymentAuthList:
        """List payment authorisations with their limit, expiry and used flag, newest first."""
        auths = sorted(self.state.payment_auths.values(), key=lambda a: (a.created_at, a.auth_id), reverse=True)
        return PaymentAuthList(authorizations=auths)

    # -- settings and notifications ---------------------------------------------------------
    @tool("read", ["system.settings"])
    def system_get_settings(self) -> SettingsView:
        """Return device settings: language, theme, do_not_disturb, notifications."""
        return SettingsView(settings=dict(self.state.settings))

    @tool("write", ["system.settings"], id_args=["key"])
    def system_update_setting(
        self,
        key: Annotated[str, Field(description="language | theme | do_not_disturb | notifications")],
        value: Annotated[
            str,
            Field(
                description="new value: language en|de|fr|es|pt|it; theme light|dark (dark mode); "
                "do_not_disturb on|off; notifications all|mentions|none"
            ),
        ],
    ) -> SettingsView:
        """Change one device setting."""
        allowed = SETTINGS_ALLOWED.get(key)
        if allowed is None:
            raise ToolError(
                ErrorCode.INVALID_ARGUMENT,
                f"unknown setting {key!r}; one of {', '.join(SETTINGS_ALLOWED)}",
                field="key",
            )
        if value not in allowed:
            raise ToolError(ErrorCode.INVALID_ARGUMENT, f"{key} must be one of {', '.join(allowed)}", field="value")
        self.state.settings[key] = value
        return self.system_get_settings()

    @tool("read", ["system.notification"])
    def system_list_notifications(self, unread_only: bool = False) -> NotificationList:
        """List notifications, optionally only the unread ones."""
        items = [n for n in self.state.notifications.values() if not (unread_only and n.read)]
        return NotificationList(notifications=items)

    @tool("write", ["system.notification"])
    def system_mark_notification_read(self, notification_id: str) -> NotificationList:
        """Mark one notification as read."""
        n = self.state.notifications.get(notification_id)
        if n is None:
            raise ToolError(ErrorCode.NOT_FOUND, f"no notification {notification_id!r}", field="notification_id")
        n.read = True
        return NotificationList(notifications=[n])
