"""A picture of a memory plan: every entry a box over the steps it lives, at its bytes.

The horizontal axis is the execution order (operator steps), the vertical axis the bytes of
each device's memory: an arena plan shows entries at their offsets in the arena; a
storage-token plan stacks the storages, each as tall as its largest entry. Pinned entries
(inputs, parameters, outputs) are drawn grey across the whole run above the shared memory.
The result is SVG text (open it in any browser).
"""

from __future__ import annotations

import html
from typing import Any

__all__ = ["memory_plan_svg"]

_W, _H, _LEFT, _TOP, _ROW = 960, 540, 90, 40, 18
_COLORS = ("#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7")


def _layout(plan: Any, device: int) -> tuple[list[tuple[Any, int]], int]:
    """Shared entries of ``device`` with their byte position, and the total shared bytes."""
    base: dict[int, int] = {}
    top = 0
    for sid in sorted(plan.storage_bytes):
        users = [b for b in plan.buffers if plan.storage_id[b.eid] == sid]
        if users and not users[0].pinned and users[0].device == device:
            base[sid] = top
            top += plan.storage_bytes[sid]
    placed = []
    for b in plan.buffers:
        if b.device == device and not b.pinned:
            offset = plan.storage_offset[b.eid] if plan.storage_offset else 0
            placed.append((b, base[plan.storage_id[b.eid]] + offset))
    return placed, top


def memory_plan_svg(plan: Any, title: str = "") -> str:
    """The SVG picture of ``plan`` (a ``pytvm.graph.memory_plan.MemoryPlan``)."""
    devices = sorted(plan.devices)
    steps = max((b.end for b in plan.buffers), default=0) + 1
    height = _H * len(devices)
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{_W}" height="{height}" '
        'font-family="sans-serif" font-size="11">',
        f'<rect width="{_W}" height="{height}" fill="white"/>',
    ]
    for row, device in enumerate(devices):
        out += _device_panel(plan, device, row * _H, steps, title)
    out.append("</svg>")
    return "\n".join(out)


def _device_panel(plan: Any, device: int, y0: int, steps: int, title: str) -> list[str]:
    figures = plan.devices[device]
    placed, total = _layout(plan, device)
    plot_w, plot_h = _W - _LEFT - 20, _H - _TOP - 50
    scale_x = plot_w / max(steps, 1)
    scale_y = plot_h / max(total, 1)
    shared = figures.planned_bytes - figures.pinned_bytes
    bound = figures.lower_bound - figures.pinned_bytes
    head = (
        f"{html.escape(title)} device type {device}, planner {plan.planner}: shared "
        f"{shared / 1e6:.2f} MB (lower bound {bound / 1e6:.2f} MB, no reuse "
        f"{(figures.no_reuse_bytes - figures.pinned_bytes) / 1e6:.2f} MB); pinned "
        f"{figures.pinned_bytes / 1e6:.2f} MB not drawn"
    )
    parts = [f'<text x="10" y="{y0 + 20}" font-size="13">{head}</text>']
    parts.append(
        f'<rect x="{_LEFT}" y="{y0 + _TOP}" width="{plot_w}" height="{plot_h}" '
        'fill="none" stroke="#888"/>'
    )
    for i, (b, at) in enumerate(placed):
        x = _LEFT + b.start * scale_x
        w = max((b.end - b.start + 1) * scale_x, 1.0)
        y = y0 + _TOP + plot_h - (at + b.nbytes) * scale_y
        h = max(b.nbytes * scale_y, 0.5)
        name = plan.entry_names[b.eid] if b.eid < len(plan.entry_names) else f"entry {b.eid}"
        tip = f"{name}: {b.nbytes:,} B, steps {b.start}-{b.end}"
        parts.append(
            f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" '
            f'fill="{_COLORS[i % len(_COLORS)]}" stroke="white" stroke-width="0.5">'
            f"<title>{html.escape(tip)}</title></rect>"
        )
        if h > _ROW and w > 6 * len(name):
            parts.append(
                f'<text x="{x + 3:.1f}" y="{y + 13:.1f}" fill="white">{html.escape(name)}</text>'
            )
    parts.append(
        f'<text x="{_LEFT}" y="{y0 + _H - 20}">execution step 0 .. {steps - 1} '
        "(hover a box for its node, size and lifetime)</text>"
    )
    parts.append(
        f'<text x="10" y="{y0 + _TOP + 10}">{total / 1e6:.2f} MB</text>'
        f'<text x="10" y="{y0 + _TOP + plot_h}">0</text>'
    )
    return parts
