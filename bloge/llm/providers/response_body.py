"""Reading a response body with limits: its size, the time between lines of a stream, UTF-8.

httpx bounds each read of the socket, not a whole body: a server that trickles a byte at a
time, or never stops sending, would hold a call forever and fill memory. These readers raise
:class:`AttemptError` instead, with a message that says which limit was hit.
"""

from __future__ import annotations

import asyncio
import codecs
from collections.abc import AsyncIterator

import httpx

from bloge.llm.providers.retry import AttemptError

DEFAULT_MAX_RESPONSE_BYTES = 32 * 1024 * 1024
"""32 MiB: far above any JSON answer, and some 100,000 tokens of an OpenAI stream."""

# Byte values, not b"\n": `int in bytes` is a plain memchr, ten times faster per read.
_LF, _CR = 0x0A, 0x0D


async def read_body(response: httpx.Response, *, limit: int) -> bytes:
    """The whole (decompressed) body of a streamed ``response``, at most ``limit`` bytes."""
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise too_large(limit)
    pieces: list[bytes] = []
    received = 0
    async for chunk in response.aiter_bytes():
        received += len(chunk)
        if received > limit:
            raise too_large(limit)
        pieces.append(chunk)
    return b"".join(pieces)


def utf8_text(body: bytes) -> str:
    """``body`` as text; JSON is UTF-8 (RFC 8259), so any other bytes fail the call."""
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise not_utf8(exc, offset=0) from exc


def quoted(body: bytes) -> str:
    """An error body as text to quote, whatever its bytes (undecodable ones replaced)."""
    return body.decode("utf-8", errors="replace")


def too_large(limit: int) -> AttemptError:
    return AttemptError(
        f"the response is larger than {limit:,} bytes (max_response_bytes)", retryable=False
    )


def not_utf8(exc: UnicodeDecodeError, *, offset: int) -> AttemptError:
    """The error for ``exc``; ``offset`` is where the bytes it decoded began in the body."""
    byte = exc.object[exc.start]
    return AttemptError(
        f"the response is not valid UTF-8 (byte 0x{byte:02x} at offset {offset + exc.start})",
        retryable=False,
    )


class StreamWatch:
    """Watches a streamed body read by read: its size, its UTF-8, the time between its lines.

    ``idle`` (``None`` for no limit) bounds the wait for each next line: httpx's read timeout
    already fails a server that goes silent, and this fails one that keeps sending without
    ever finishing a line. Hand each read to :meth:`text`; read the next one with
    :meth:`read_in_time` while :attr:`stalling`, else as usual. (The reading loop stays with
    the caller: one more generator between the socket and the SSE decoder costs a tenth of the
    time a chunk takes.)
    """

    __slots__ = ("_clock", "_deadline", "_decoder", "_idle", "_limit", "_received", "stalling")

    def __init__(self, *, idle: float | None, limit: int) -> None:
        self._idle = idle
        self._limit = limit
        self._clock = asyncio.get_running_loop().time
        self._decoder = codecs.getincrementaldecoder("utf-8")()
        self._received = 0
        # When the next line must have ended: `idle` after the last line end (or the start).
        self._deadline = self._clock() + idle if idle is not None else 0.0
        self.stalling = False
        """Whether the last read ended inside a line: the next must beat the deadline. (After a
        line end, httpx's read timeout is the same bound, and costs nothing more.)"""

    def text(self, chunk: bytes) -> str:
        """The text of one read, once it is counted against the limits."""
        self._received += len(chunk)
        if self._received > self._limit:
            raise too_large(self._limit)
        if self._idle is not None:
            if _LF in chunk or _CR in chunk:
                self.stalling = False
                self._deadline = self._clock() + self._idle
            else:
                self.stalling = True
        return self._decoded(chunk, final=False)

    def end(self) -> str:
        """The text the decoder still held at the end of the body."""
        return self._decoded(b"", final=True)

    async def read_in_time(self, chunks: AsyncIterator[bytes]) -> bytes:
        """The next read of ``chunks``, unless the line it belongs to is overdue; raises
        ``StopAsyncIteration`` at the end, as ``chunks`` does."""
        try:
            async with asyncio.timeout_at(self._deadline):
                return await chunks.__anext__()
        except TimeoutError as exc:
            message = f"the stream timed out: no complete line in {self._idle:g} s"
            raise AttemptError(message, retryable=True) from exc

    def _decoded(self, chunk: bytes, *, final: bool) -> str:
        try:
            return self._decoder.decode(chunk, final)
        except UnicodeDecodeError as exc:
            # The decoder failed on the bytes it held back from the last read plus this one.
            held = len(self._decoder.getstate()[0])
            raise not_utf8(exc, offset=self._received - len(chunk) - held) from exc
