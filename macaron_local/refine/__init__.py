"""The refine pipeline: train LoRA specialists on the frozen base and keep their lineage.

torch is imported only inside this package, and only by the modules that need it
(``arch``, ``lora``, ``train``): importing ``macaron_local.refine`` itself, ``data``,
``lineage``, ``bootstrap`` or ``cli`` never loads torch, so the CLI stays fast.

Modules: ``weights`` (GGUF -> f32 numpy), ``arch`` (torch models by architecture), ``lora``
(LoRA modules and GGUF export/import), ``data`` (examples built with the turn pipeline's own
message builders, loss masks), ``train`` (SFT), ``lineage`` (revisions and policy),
``bootstrap`` (the default specialists), ``cli`` (``macaron refine``).
"""

from __future__ import annotations

__all__: list[str] = []
