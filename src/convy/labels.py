"""Labels and the judge's calibration: a person's decisions on a run's attempts written as labels
(`convy label`), and today's judge measured against them (`convy calibrate`). Names load on first use."""

from __future__ import annotations

from typing import TYPE_CHECKING

from convy.lazy import Face

_FACE = Face(
    "convy.labels",
    {
        # a person's labels of a run's attempts
        "convy.conduct.labelling": ("LabelDraw", "LabelName", "LabelSink", "LabelledRun", "Unlabelled"),
        # the judge measured against them
        "convy.conduct.calibration": ("Calibration",),
        "convy.conduct.display": ("CalibrationLines",),
        "convy.conduct.calibrated": ("Calibrated", "CalibrationFile", "ClaimFigures", "JudgeFingerprint"),
        "convy.draw.judgeline": ("KappaText",),
    },
)

__all__ = _FACE.names()  # noqa: PLE0605 - each name is written once, in _FACE

if TYPE_CHECKING:
    from convy.conduct.calibrated import Calibrated as Calibrated
    from convy.conduct.calibrated import CalibrationFile as CalibrationFile
    from convy.conduct.calibrated import ClaimFigures as ClaimFigures
    from convy.conduct.calibrated import JudgeFingerprint as JudgeFingerprint
    from convy.conduct.calibration import Calibration as Calibration
    from convy.conduct.display import CalibrationLines as CalibrationLines
    from convy.conduct.labelling import LabelDraw as LabelDraw
    from convy.conduct.labelling import LabelledRun as LabelledRun
    from convy.conduct.labelling import LabelName as LabelName
    from convy.conduct.labelling import LabelSink as LabelSink
    from convy.conduct.labelling import Unlabelled as Unlabelled
    from convy.draw.judgeline import KappaText as KappaText

__getattr__ = _FACE.attribute
