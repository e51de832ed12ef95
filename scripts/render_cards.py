"""Draws the pack's images: each template's thumbnail (``example_workflows/<name>.jpg``, the file
ComfyUI's template browser shows for ``<name>.json``) and the registry icon (``docs/images/icon.png``).

A thumbnail is the template's own graph drawn from its JSON: every node at its saved position and
size, the BCG nodes highlighted, the links between them, the title above. Nothing is invented:
rerun it after editing a template. Needs Pillow (ComfyUI's environment has it) and the DejaVu fonts.

    python scripts/render_cards.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

ROOT = Path(__file__).resolve().parents[1]
FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
BOLD = "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf"
BACKGROUND, NODE, TITLE_BAR, BCG, TEXT, LINK = "#202020", "#353535", "#2a2a2a", "#2f7d4f", "#e8e8e8", "#9a9a9a"
THUMB = (800, 600)


def font(size: int, bold: bool = False) -> ImageFont.FreeTypeFont:
    return ImageFont.truetype(BOLD if bold else FONT, size)


def thumbnail(workflow: Path) -> Path:
    graph = json.loads(workflow.read_text())
    nodes = {n["id"]: n for n in graph["nodes"] if n["type"] != "Note"}
    x0 = min(n["pos"][0] for n in nodes.values())
    y0 = min(n["pos"][1] for n in nodes.values())
    x1 = max(n["pos"][0] + n["size"][0] for n in nodes.values())
    y1 = max(n["pos"][1] + n["size"][1] for n in nodes.values())
    top, bottom, margin = 120, 70, 30
    scale = min((THUMB[0] - 2 * margin) / (x1 - x0), (THUMB[1] - top - bottom) / (y1 - y0))
    top += ((THUMB[1] - top - bottom) - (y1 - y0) * scale) / 2  # the graph centred in its band

    def box(n):
        x, y = margin + (n["pos"][0] - x0) * scale, top + (n["pos"][1] - y0) * scale
        return x, y, x + n["size"][0] * scale, y + max(n["size"][1], 40) * scale

    image = Image.new("RGB", THUMB, BACKGROUND)
    draw = ImageDraw.Draw(image)
    size = 34  # the title shrinks until it fits the card
    while size > 18 and draw.textlength(workflow.stem, font=font(size, bold=True)) > THUMB[0] - 2 * margin:
        size -= 1
    draw.text((margin, 26 + (34 - size) / 2), workflow.stem, font=font(size, bold=True), fill=TEXT)
    draw.text(
        (margin, 72),
        "BCG Apply + BCG Warmup Capture: the same pixels, replayed as CUDA graphs",
        font=font(17),
        fill=LINK,
    )
    for _, src, _, dst, _, _ in graph["links"]:
        a, b = box(nodes[src]), box(nodes[dst])
        if b[0] >= a[2]:  # left to right: output side to input side
            draw.line([(a[2], (a[1] + a[3]) / 2), (b[0], (b[1] + b[3]) / 2)], fill=LINK, width=2)
        else:  # stacked: bottom to top
            below = b[1] >= a[3]
            draw.line(
                [((a[0] + a[2]) / 2, a[3] if below else a[1]), ((b[0] + b[2]) / 2, b[1] if below else b[3])],
                fill=LINK,
                width=2,
            )
    small = font(13)
    for n in nodes.values():
        left, upper, right, lower = box(n)
        is_bcg = n["type"].startswith("BCG")
        draw.rounded_rectangle([left, upper, right, lower], radius=6, fill=BCG if is_bcg else NODE, outline="#5a5a5a")
        draw.rectangle([left + 1, upper + 1, right - 1, upper + 20], fill=BCG if is_bcg else TITLE_BAR)
        label = (
            n["type"]
            if not is_bcg
            else {"BCGApply": "BCG Apply", "BCGWarmupCapture": "BCG Warmup Capture"}.get(n["type"], n["type"])
        )
        while draw.textlength(label, font=small) > right - left - 8 and len(label) > 4:
            label = label[:-2] + "…" if not label.endswith("…") else label[:-2] + "…"
        draw.text((left + 5, upper + 3), label, font=small, fill=TEXT)
    draw.text((margin, THUMB[1] - 45), "Needs an NVIDIA GPU · the model must fit in VRAM · other calls run as usual, with the reason",
              font=font(15), fill=LINK)  # fmt: skip
    out = workflow.with_suffix(".jpg")
    image.save(out, "JPEG", quality=88)
    return out


def icon() -> Path:
    """A 400x400 square (the registry's limit): three graph segments with eager breaks between them."""
    size = 400
    image = Image.new("RGB", (size, size), "#1b1f24")
    draw = ImageDraw.Draw(image)
    draw.text((size / 2, 120), "BCG", font=font(120, bold=True), fill="#e8e8e8", anchor="mm")
    y, left, width, gap = 265, 40, 90, 15
    for i in range(3):
        x = left + i * (width + gap)
        draw.rounded_rectangle([x, y, x + width, y + 60], radius=10, fill="#2f7d4f")
        if i < 2:
            draw.ellipse([x + width + 2, y + 24, x + width + gap - 2, y + 36], fill="#d9a441")
    draw.text((size / 2, 360), "breakable CUDA graphs", font=font(26), fill="#9a9a9a", anchor="mm")
    out = ROOT / "docs" / "images" / "icon.png"
    out.parent.mkdir(parents=True, exist_ok=True)
    image.save(out, "PNG")
    return out


def main() -> int:
    for workflow in sorted((ROOT / "example_workflows").glob("*.json")):
        print(thumbnail(workflow))
    print(icon())
    return 0


if __name__ == "__main__":
    sys.exit(main())
