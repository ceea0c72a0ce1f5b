"""Draw one page of an uploaded file as a PNG, in a child process of its own.

    python -I page_render_child.py KIND PAGE WIDTH MEMORY_BYTES < original > png

KIND is "pdf" or "image", PAGE counts from 1, WIDTH is the PNG's width in
pixels. The original comes on stdin, the PNG leaves on stdout; the exit status
says why there is none (the codes below). Run as a script with `-I`, it imports
nothing of Curator or Django: a hostile file meets pdfium or Pillow in a process
that holds no secrets, caps its own address space and CPU time, and is killed by
its parent at the wall-clock limit (`web/page_images.py`).
"""

from __future__ import annotations

import io
import resource
import sys
import warnings

PAGE_MISSING = 3
UNREADABLE = 4
OUT_OF_MEMORY = 5
USAGE = 64
# A tall page is cut at this many widths, so the pixels stay bounded.
MAX_HEIGHT_RATIO = 4
MAX_IMAGE_PIXELS = 50_000_000  # Pillow refuses larger images (decompression bombs)
CPU_SECONDS = 30  # a backstop: the parent's wall-clock limit is shorter


def _limit(memory_bytes: int) -> None:
    if memory_bytes > 0:
        resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    resource.setrlimit(resource.RLIMIT_CPU, (CPU_SECONDS, CPU_SECONDS))


def render_pdf(data: bytes, page_number: int, width: int):
    import pypdfium2

    try:
        pdf = pypdfium2.PdfDocument(data)
    except pypdfium2.PdfiumError:
        sys.exit(UNREADABLE)
    if not 1 <= page_number <= len(pdf):
        sys.exit(PAGE_MISSING)
    page = pdf[page_number - 1]
    page_width, page_height = page.get_size()
    if page_width <= 0 or page_height <= 0:
        sys.exit(UNREADABLE)
    scale = min(width / page_width, MAX_HEIGHT_RATIO * width / page_height)
    return page.render(scale=scale).to_pil()


def render_image(data: bytes, page_number: int, width: int):
    from PIL import Image, UnidentifiedImageError

    Image.MAX_IMAGE_PIXELS = MAX_IMAGE_PIXELS
    warnings.simplefilter("error", Image.DecompressionBombWarning)
    try:
        image = Image.open(io.BytesIO(data))
        if page_number > getattr(image, "n_frames", 1):
            sys.exit(PAGE_MISSING)
        image.seek(page_number - 1)
        image.draft("RGB", (width, width * MAX_HEIGHT_RATIO))  # JPEG: decode smaller
        image.thumbnail((width, width * MAX_HEIGHT_RATIO))
        return image.convert("RGB") if image.mode not in ("RGB", "L") else image
    except (
        UnidentifiedImageError,
        Image.DecompressionBombError,
        Image.DecompressionBombWarning,
        OSError,
        ValueError,
        EOFError,
    ):
        sys.exit(UNREADABLE)


def main(argv: list[str]) -> int:
    try:
        kind, page_number, width, memory_bytes = (
            argv[0],
            int(argv[1]),
            int(argv[2]),
            int(argv[3]),
        )
    except (IndexError, ValueError):
        return USAGE
    _limit(memory_bytes)
    try:
        data = sys.stdin.buffer.read()
        draw = {"pdf": render_pdf, "image": render_image}.get(kind)
        if draw is None or page_number < 1 or width < 1:
            return USAGE
        picture = draw(data, page_number, width)
        out = io.BytesIO()
        picture.save(out, format="PNG", optimize=False)
    except MemoryError:
        return OUT_OF_MEMORY
    except Exception:  # whatever a hostile file makes a library raise
        return UNREADABLE
    sys.stdout.buffer.write(out.getvalue())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
