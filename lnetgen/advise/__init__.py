"""Advice a site can act on, judged by the throughput model (``lnetgen.throughput``):
``stripes`` (stripe counts, pools and a job's OSTs, as lfs/lctl lines)."""

from lnetgen.advise.stripes import MAX_STRIPE, MAX_STRIPE_OLD, Pool, StripeAdvice, advise_stripes

__all__ = ["MAX_STRIPE", "MAX_STRIPE_OLD", "Pool", "StripeAdvice", "advise_stripes"]
