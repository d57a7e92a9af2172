"""Latency budgets per voice turn (docs/DESIGN.md, "Latency budgets and degradation")."""

from __future__ import annotations

from dataclasses import dataclass, field

FIRST_BYTE = "first_byte_ms"
FIRST_ANSWER = "first_answer_ms"
TOTAL_TURN = "total_turn_ms"
BARGE_IN = "barge_in_ms"
METRICS = (FIRST_BYTE, FIRST_ANSWER, TOTAL_TURN, BARGE_IN)


@dataclass(frozen=True)
class Budget:
    target_ms: float
    limit_ms: float  # hard limit: over it, the trace carries the error code voice_<metric>


def default_budgets() -> dict[str, Budget]:
    return {
        FIRST_BYTE: Budget(700, 1200),
        FIRST_ANSWER: Budget(1500, 2500),
        TOTAL_TURN: Budget(2500, 4000),
        BARGE_IN: Budget(200, 500),
    }


@dataclass(frozen=True)
class LadderConfig:
    """When the degradation ladder acts, in ms after the final transcript.

    Each step fires when the answer is not under way by then, early enough that the
    metric it protects still meets its target.
    """

    ack_after_ms: float = 450.0  # no answer audio yet: play a cached acknowledgement (first_byte target 700)
    shorten_after_ms: float = 1000.0  # still no answer: ask for one sentence (first_answer target 1500)
    defer_after_ms: float = 1900.0  # still none: defer deep work and say so (first_answer limit 2500)
    # While answering: if the time spent plus the audio already queued passes this share of
    # the total_turn target, stop after the current sentence.
    total_turn_share: float = 0.8
    enabled: bool = True
    # After deferring, give the answer up at the first_answer hard limit (a board's user hears
    # "the short version" and then nothing more); a WebSocket client waits for its reply instead.
    give_up_after_defer: bool = True


@dataclass
class BudgetConfig:
    budgets: dict[str, Budget] = field(default_factory=default_budgets)
    ladder: LadderConfig = field(default_factory=LadderConfig)

    def scaled(self, factor: float) -> "BudgetConfig":
        """The same budgets and ladder, every figure times `factor` (tests run a fast clock)."""
        lad = self.ladder
        return BudgetConfig(
            {k: Budget(b.target_ms * factor, b.limit_ms * factor) for k, b in self.budgets.items()},
            LadderConfig(lad.ack_after_ms * factor, lad.shorten_after_ms * factor, lad.defer_after_ms * factor,
                         lad.total_turn_share, lad.enabled, lad.give_up_after_defer),
        )


@dataclass(frozen=True)
class MetricVerdict:
    metric: str
    value_ms: float
    target_ms: float
    limit_ms: float

    @property
    def over_target(self) -> bool:
        return self.value_ms > self.target_ms

    @property
    def over_limit(self) -> bool:
        return self.value_ms > self.limit_ms

    @property
    def code(self) -> str | None:
        return f"voice_{self.metric}" if self.over_limit else None


def judge(metric: str, value_ms: float, config: BudgetConfig) -> MetricVerdict:
    budget = config.budgets[metric]
    return MetricVerdict(metric, value_ms, budget.target_ms, budget.limit_ms)
