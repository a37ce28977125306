"""What a recorder of runs outside this package writes with: the Temporal activities, which
record a run from the workers that perform it (:mod:`bloge.temporal.recording`), write to the
store the way :class:`~bloge.store.recorder.Recorder` does, and through these names only.

- :mod:`~bloge.store.ops`: the writes, as values, applied in one transaction per batch
  (``await store.write([...])``);
- :func:`segments`: a memory view by reference to a thread's log, as a checkpoint keeps it;
- :func:`callback_events` and :func:`chunk_event`: listener callbacks (redacted as the
  journal's events) and stream chunks as run events, :func:`end_event` the event that ends a
  run;
- :data:`EVENT_FLUSH_SECONDS`: how long a streaming run's events may wait for their batch;
- :mod:`~bloge.store.traced`: a run's spans, read off its events, when the store traces runs;
- :func:`await_calls`: the write of a paused round's waiting calls (their expiry stamped).

The records, the errors and the store itself are :mod:`bloge.store`'s public names.
"""

from bloge.store import ops, traced
from bloge.store.events import callback_events, chunk_event, end_event
from bloge.store.paused import await_calls
from bloge.store.recorder import EVENT_FLUSH_SECONDS
from bloge.store.records import segments

__all__ = [
    "EVENT_FLUSH_SECONDS",
    "await_calls",
    "callback_events",
    "chunk_event",
    "end_event",
    "ops",
    "segments",
    "traced",
]
