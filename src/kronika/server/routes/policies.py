"""The storage policies that can apply to an agent (as ``kronika policies``), and
replacing them: an admin key of the whole tenant may (``PUT``,
:mod:`kronika.workflows.policy_edit`: ``kronika.toml`` rewritten, the rest of it kept,
in force at once in every worker)."""

from __future__ import annotations

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field

from kronika.core.policies import TIER_ORDER
from kronika.memory import Memory
from kronika.server.access import Caller
from kronika.server.deps import Name, Svc, Who
from kronika.server.keys import Role
from kronika.server.openapi import BODY_REQUIRED
from kronika.server.responses import Answer
from kronika.server.views import Json
from kronika.settings import CONFIG_FILE
from kronika.workflows import policy_edit

router = APIRouter(tags=["policies"])


class Rule(Answer):
    """A ``[[policy]]`` rule as the caller is shown it
    (:meth:`~kronika.core.policies.StorageRule.as_dict`)."""

    name: str
    tenants: list[str]
    agents: list[str]
    users: list[str]
    channels: list[str]
    scopes: list[str]
    tiers: list[str]
    dm: bool | None
    store: bool
    max_tier: str | None
    retention_days: int | None
    applies_to: str = Field(description="which items it is about, in words")
    effect: str = Field(description="what it does, in words")


class Policies(Answer):
    agent: str
    edited_in: str
    dm_channels: list[str]
    retention_days: dict[str, int | None] = Field(description="tier -> days kept (none: ever)")
    policies: list[Rule]
    editable: bool = Field(description="whether this key may change them (PUT)")
    not_editable: str | None = Field(description="why not, when it may not")
    toml: str | None = Field(description="their tables as kronika.toml has them, when editable")


@router.get(
    "/agents/{agent}/policies", summary="Storage policies in force", response_model=Policies
)
def policies(agent: Name, who: Who, svc: Svc) -> Json:
    """Retention per tier, what a direct message is, and the ``[[policy]]`` rules whose
    ``tenants`` and ``agents`` can match this agent (another tenant's or agent's rules
    are not shown). A rule is shown from the caller's side
    (:meth:`~kronika.core.policies.StorageRule.seen_from`): its ``tenants`` and ``agents``,
    and its ``applies_to`` words, name this tenant and this agent only, never the others
    it lists. ``editable``: whether this key may change them (``PUT``); then ``toml`` is
    their tables as ``kronika.toml`` has them, otherwise ``not_editable`` says why."""
    with svc.reading(who, agent) as memory:
        found = memory.settings.storage_policies
        refused = _why_not_editable(memory, who)
        toml = policy_edit.section_text(memory) if refused is None else None
    return {
        "agent": agent,
        "edited_in": CONFIG_FILE,
        "dm_channels": list(found.dm_channels),
        "retention_days": {tier.value: found.retention.get(tier) for tier in TIER_ORDER},
        "policies": who.context.policies(memory, agent),
        "editable": refused is None,
        "not_editable": refused,
        "toml": toml,
    }


def _why_not_editable(memory: Memory, who: Caller) -> str | None:
    if who.key.role is not Role.ADMIN or not who.unrestricted:
        return "changing the storage policies needs an admin key of the whole tenant"
    return policy_edit.why_not_editable(memory, who.tenant)


class PoliciesBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    toml: str = Field(
        max_length=100_000,
        description="the [retention] and [[policy]] tables, as kronika.toml holds them",
    )


@router.put(
    "/agents/{agent}/policies",
    summary="Change the storage policies",
    openapi_extra={BODY_REQUIRED: True},
    response_model=Policies,
)
def edit_policies(agent: Name, who: Who, svc: Svc, body: PoliciesBody | None = None) -> Json:
    """Replace the ``[retention]`` and ``[[policy]]`` tables of ``kronika.toml`` with
    ``toml`` (an admin key of the whole tenant; 403 otherwise, or when the file serves
    other tenants too): checked as loading the file checks them (422 naming the line),
    written at once with the rest of the file unchanged, applied to every write from
    then on, audited. Answers as ``GET``. Access is decided before the body is read, as
    on every write: a reader key is told it may only read, an agent out of reach is a
    404 whatever was sent."""
    svc.edit_policies(who, agent, body.toml if body is not None else None)
    return policies(agent, who, svc)
