"""The OCR engine: loaded once per process, its failures, and a per-page deadline.

RapidOCR 3 (`rapidocr`) runs PaddleOCR's PP-OCRv6 small detection and recognition
models, shipped inside its wheel, with ONNX Runtime: nothing is downloaded.
"""

from __future__ import annotations

import contextlib
import importlib.util
import signal
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..blocks import OcrTimeout, OcrUnavailable

# An image is resized so that its longer side is at most this (RapidOCR's own
# default); larger pages are slower without reading better.
MAX_SIDE_PIXELS = 2000
# The models inside the `rapidocr` wheel (PP-OCRv6 small, multilingual).
MODEL_FILES = {
    "det": "PP-OCRv6_det_small.onnx",
    "rec": "PP-OCRv6_rec_small.onnx",
    "cls": "ch_ppocr_mobile_v2.0_cls_mobile.onnx",
}
# How the detector resizes: RapidOCR's default ("min", 736) enlarges a strip of
# text until its short side is 736 pixels, which makes a banner minutes long.
DETECTION_LIMIT = ("max", MAX_SIDE_PIXELS)
_engine: Any = None
_engine_lock = threading.Lock()


def engine_available() -> bool:
    """Whether OCR can run here (the engine loads and its models are present)."""
    try:
        get_engine()
    except OcrUnavailable:
        return False
    return True


def engine_installed() -> bool:
    """Cheaply, without loading it (for health checks): are the engine, its runtime
    and its model files installed?"""
    try:
        spec = importlib.util.find_spec("rapidocr")
        runtime = importlib.util.find_spec("onnxruntime")
    except (ImportError, ValueError):
        return False
    if spec is None or runtime is None or spec.origin is None:
        return False
    models = Path(spec.origin).parent / "models"
    return all((models / name).is_file() for name in MODEL_FILES.values())


def get_engine() -> Any:
    """The process's engine, loaded on first use (about a second; docs/ocr.md).

    Not preloaded in the parsers' fork server: an ONNX Runtime session is not
    documented to survive fork(), and each parser pays the load once in its life.
    """
    global _engine
    with _engine_lock:
        if _engine is None:
            _engine = _load_engine()
        return _engine


def _load_engine() -> Any:
    try:
        import rapidocr
    except ImportError as error:
        raise OcrUnavailable("the OCR engine is not installed") from error
    models = Path(rapidocr.__file__).parent / "models"
    paths = {task: models / name for task, name in MODEL_FILES.items()}
    if not all(path.is_file() for path in paths.values()):
        raise OcrUnavailable("the OCR engine's models are missing")
    try:
        return rapidocr.RapidOCR(
            params={
                "Global.log_level": "error",
                # The text-line classifier turns good lines upside down (noisy
                # serif Chinese, slightly rotated English); whole pages are
                # turned instead, see _read_upright.
                "Global.use_cls": False,
                # One thread per parser process: the parsers already run one per
                # core, and each thread maps its own stack under RLIMIT_AS.
                "EngineConfig.onnxruntime.intra_op_num_threads": 1,
                "EngineConfig.onnxruntime.inter_op_num_threads": 1,
                "Det.limit_type": DETECTION_LIMIT[0],
                "Det.limit_side_len": DETECTION_LIMIT[1],
                # Explicit paths: RapidOCR then never tries to fetch a model.
                "Det.model_path": str(paths["det"]),
                "Rec.model_path": str(paths["rec"]),
                "Cls.model_path": str(paths["cls"]),
            }
        )
    except MemoryError:
        raise
    except Exception as error:  # a damaged model file, a broken runtime
        raise_if_out_of_memory(error)
        raise OcrUnavailable("the OCR engine cannot be loaded") from error


def raise_if_out_of_memory(error: Exception) -> None:
    """ONNX Runtime reports a failed allocation (under RLIMIT_AS) as a runtime
    error whose message names std::bad_alloc; the sandbox expects MemoryError."""
    if any(sign in str(error) for sign in ("bad_alloc", "Failed to allocate")):
        raise MemoryError("OCR ran out of memory") from error


@contextlib.contextmanager
def deadline(seconds: float | None) -> Iterator[None]:
    """Raise OcrTimeout in this thread once `seconds` have passed (main thread only:
    elsewhere the caller's own wall-clock limit, the parser sandbox's, applies)."""
    if not seconds or threading.current_thread() is not threading.main_thread():
        yield
        return

    expired = False
    reason = f"OCR of one page took longer than {seconds:g} seconds"

    def expire(signum: int, frame: object) -> None:
        nonlocal expired
        expired = True
        raise OcrTimeout(reason)

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
        if expired:  # raised where the engine swallowed it
            raise OcrTimeout(reason)
    except Exception as error:
        # The engine may wrap the exception raised in its code in one of its own.
        if expired and not isinstance(error, OcrTimeout):
            raise OcrTimeout(reason) from error
        raise
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
