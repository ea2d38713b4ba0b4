"""The record of a sequential run's looks (``eval --sequential``), stored in run.json
(``sequential``) and shown in report.json: pydantic models with no behaviour of their own, below
the store that reads them back and the comparison (``knowmeter.compare._sequential``) that makes
them."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from knowmeter import defaults

StopKind = Literal["efficacy", "futility", "planned_n"]
Design = defaults.SequentialDesign


class PairLook(BaseModel):
    """One treatment at one look."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    treatment: str
    z: float | None = Field(description="The composite's paired mean difference over its standard error.")
    decided: bool = Field(
        description="The pair's verdict at the look's level is firm: PROGRESS, REGRESS, or a layer significantly lower."
    )
    power_gain: float | None = Field(description="Conditional power to detect +max_mde by the planned N.")
    power_loss: float | None = Field(description="Conditional power to detect −max_mde by the planned N.")


class Look(BaseModel):
    """What one look saw and decided."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    index: int = Field(ge=1)
    samples: int = Field(ge=1, description="Samples run so far (each under every variant and repeat).")
    fraction: float = Field(gt=0, le=1, description="Information fraction: samples / planned samples.")
    boundary_z: float
    nominal_alpha: float
    pairs: list[PairLook]
    stop: StopKind | None


class SequentialRecord(BaseModel):
    """The sequential design of a run and its looks (run.json ``sequential``, report ``sequential``)."""

    model_config = ConfigDict(extra="forbid")

    method: str = Field(description="The design in words (stored runs before the design field: the obf one).")
    design: Design = Field(default="obf", description="The boundaries (runs stored before this field used obf).")
    futility: bool = Field(
        default=True, description="Whether a look may stop for futility (runs stored before this field: yes)."
    )
    alpha: float
    planned_samples: int = Field(ge=1)
    look_samples: list[int] = Field(description="Samples after which a look is planned (the last: all).")
    order_seed: int = Field(description="Seed of the random order the samples run in.")
    looks: list[Look] = Field(default_factory=list)
    stopped: StopKind | None = None
    reason: str | None = None

    @property
    def stop_alpha(self) -> float | None:
        """The nominal level of the last look taken (the final verdict's ``sequential_alpha``)."""
        return self.looks[-1].nominal_alpha if self.looks else None
