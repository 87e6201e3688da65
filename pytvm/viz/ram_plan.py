"""Pictures of a microcontroller model's memory: the AOT workspace over the steps, and the
memory report's regions.

:func:`ram_plan_svg` / :func:`ram_plan_text` draw an AOT module's static workspace
(``module.memory_plan``: an AOT executor factory or a Model Library Format archive read back):
the horizontal axis is the kernel calls in order, the vertical axis the workspace's bytes, and
each buffer a box at its offset over the steps it lives (intermediates coloured, kernel scratch
hatched grey). With a :class:`~pytvm.micro.memory_report.MemoryReport` the SVG also draws each
region of the board as a bar split into the sections placed there.
"""

from __future__ import annotations

import html
from typing import Any

__all__ = ["memory_report_text", "ram_plan_svg", "ram_plan_text"]

_W, _H, _LEFT, _TOP = 960, 420, 90, 40
_BAR_H, _BAR_GAP, _LABEL_H = 26, 16, 16
_COLORS = ("#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7")
_SECTION_COLORS = {
    "code": "#4e79a7",
    "weights": "#f28e2b",
    "data": "#edc948",
    "workspace": "#59a14f",
    "io": "#76b7b2",
    "stack": "#e15759",
    "crt code": "#b07aa1",
    "crt data": "#ff9da7",
}


def _steps(module: Any) -> int:
    last = max((b.last_step for b in module.memory_plan), default=-1)
    return max(last + 1, len(getattr(module, "kernels", [])), 1)


def ram_plan_text(module: Any) -> str:
    """The workspace plan as a table: one line per buffer (offset, bytes, steps, kind)."""
    lines = [
        f"RAM plan of {module.mod_name}: workspace {module.workspace_bytes:,} bytes, "
        f"{len(module.memory_plan)} buffers over {_steps(module)} kernel calls",
        f"  {'offset':>10} {'bytes':>10} {'steps':>9}  {'kind':<12} name",
    ]
    for b in sorted(module.memory_plan, key=lambda b: (b.offset, b.first_step)):
        steps = f"{b.first_step}-{b.last_step}"
        lines.append(f"  {b.offset:>10,} {b.nbytes:>10,} {steps:>9}  {b.kind:<12} {b.name}")
    kernels = getattr(module, "kernels", [])
    if kernels:
        lines.append("  steps: " + ", ".join(f"{i} {k.name}" for i, k in enumerate(kernels)))
    return "\n".join(lines)


def memory_report_text(report: Any) -> str:
    """The memory report's regions, one bar of ``#`` per region (60 columns = its size)."""
    lines = []
    for use in report.regions:
        r = use.region
        cells = min(60, round(60 * use.used / r.size)) if r.size else 0
        lines.append(
            f"{r.name:<10} [{'#' * cells}{'.' * (60 - cells)}] {use.used:,} / {r.size:,} "
            f"({', '.join(f'{s.name} {s.nbytes:,}' for s in use.sections)})"
        )
    return "\n".join(lines)


def _plan_panel(module: Any, title: str) -> list[str]:
    plot_w, plot_h = _W - _LEFT - 20, _H - _TOP - 50
    steps = _steps(module)
    total = max(
        module.workspace_bytes, max((b.offset + b.nbytes for b in module.memory_plan), default=0), 1
    )
    sx, sy = plot_w / steps, plot_h / total
    head = (
        f"{html.escape(title or module.mod_name)}: static workspace {module.workspace_bytes:,} "
        f"bytes, {len(module.memory_plan)} buffers over {steps} kernel calls"
    )
    out = [
        f'<text x="10" y="20" font-size="13">{head}</text>',
        f'<rect x="{_LEFT}" y="{_TOP}" width="{plot_w}" height="{plot_h}" fill="none" '
        'stroke="#888"/>',
    ]
    for i, b in enumerate(module.memory_plan):
        x = _LEFT + b.first_step * sx
        w = max((b.last_step - b.first_step + 1) * sx, 1.0)
        y = _TOP + plot_h - (b.offset + b.nbytes) * sy
        h = max(b.nbytes * sy, 0.5)
        fill = "url(#scratch)" if b.kind == "scratch" else _COLORS[i % len(_COLORS)]
        tip = (
            f"{b.name} ({b.kind}): {b.nbytes:,} B at offset {b.offset:,}, "
            f"steps {b.first_step}-{b.last_step}"
        )
        out.append(
            f'<rect class="buffer" x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" '
            f'fill="{fill}" stroke="white" stroke-width="0.5"><title>{html.escape(tip)}</title>'
            "</rect>"
        )
        if h > _LABEL_H and w > 6 * len(b.name):
            out.append(
                f'<text x="{x + 3:.1f}" y="{y + 13:.1f}" fill="white">{html.escape(b.name)}</text>'
            )
    out.append(
        f'<text x="{_LEFT}" y="{_H - 20}">kernel call 0 .. {steps - 1} (hover a box for its '
        "buffer, size, offset and lifetime; hatched: kernel scratch)</text>"
    )
    out.append(f'<text x="10" y="{_TOP + 10}">{total:,} B</text>')
    out.append(f'<text x="10" y="{_TOP + plot_h}">0</text>')
    return out


def _report_panel(report: Any, y0: int) -> list[str]:
    out = [
        f'<text x="10" y="{y0 + 16}" font-size="13">{html.escape(report.memory_map.name)}: '
        f"{'fits' if report.fits else 'DOES NOT FIT'}</text>"
    ]
    plot_w = _W - _LEFT - 20
    for row, use in enumerate(report.regions):
        r = use.region
        y = y0 + 28 + row * (_BAR_H + _BAR_GAP)
        out.append(f'<text x="10" y="{y + 17}">{html.escape(r.name)}</text>')
        out.append(
            f'<rect x="{_LEFT}" y="{y}" width="{plot_w}" height="{_BAR_H}" fill="#eee" '
            'stroke="#888"/>'
        )
        x = float(_LEFT)
        for s in use.sections:
            w = plot_w * s.nbytes / r.size
            tip = f"{s.name}: {s.nbytes:,} B ({s.note})"
            out.append(
                f'<rect class="section" x="{x:.1f}" y="{y}" width="{w:.1f}" height="{_BAR_H}" '
                f'fill="{_SECTION_COLORS.get(s.name, "#999")}"><title>{html.escape(tip)}</title>'
                "</rect>"
            )
            x += w
        out.append(
            f'<text x="{_LEFT + plot_w - 4}" y="{y + 17}" text-anchor="end">{use.used:,} / '
            f"{r.size:,} B</text>"
        )
    return out


def ram_plan_svg(module: Any, report: Any | None = None, title: str = "") -> str:
    """The SVG picture of ``module``'s workspace plan, and of ``report``'s regions if given."""
    rows = len(report.regions) if report is not None else 0
    height = _H + (40 + rows * (_BAR_H + _BAR_GAP) if report is not None else 0)
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{_W}" height="{height}" '
        'font-family="sans-serif" font-size="11">',
        '<defs><pattern id="scratch" width="6" height="6" patternUnits="userSpaceOnUse" '
        'patternTransform="rotate(45)"><rect width="6" height="6" fill="#bbb"/>'
        '<line x1="0" y1="0" x2="0" y2="6" stroke="#777" stroke-width="2"/></pattern></defs>',
        f'<rect width="{_W}" height="{height}" fill="white"/>',
    ]
    out += _plan_panel(module, title)
    if report is not None:
        out += _report_panel(report, _H)
    out.append("</svg>")
    return "\n".join(out)
