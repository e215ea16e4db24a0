"""Advice a site can act on, judged by the throughput model (``lnetgen.throughput``):
``stripes`` (stripe counts, pools and a job's OSTs, as lfs/lctl lines), ``routers`` (router
moves), each given only where the model shows a gain (on every seed of a random draw,
``lnetgen.advise.seeds``)."""

from lnetgen.advise.seeds import SEEDS, seeds_of
from lnetgen.advise.stripes import (
    MAX_STRIPE,
    MAX_STRIPE_OLD,
    Judged,
    Pool,
    StripeAdvice,
    advise_stripes,
    stripe_limit,
)

__all__ = [
    "MAX_STRIPE",
    "MAX_STRIPE_OLD",
    "SEEDS",
    "Judged",
    "Pool",
    "StripeAdvice",
    "advise_stripes",
    "seeds_of",
    "stripe_limit",
]
