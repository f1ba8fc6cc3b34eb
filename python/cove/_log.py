"""Cove's log lines through Python's ``logging``, logger ``"cove"``.

COVE_LOG_LEVEL (error, warn, info, debug; default warn) chooses which lines
Cove emits; they reach the logger "cove" with their level, and logging's own
configuration decides where they go (without any, warnings and errors reach
stderr through logging's last-resort handler). A thread of this package moves
the lines from Cove's queue to logging; it stops at exit, after the last
lines. ``COVE_LOG_STDERR=1`` keeps Cove's own stderr output instead.
"""
import atexit
import logging
import os
import threading

from . import _cove

logger = logging.getLogger("cove")
_stop = threading.Event()
_thread = None


def _emit(lines, dropped):
    if dropped:
        logger.warning("%d log lines of Cove were dropped (more than 10000 waited)", dropped)
    for level, line in lines:
        logger.log(level, "%s", line)


def _pump():
    while not _stop.is_set():
        _emit(*_cove._log_lines(0.2))
    _emit(*_cove._log_lines(0))


def _finish():
    _stop.set()
    if _thread is not None:
        _thread.join(5)
    _cove._log_to_stderr()
    _emit(*_cove._log_lines(0))


def start():
    global _thread
    if os.environ.get("COVE_LOG_STDERR") == "1" or _thread is not None:
        return
    _cove._log_to_queue()
    _thread = threading.Thread(target=_pump, name="cove-log", daemon=True)
    _thread.start()
    atexit.register(_finish)
