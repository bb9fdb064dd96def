"""Node verdict and action from check results.

Verdict (documented mapping):
  * ``fail``    if any check failed;
  * ``warn``    else if any check warned;
  * ``unknown`` else if any check is unknown (could not be graded), or no check passed at all;
  * ``pass``    otherwise. ``skipped`` checks (e.g. GPU checks on a node without GPU) do not count.

Action: the worst ``details['action']`` over all checks, in the order
``none < reset-gpu < reboot < drain < rma`` (each check sets its action; see docs/health.md for the
table). A failing check without an action of its own still gives the node at least ``drain``
so that a failed node is never left in service with action ``none``.
"""

from __future__ import annotations

from podium.health.models import Action, Verdict
from podium.models.common import Status
from podium.models.results import CheckResult


def node_verdict(checks: list[CheckResult]) -> tuple[Verdict, Action]:
    """(verdict, action) for one node."""
    statuses = {c.status for c in checks}
    if Status.FAIL in statuses:
        verdict = Verdict.FAIL
    elif Status.WARN in statuses:
        verdict = Verdict.WARN
    elif Status.UNKNOWN in statuses or Status.PASS not in statuses:
        verdict = Verdict.UNKNOWN
    else:
        verdict = Verdict.PASS
    action = Action.NONE
    for c in checks:
        try:
            a = Action(c.details.get("action", "none"))
        except ValueError:
            a = Action.DRAIN
        if a.rank > action.rank:
            action = a
    if verdict == Verdict.FAIL and action == Action.NONE:
        action = Action.DRAIN
    return verdict, action
