"""Feed and location tools of the ``talk`` app.

Posts: list the feed, publish, like, comment, list comments. Location: the user's current
location and location-sharing links given to contacts (create needs the ``talk.location``
privilege, as does reading or changing the location; revoking never does, so sharing can
always be stopped).
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from mcpgym.kernel.errors import ErrorCode, ToolError
from mcpgym.kernel.spec import tool
from mcpgym.sandboxes.talk.common import PRIV_LOCATION, PRIVILEGE_REMEDY, ContactId, TalkBase
from mcpgym.sandboxes.talk.models import (
    ME,
    Comment,
    CommentList,
    Location,
    LocationShare,
    LocationView,
    Post,
    PostList,
    PostView,
    ShareList,
    ShareView,
)

PostId = Annotated[str, Field(max_length=64, description="post id (see talk_list_posts)")]
PostText = Annotated[str, Field(min_length=1, max_length=2000, description="text (1-2000 characters)")]
SHARE_URL = "https://talk.example/loc/"


class SocialTools(TalkBase):
    """Feed and location tools (mixed into :class:`mcpgym.sandboxes.talk.app.TalkApp`)."""

    # -- posts ------------------------------------------------------------------------------
    def _post(self, post_id: str) -> Post:
        post = self.state.posts.get(post_id)
        if post is None:
            raise ToolError(ErrorCode.NOT_FOUND, f"no post {post_id[:64]!r}; see talk_list_posts", field="post_id")
        return post

    @staticmethod
    def _post_view(post: Post) -> PostView:
        return PostView(post=post, like_count=len(post.liked_by), liked_by_me=ME in post.liked_by)

    @tool("read", ["talk.post"])
    def talk_list_posts(
        self,
        author: Annotated[
            str | None, Field(max_length=64, description="only posts by this contact id, or 'me'")
        ] = None,
        limit: Annotated[int, Field(ge=1, le=50, description="most posts to return")] = 20,
    ) -> PostList:
        """List the feed (your posts and your contacts'), newest first, with like counts."""
        posts = [p for p in self.state.posts.values() if author is None or p.author == author]
        posts.sort(key=lambda p: (-p.created_at, p.post_id))
        views = [self._post_view(p) for p in posts[:limit]]
        return PostList(posts=views, count=len(views))

    @tool("write", ["talk.post"])
    def talk_publish_post(self, text: PostText) -> PostView:
        """Publish a post to your feed as yourself."""
        body = self._text(text)
        post_id = self.new_id("post")
        post = Post(post_id=post_id, author=ME, text=body, created_at=self.now)
        self.state.posts[post_id] = post
        return self._post_view(post)

    @tool("write", ["talk.post"])
    def talk_like_post(self, post_id: PostId) -> PostView:
        """Like a post (liking it again changes nothing)."""
        post = self._post(post_id)
        if ME not in post.liked_by:
            post.liked_by = sorted([*post.liked_by, ME])
        return self._post_view(post)

    @tool("write", ["talk.post", "talk.comment"])
    def talk_add_post_comment(self, post_id: PostId, text: PostText) -> CommentList:
        """Comment on a post as yourself; returns the post's comments, oldest first."""
        body = self._text(text)
        post = self._post(post_id)
        post.comments.append(Comment(comment_id=self.new_id("cm"), author=ME, text=body, created_at=self.now))
        return CommentList(post_id=post.post_id, comments=list(post.comments), count=len(post.comments))

    @tool("read", ["talk.comment"])
    def talk_list_post_comments(self, post_id: PostId) -> CommentList:
        """List the comments of a post, oldest first (author me or a contact id)."""
        post = self._post(post_id)
        return CommentList(post_id=post.post_id, comments=list(post.comments), count=len(post.comments))

    # -- location -------------------------------------------------------------------------
    def _share_view(self, share: LocationShare) -> ShareView:
        return ShareView(share=share, active=not share.revoked and share.expires_at > self.now)

    @tool("read", ["talk.location"], remedies=PRIVILEGE_REMEDY)
    def talk_get_location(self) -> LocationView:
        """Return your current location (city and place). Needs the talk.location privilege."""
        self._require(PRIV_LOCATION)
        return LocationView(location=self.state.location)

    @tool("write", ["talk.location"], remedies=PRIVILEGE_REMEDY)
    def talk_update_location(
        self,
        city: Annotated[str, Field(min_length=1, max_length=100, description="city you are in")],
        place: Annotated[str, Field(max_length=100, description="where in the city, e.g. 'a cafe'")] = "",
    ) -> LocationView:
        """Set your current location. Needs the talk.location privilege."""
        self._require(PRIV_LOCATION)
        self.state.location = Location(city=self._text(city, "city", 100), place=place.strip(), updated_at=self.now)
        return LocationView(location=self.state.location)

    @tool(
        "write",
        ["talk.location_share"],
        preconditions=["talk.contact"],
        remedies={**PRIVILEGE_REMEDY, "precondition_failed": ["talk_unblock_contact"]},
    )
    def talk_create_location_share(
        self,
        contact_id: ContactId,
        duration_minutes: Annotated[int, Field(ge=5, le=1440, description="how long the link works, in minutes")] = 60,
    ) -> ShareView:
        """Share your live location with a contact through a link valid duration_minutes (5-1440).

        Needs the talk.location privilege; precondition_failed for a blocked contact.
        """
        self._require(PRIV_LOCATION)
        contact = self._contact(contact_id)
        self._not_blocked(contact, "share your location with them")
        share_id = self.new_id("ls")
        share = LocationShare(
            share_id=share_id,
            contact_id=contact.contact_id,
            url=SHARE_URL + share_id,
            duration_minutes=duration_minutes,
            created_at=self.now,
            expires_at=self.now + duration_minutes * 60,
        )
        self.state.shares[share_id] = share
        return self._share_view(share)

    @tool("write", ["talk.location_share"], destructive=True)
    def talk_revoke_location_share(
        self, share_id: Annotated[str, Field(max_length=64, description="share id (see talk_list_location_shares)")]
    ) -> ShareView:
        """Revoke a location-sharing link at once (revoking twice changes nothing)."""
        share = self.state.shares.get(share_id)
        if share is None:
            raise ToolError(
                ErrorCode.NOT_FOUND,
                f"no location share {share_id[:64]!r}; see talk_list_location_shares",
                field="share_id",
            )
        share.revoked = True
        return self._share_view(share)

    @tool("read", ["talk.location_share"])
    def talk_list_location_shares(
        self, active_only: Annotated[bool, Field(description="only links that still work")] = False
    ) -> ShareList:
        """List location-sharing links, newest first, with whether each still works (not revoked, not expired)."""
        views = [self._share_view(s) for s in self.state.shares.values()]
        if active_only:
            views = [v for v in views if v.active]
        views.sort(key=lambda v: (-v.share.created_at, v.share.share_id))
        return ShareList(shares=views, count=len(views))
