"""A libzmq PULL listener for the expiry-stream tests.

Connects to every endpoint given, prints each multipart message it
receives as one line of space-separated hex frames, and exits after
--count messages or --idle seconds without one. Run it with Debian's
/usr/bin/python3 (python3-zmq).
"""
import argparse
import sys

import zmq


def glue_key_values(argv, options):
    """Joins "--option VALUE" into "--option=VALUE" for options taking a key:
    one Z85 key in 85 starts with "-", which argparse takes for an option."""
    out, i = [], 0
    while i < len(argv):
        if argv[i] in options and i + 1 < len(argv):
            out.append(argv[i] + "=" + argv[i + 1])
            i += 2
        else:
            out.append(argv[i])
            i += 1
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("endpoints", nargs="+")
    ap.add_argument("--count", type=int, default=0)
    # Long: a test may keep a listener waiting for its first message
    # while a busy machine starts servers and sentinels; the test kills it.
    ap.add_argument("--idle", type=float, default=120.0)
    ap.add_argument("--heartbeat", type=int, default=0, help="ZMQ_HEARTBEAT_IVL in ms")
    ap.add_argument("--hwm", type=int, default=1000)
    ap.add_argument("--curve-server-key", help="the server's CURVE public key (Z85): CURVE on")
    ap.add_argument("--curve-secret-key", help="this listener's CURVE secret key (Z85)")
    a = ap.parse_args(glue_key_values(sys.argv[1:], {"--curve-server-key", "--curve-secret-key"}))

    ctx = zmq.Context()
    s = ctx.socket(zmq.PULL)
    s.setsockopt(zmq.RCVHWM, a.hwm)
    s.setsockopt(zmq.LINGER, 0)
    if a.curve_server_key:
        s.curve_secretkey = a.curve_secret_key.encode()
        s.curve_publickey = zmq.curve_public(a.curve_secret_key.encode())
        s.curve_serverkey = a.curve_server_key.encode()
    if a.heartbeat:
        s.setsockopt(zmq.HEARTBEAT_IVL, a.heartbeat)
        s.setsockopt(zmq.HEARTBEAT_TIMEOUT, a.heartbeat * 3)
    for ep in a.endpoints:
        s.connect(ep)
    poller = zmq.Poller()
    poller.register(s, zmq.POLLIN)
    out = sys.stdout
    n = 0
    while a.count == 0 or n < a.count:
        if not poller.poll(int(a.idle * 1000)):
            break
        frames = s.recv_multipart()
        out.write(" ".join(f.hex() for f in frames))
        out.write("\n")
        out.flush()
        n += 1
    s.close()
    ctx.term()


if __name__ == "__main__":
    main()
