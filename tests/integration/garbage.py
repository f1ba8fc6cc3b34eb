#!/usr/bin/env python3
"""Garbage of many shapes on the listeners of a running cove-server.

    garbage.py --pid PID --mode cove|ucx [--seconds S] [--during CMD] [--seed N]

Finds every socket the server process listens on (ss), then, on each:
empty connections, runs of zeros and of 0xff and random bytes of many
lengths, frames that look like Cove's (every kind, lengths at and past the
limits, truncated), hellos cut short, connections that stop mid-frame and
stay open, and thousands of connections at once. While the stalled and
the many connections are still open it runs CMD (a client that must be
served). --mode cove: the server's own listeners (Unix sockets, and TCP
for a server of transport tcp), with reads by guessed keys too; ucx: its
TCP listeners (UCX's, a server of transport ucx), with UCX-looking packets
too. --seconds S repeats
rounds with new random shapes for S seconds (make fuzz); 0: one round.
Exit status 0 when the server is alive at the end and CMD succeeded.
"""
import argparse
import os
import random
import socket
import struct
import subprocess
import sys
import time

FRAME_KINDS = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0xFFFFFFFF]
FRAME_LENGTHS = [0, 1, 15, 16, 64, 65, 65536, (1 << 20) + (64 << 10), (1 << 20) + (64 << 10) + 1, 0x7FFFFFFF, 0xFFFFFFFF]
COVE_MAGIC = 0x45564F43  # "COVE", net/wire.hpp
UCX_MAGIC = struct.pack("<Q", 0xCAFEBABE12345678)


def listeners(pid, mode):
    """(family, address) of every listening socket of process `pid`."""
    out = []
    if mode == "cove":
        text = subprocess.run(["ss", "-lxpH"], capture_output=True, text=True, check=True).stdout
        for line in text.splitlines():
            if f"pid={pid}," not in line:
                continue
            name = line.split()[4]
            if name.startswith("@"):
                out.append((socket.AF_UNIX, "\0" + name[1:]))
    if True:  # TCP: Cove's own (mode cove, a server of transport tcp) or UCX's
        text = subprocess.run(["ss", "-ltnpH"], capture_output=True, text=True, check=True).stdout
        for line in text.splitlines():
            if f"pid={pid}," not in line:
                continue
            host, port = line.split()[3].rsplit(":", 1)
            out.append((socket.AF_INET, (host.strip("[]"), int(port))))
    return out


def connect(family, address):
    s = socket.socket(family, socket.SOCK_STREAM)
    s.settimeout(2)
    s.connect(address)
    return s


def frame(kind, length, ident, payload=b""):
    return struct.pack("<IIQ", kind, length & 0xFFFFFFFF, ident) + payload


def shapes(rng, mode):
    """Byte strings sent on a connection of their own, then closed."""
    yield b""
    for n in [1, 2, 3, 4, 7, 8, 15, 16, 17, 23, 24, 31, 32, 33, 63, 64, 65, 100, 212, 1000, 4096, 65536, 300000]:
        yield b"\0" * n
        yield b"\xff" * n
        yield rng.randbytes(n)
    yield b"\0" * 32 + b"garbage"
    for kind in FRAME_KINDS:
        for length in FRAME_LENGTHS:
            body = rng.randbytes(min(length, 256))
            yield frame(kind, length, rng.getrandbits(64), body)  # whole when short, truncated otherwise
    # A request frame holding a Cove message (magic, wire version, every
    # type, a body length true or not) with a garbled body, whole or cut
    # short: the server's decoder answers with an error or drops it.
    for op in range(0, 40):
        body = rng.randbytes(rng.choice([0, 3, 40, 300]))
        claimed = rng.choice([len(body), len(body) + 1, 0xFFFFFFFF])
        msg = struct.pack("<IHHQII", COVE_MAGIC, rng.choice([9, 8, 0xFFFF]), op, rng.getrandbits(64), 0, claimed) + body
        yield frame(1, len(msg), rng.getrandbits(64), msg)
        yield frame(8, len(msg), rng.getrandbits(64), msg)  # as a notice
        yield frame(1, len(msg) + 100, rng.getrandbits(64), msg)  # truncated
    # Reads of memory by guessed keys (region ids are small counters; the
    # token is what nobody can guess): every one is refused.
    for region in list(range(0, 8)) + [1 << 63, (1 << 63) + 1, (1 << 63) + 2]:
        body = struct.pack("<QQQQQI", rng.getrandbits(47), 4096, region, os.getpid(), rng.choice([0, rng.getrandbits(64)]), 1)
        body += struct.pack("<QQ", 0, 4096)
        ask = struct.pack("<IHHQII", COVE_MAGIC, 0, 0, 0, 0, len(body)) + body
        yield frame(3, len(ask), rng.getrandbits(64), ask)
    if mode == "ucx":
        for am_id in [0, 1, 63, 64, 65, 255]:
            for length in [0, 4, 21, 25, 29, 64, 65536, 0xFFFFFFFF]:
                yield UCX_MAGIC + struct.pack("<BI", am_id, length) + rng.randbytes(min(length, 64))
        for _ in range(50):
            yield UCX_MAGIC + rng.randbytes(rng.choice([1, 5, 16, 40, 200]))


def send_and_close(family, address, data):
    try:
        s = connect(family, address)
    except OSError as e:
        return f"connect: {e}"
    try:
        if data:
            s.sendall(data)
        s.shutdown(socket.SHUT_WR)
        s.settimeout(0.5)
        try:
            while s.recv(65536):
                pass
        except OSError:
            pass
    except OSError:
        pass  # the server may close first: that is a drop, as wanted
    finally:
        s.close()
    return None


def hold_open(family, address, count, rng):
    """`count` connections, each stopped in the middle of a frame."""
    held = []
    for i in range(count):
        s = None
        for _ in range(200):  # a full backlog (EAGAIN) empties as the server accepts
            try:
                s = connect(family, address)
                break
            except BlockingIOError:
                time.sleep(0.01)
            except OSError as e:
                print(f"note: connection {i} not made ({e})")
                break
        if s is None:
            print(f"note: going on with {len(held)} connections")
            break
        try:
            s.send(frame(1, 1000, i)[: rng.choice([1, 7, 15, 16])] if i % 3 else frame(1, 1000, i, b"x" * 10))
        except OSError:
            pass
        held.append(s)
    return held


def alive(pid):
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    with open(f"/proc/{pid}/stat") as f:
        return f.read().split(") ")[1][0] not in "ZX"


def one_round(pid, mode, rng, during, count):
    targets = listeners(pid, mode)
    if not targets:
        print(f"FAIL: process {pid} listens on nothing ({mode})")
        return False
    for family, address in targets:
        shown = address if family != socket.AF_UNIX else "@" + address[1:]
        n = 0
        for data in shapes(rng, mode):
            err = send_and_close(family, address, data)
            n += 1
            if err and not alive(pid):
                print(f"FAIL: the server died on {shown} after shape {n} ({len(data)} bytes: {data[:40]!r}...)")
                return False
        print(f"ok: {n} shapes of garbage on {shown}")
        held = hold_open(family, address, count, rng)
        fds = len(os.listdir(f"/proc/{pid}/fd"))
        print(f"ok: {len(held)} connections held open on {shown}, each stopped mid-frame; the server holds {fds} descriptors")
        if during:
            r = subprocess.run(during, shell=True)
            if r.returncode != 0:
                print(f"FAIL: '{during}' failed (status {r.returncode}) while they were open")
                for s in held:
                    s.close()
                return False
            print(f"ok: a client was served while they were open")
        for s in held:
            s.close()
        if not alive(pid):
            print(f"FAIL: the server died on {shown}")
            return False
    return True


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--pid", type=int, required=True)
    p.add_argument("--mode", choices=["cove", "ucx"], required=True)
    p.add_argument("--seconds", type=float, default=0)
    p.add_argument("--during", default="")
    p.add_argument("--seed", type=int, default=34)
    p.add_argument("--connections", type=int, default=2000)
    a = p.parse_args()
    rng = random.Random(a.seed)
    end = time.monotonic() + a.seconds
    rounds = 0
    while True:
        if not one_round(a.pid, a.mode, rng, a.during, a.connections):
            return 1
        rounds += 1
        if time.monotonic() >= end:
            break
    time.sleep(0.5)
    if not alive(a.pid):
        print("FAIL: the server died")
        return 1
    print(f"ok: {rounds} round(s); the server is alive")
    return 0


if __name__ == "__main__":
    sys.exit(main())
