"""Image files at the boundary: validated with Pillow, content-addressed by sha256.

Used by the loaders (entity images), ``kgqa ask`` (the query image) and the model
backends (``data:`` URLs for vLLM). Bad files raise InvalidInput naming the file.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from kgqa.core.errors import InvalidInput

IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".webp")
MAX_BYTES = 50 * 1024 * 1024          # 50 MB on disk
MAX_PIXELS = 64_000_000               # 64 megapixels (8000 x 8000)
MIN_SIDE = 8
_MIME = {"JPEG": "image/jpeg", "PNG": "image/png", "WEBP": "image/webp"}


@dataclass(frozen=True)
class ImageInput:
    """A validated query image: its bytes, sha256 and where it came from."""

    path: Path
    sha256: str
    data: bytes
    mime: str  # image/jpeg, image/png, image/webp
    width: int
    height: int


def load_image(path: str | Path, *, max_pixels: int = MAX_PIXELS, max_bytes: int = MAX_BYTES) -> ImageInput:
    """Read and validate an image file; InvalidInput with one line when it is not usable."""
    p = Path(path)
    try:
        size = p.stat().st_size
    except FileNotFoundError as e:
        raise InvalidInput(f"{p}: image file not found") from e
    except OSError as e:
        raise InvalidInput(f"{p}: cannot read image file ({e.strerror})") from e
    if not p.is_file():
        raise InvalidInput(f"{p}: not a file")
    if size > max_bytes:
        raise InvalidInput(f"{p}: image file is {size / 1e6:.1f} MB, over the {max_bytes / 1e6:.0f} MB limit")
    try:
        data = p.read_bytes()
    except OSError as e:
        raise InvalidInput(f"{p}: cannot read image file ({e.strerror})") from e
    return image_from_bytes(data, p, max_pixels=max_pixels)


def image_from_bytes(data: bytes, p: Path, *, max_pixels: int = MAX_PIXELS) -> ImageInput:
    """Validate image bytes (a file's, or a figure's taken out of a PDF); ``p`` names it in the one line of
    InvalidInput and becomes ``ImageInput.path``. The pixel limit is checked from the header, before decoding."""
    import io

    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(io.BytesIO(data)) as im:
            fmt = im.format
            width, height = im.size
            if width * height > max_pixels:
                raise InvalidInput(f"{p}: image is {width}x{height} pixels, over the {max_pixels:,}-pixel limit")
            if min(width, height) < MIN_SIDE:
                raise InvalidInput(f"{p}: image is {width}x{height} pixels, too small (min side {MIN_SIDE})")
            im.verify()  # detects truncated / corrupt data
    except InvalidInput:
        raise
    except Image.DecompressionBombError as e:
        raise InvalidInput(f"{p}: image exceeds the pixel limit ({e})") from e
    except UnidentifiedImageError as e:
        raise InvalidInput(f"{p}: not a readable image (JPEG, PNG or WebP)") from e
    except (OSError, SyntaxError, ValueError) as e:
        raise InvalidInput(f"{p}: not a readable image (JPEG, PNG or WebP): {e}") from e
    if fmt not in _MIME:
        raise InvalidInput(f"{p}: image format {fmt} is not supported (JPEG, PNG or WebP)")
    return ImageInput(path=Path(p).resolve(), sha256=hashlib.sha256(data).hexdigest(), data=data,
                      mime=_MIME[fmt], width=width, height=height)


def open_rgb(image: ImageInput):
    """The image as a Pillow RGB image (EXIF orientation applied)."""
    import io

    from PIL import Image, ImageOps

    with Image.open(io.BytesIO(image.data)) as im:
        return ImageOps.exif_transpose(im).convert("RGB")


def data_url(image: ImageInput) -> str:
    """``data:`` URL for OpenAI-compatible servers (vLLM)."""
    import base64

    return f"data:{image.mime};base64,{base64.b64encode(image.data).decode('ascii')}"
