"""``dc.Pipeline``: DAGs of kernels, device callables and host steps, with error strategies and metrics.

Layers: ``stage`` (what a stage is, checked at add time, and what it reads and writes) → ``graph``
(hazard edges, cycle check, Graphviz text) → ``plan`` (inline vs job, stream slots) → ``scheduler``
(one run) → ``pipeline`` (the public class). ``results`` holds what a run reports; ``resources``
what a pipeline keeps between runs; ``draw`` renders the DAG.
"""

from __future__ import annotations

from .pipeline import Pipeline
from .results import PipelineRun, StageResult

__all__ = ["Pipeline", "PipelineRun", "StageResult"]
