"""The tracker's per-key priority scheduler: free resources matched to waiting requests.

One :class:`PriorityScheduler` exists per rpc key. Free resources form a FIFO list; requests form
a heap ordered by ``(-priority, arrival)``, so a higher priority is served first and equal
priorities are served in arrival order. Whenever both are non-empty, the oldest free resource goes
to the best request; if delivery fails (the requester is gone) the resource stays free and the
next request is tried.

The scheduler also knows whether its key is *registered*: some connection that PUT under it is
still open (its resources may all be handed out), and whether it is *empty* (nothing free,
nobody waiting, nobody registered), so the tracker can forget keys nobody uses.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["PriorityScheduler", "Request", "Resource"]


@dataclass(frozen=True, slots=True, eq=False)
class Resource:
    """A server slot registered by PUT: who owns it and where a client should dial."""

    owner: object
    host: str
    port: int
    match_key: str


@dataclass(slots=True, eq=False)
class Request:
    """A waiting REQUEST; ``deliver`` returns False when the requester can no longer be told."""

    owner: object
    priority: int | float
    deliver: Callable[[Resource], bool]


class PriorityScheduler:
    """Matches the free resources of one rpc key to its waiting requests.

    Parameters
    ----------
    key : str
        The rpc key this scheduler serves (for messages only).

    Examples
    --------
    >>> sched = PriorityScheduler("x")
    >>> got = []
    >>> sched.request(Request(owner="c", priority=1, deliver=lambda r: got.append(r) or True))
    []
    >>> handed = sched.put(Resource(owner="s", host="127.0.0.1", port=9090, match_key="x:0.5"))
    >>> [r.match_key for r in handed], got == handed, sched.summary()
    (['x:0.5'], True, {'free': 0, 'pending': 0})
    """

    def __init__(self, key: str) -> None:
        self.key = key
        self._free: list[Resource] = []
        self._requests: list[tuple[float, int, Request]] = []
        self._arrival = itertools.count()
        self._owners: set[object] = set()  # the connections that PUT under this key
        #: True once any resource was PUT under this key.
        self.had_servers = False

    @property
    def registered(self) -> bool:
        """Some connection that PUT under this key is still open."""
        return bool(self._owners)

    @property
    def empty(self) -> bool:
        """Nothing free, no request waiting, no registered connection."""
        return not (self._free or self._requests or self._owners)

    def owned_by(self, owner: object) -> int:
        """How many free resources ``owner`` has here."""
        return sum(1 for r in self._free if r.owner is owner)

    def put(self, resource: Resource) -> list[Resource]:
        """Add a free resource; returns the resources handed out as a result."""
        self._free.append(resource)
        self._owners.add(resource.owner)
        self.had_servers = True
        return self._schedule()

    def request(self, req: Request) -> list[Resource]:
        """Queue a request; returns the resources handed out as a result."""
        heapq.heappush(self._requests, (-req.priority, next(self._arrival), req))
        return self._schedule()

    def drop_owner(self, owner: object) -> int:
        """Forget every resource and request of ``owner`` (its connection closed); returns how
        many waiting requests it had.
        """
        self._free = [r for r in self._free if r.owner is not owner]
        self._owners.discard(owner)
        kept = [item for item in self._requests if item[2].owner is not owner]
        dropped = len(self._requests) - len(kept)
        if dropped:
            heapq.heapify(kept)
            self._requests = kept
        return dropped

    def summary(self) -> dict[str, int]:
        """``{"free": n, "pending": m}``, the tracker's SUMMARY entry for this key."""
        return {"free": len(self._free), "pending": len(self._requests)}

    def _schedule(self) -> list[Resource]:
        handed: list[Resource] = []
        while self._free and self._requests:
            resource = self._free[0]
            _, _, req = heapq.heappop(self._requests)
            if req.deliver(resource):
                self._free.pop(0)
                handed.append(resource)
            # else: the requester is gone; the resource stays first in line for the next one
        return handed
