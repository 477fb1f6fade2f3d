"""The heatmap cells of an SVG figure, read back as tests/test_support.cpp's svgCellGrids reads them for the C++
figure tests: one filled rect per cell inside Qt's <g fill=… transform=matrix(…)> states."""

import functools
import re

_TAG = re.compile(r"<g\b([^>]*)>|</g>|<rect\b([^>]*)>")
_FILL = re.compile(r'\bfill="#([0-9a-fA-F]{6})"')
_MATRIX = re.compile(r'transform="matrix\(([-0-9.e]+),[-0-9.e]+,[-0-9.e]+,([-0-9.e]+),([-0-9.e]+),([-0-9.e]+)\)"')


def _number(attrs, name):
    m = re.search(r'\b' + name + r'="([-0-9.e]+)"', attrs)
    return float(m.group(1)) if m else 0.0


def filled_rects(svg):
    """Every rect with a solid fill as (x, y, w, h, 0xRRGGBB) in page coordinates."""
    stack = [("", 1.0, 1.0, 0.0, 0.0)]  # fill, matrix(a, 0, 0, d, e, f)
    out = []
    for m in _TAG.finditer(svg):
        if m.group(1) is not None:
            fill, a, d, e, f = stack[-1]
            attrs = m.group(1)
            v = _FILL.search(attrs)
            if v:
                fill = v.group(1)
            elif 'fill="none"' in attrs:
                fill = ""
            v = _MATRIX.search(attrs)
            if v:
                a, d, e, f = map(float, v.groups())
            stack.append((fill, a, d, e, f))
        elif m.group(2) is not None:
            attrs = m.group(2)
            v = _FILL.search(attrs)
            fill, a, d, e, f = stack[-1]
            fill = v.group(1) if v else fill
            if fill:
                out.append((a * _number(attrs, "x") + e, d * _number(attrs, "y") + f, a * _number(attrs, "width"),
                            d * _number(attrs, "height"), int(fill, 16)))
        elif len(stack) > 1:
            stack.pop()
    return out


def cell_grids(svg, rows, cols):
    """Every grid of rows × cols equal rects side by side, in reading order: a list of row-major colour lists."""
    by_size = {}
    for c in filled_rects(svg):
        if c[2] > 0 and c[3] > 0:
            by_size.setdefault((round(c[2] * 100), round(c[3] * 100)), []).append(c)
    grids = []
    for cells in by_size.values():
        cells.sort(key=lambda c: (c[1], c[0]))
        used = [False] * len(cells)
        for o, origin in enumerate(cells):
            if used[o]:
                continue
            ox, oy, ow, oh, _ = origin
            # The steps are the distances to the next cell right and below (neighbours may overlap slightly).
            step_x, step_y = ow, oh
            for x, y, _, _, _ in cells[o + 1:]:
                dx, dy = x - ox, y - oy
                if abs(dy) < oh * 0.1 and ow * 0.5 < dx < ow * 1.5:
                    step_x = min(step_x, dx)
                if abs(dx) < ow * 0.1 and oh * 0.5 < dy < oh * 1.5:
                    step_y = min(step_y, dy)
            members = [None] * (rows * cols)
            for k in range(o, len(cells)):
                if used[k]:
                    continue
                fj, fi = (cells[k][0] - ox) / step_x, (cells[k][1] - oy) / step_y
                i, j = round(fi), round(fj)
                if 0 <= i < rows and 0 <= j < cols and abs(fi - i) <= 0.1 and abs(fj - j) <= 0.1 \
                        and members[i * cols + j] is None:
                    members[i * cols + j] = k
            if None in members:
                continue
            for k in members:
                used[k] = True
            grids.append((oy, ox, [cells[k][4] for k in members]))
    grids.sort(key=functools.cmp_to_key(lambda a, b: (a[0] > b[0]) - (a[0] < b[0]) if abs(a[0] - b[0]) > 0.5
                                        else (a[1] > b[1]) - (a[1] < b[1])))
    return [g[2] for g in grids]


def gray_problems(colours, weights, hi, masked_rgb=0xE1E1E4):
    """Where the cells (colours of --colormap gray, row-major) do not show `weights` over [0, hi]: the gray map's
    entry k is (k, k, k), so a cell of weight w is gray 255·w/hi, to one step. A weight of exactly 0 may show
    `masked_rgb` (a masked key's colour, as cellColourProblems allows)."""
    problems = []
    for n, (rgb, w) in enumerate(zip(colours, weights)):
        if w == 0 and rgb == masked_rgb:
            continue
        r, g, b = rgb >> 16 & 0xFF, rgb >> 8 & 0xFF, rgb & 0xFF
        if not r == g == b or abs(r - 255.0 * w / hi) > 1.0:
            problems.append(f"cell {n}: weight {w} drawn as #{rgb:06x}")
    return problems
