#!/usr/bin/env python3
"""Relays TCP connections to a port on this network namespace's loopback.

Used by hosts.sh: mpiexec's PMIx server listens on its own loopback only,
and an MPI rank in another network namespace reaches it through this relay,
listening on an address of the test's own bridge.
    relay.py LISTEN_IP TARGET_PORT PORT_FILE
The port it listens on is written to PORT_FILE once it listens.
"""
import os
import socket
import sys
import threading


def pump(src, dst):
    try:
        while data := src.recv(65536):
            dst.sendall(data)
    except OSError:
        pass
    for s in (src, dst):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def main():
    listen_ip, target_port, port_file = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind((listen_ip, 0))
    server.listen(16)
    with open(port_file + ".tmp", "w") as f:
        f.write(str(server.getsockname()[1]))
    os.rename(port_file + ".tmp", port_file)
    while True:
        client, _ = server.accept()
        target = socket.create_connection(("127.0.0.1", target_port))
        for a, b in ((client, target), (target, client)):
            threading.Thread(target=pump, args=(a, b), daemon=True).start()


if __name__ == "__main__":
    main()
