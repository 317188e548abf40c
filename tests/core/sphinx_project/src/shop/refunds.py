"""Refund rules of the shop."""

from datetime import timedelta


class RefundPolicy:
    """When a refund may be asked for, and when it is settled."""

    cut_off_hour = 2

    def window(self, amount: int) -> timedelta:
        """How long after a purchase a refund may be asked for."""
        if amount > 100_000:
            return timedelta(days=14)
        return timedelta(days=30)
