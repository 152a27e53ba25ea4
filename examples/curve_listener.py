#!/usr/bin/python3
"""A zredis expiry listener with CURVE, in Python (pyzmq).

zredis with expiry-zmq-curve-secret-key set accepts only CURVE listeners
whose public key is in expiry-zmq-curve-allowed-keys. This listener
prints one JSON line per expired key:

    {"db": 0, "type": "string", "key": "k", "value": "v"}

Make a key pair once (or use zredis-expiry-listen --curve-keygen):

    python3 -c 'import zmq; p, s = zmq.curve_keypair(); print(p.decode()); print(s.decode())'

put the public key in the server's expiry-zmq-curve-allowed-keys, and run:

    ZREDIS_CURVE_SECRET_KEY='<secret key>' python3 examples/curve_listener.py \\
        --endpoint tcp://127.0.0.1:5555 \\
        --server-key '<INFO expiry: expiry_zmq_curve_public_key>'

The secret key is read from the environment (or --secret-key-file), not
the command line, which other users can see.

With expiry-zmq-message-id yes the server adds a fourth frame, the message
id, printed as "id"; a message whose id is among the last --dedup ids
(100000) reports an expiry already printed, and is dropped.
"""
import argparse
import collections
import json
import os
import struct
import sys

import zmq

# 6, hash-fields: the fields of a hash that expired on their own (per-field
# expiry) with their values, frame 3 laid out as a hash's.
TYPES = {0: "string", 1: "hash", 2: "list", 3: "set", 4: "zset", 5: "stream", 6: "hash-fields"}


def item(frame, off):
    """One uint32-length-prefixed item at off, and the offset past it."""
    (n,) = struct.unpack_from("=I", frame, off)
    if off + 4 + n > len(frame):
        raise ValueError("an item runs past its frame")
    return frame[off + 4:off + 4 + n], off + 4 + n


def items(frame):
    """The uint32-length-prefixed items of frame 3 (native byte order)."""
    (count,) = struct.unpack_from("=I", frame, 0)
    off, out = 4, []
    for _ in range(count):
        it, off = item(frame, off)
        out.append(it)
    return out


def stream_entries(frame):
    """A stream's frame 3: a uint32 count of entries, then for each its ID
    ("ms-seq") length-prefixed, a uint32 count of its fields plus values
    and each of them length-prefixed. Returns [(id, [field, value, ...])]
    in ID order."""
    (count,) = struct.unpack_from("=I", frame, 0)
    off, out = 4, []
    for _ in range(count):
        entry_id, off = item(frame, off)
        (n,) = struct.unpack_from("=I", frame, off)
        off += 4
        fields = []
        for _ in range(n):
            f, off = item(frame, off)
            fields.append(f)
        out.append((entry_id, fields))
    return out


def fnv1a64(data):
    """The FNV-1a 64-bit hash of data."""
    h = 0xCBF29CE484222325
    for b in data:
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def message_id(frames):
    """Frame 4, the message id "<ms>-<hash>": ms the event's Unix time in
    milliseconds, hash the FNV-1a 64 of frames 1 and 2 in 16 lowercase hex
    digits. Checked as the Go listener checks it, so that a corrupt id
    cannot make the listener drop another message. None without one."""
    if len(frames) == 3:
        return None
    if len(frames) != 4:
        raise ValueError("%d frames, want 3 (or 4 with a message id)" % len(frames))
    mid = frames[3]
    ms, dash, _ = mid.partition(b"-")
    if len(mid) > 36 or not dash or not ms.isdigit() or int(ms) >= 1 << 63:
        raise ValueError("malformed message id %r" % mid)
    want = b"%d-%016x" % (int(ms), fnv1a64(frames[0] + frames[1]))
    if mid != want:
        raise ValueError("message id %r does not match its frames (want %r)" % (mid, want))
    return mid.decode("ascii")


def text(b):
    return b.decode("utf-8", "backslashreplace")


def decode(frames):
    mid = message_id(frames)
    db, typ = struct.unpack("=HH", frames[0])
    (klen,) = struct.unpack_from("=I", frames[1], 0)
    key = frames[1][4:4 + klen]
    if typ == 0:
        (vlen,) = struct.unpack_from("=I", frames[2], 0)
        value = text(frames[2][4:4 + vlen])
    elif typ in (1, 4, 6):
        # hash, zset, hash-fields (a hash's expired fields): pairs.
        it = items(frames[2])
        value = {text(it[i]): text(it[i + 1]) for i in range(0, len(it), 2)}
    elif typ == 5:
        # As XRANGE replies: [id, [field, value, ...]]; a field may repeat.
        value = [[text(i), [text(f) for f in fv]] for i, fv in stream_entries(frames[2])]
    else:
        value = [text(v) for v in items(frames[2])]
    msg = {"db": db, "type": TYPES.get(typ, str(typ)), "key": text(key)}
    if mid is not None:
        msg["id"] = mid  # after the key, as the Go listener prints it
    msg["value"] = value
    return msg


def read_secret(args):
    if args.secret_key_file:
        with open(args.secret_key_file) as f:
            for line in f:
                line = line.strip()
                if line.startswith("secret-key"):
                    return line.split("=", 1)[1].strip().strip('"')
                if line and not line.startswith("#") and "=" not in line:
                    return line
        sys.exit("%s holds no secret key" % args.secret_key_file)
    key = os.environ.get("ZREDIS_CURVE_SECRET_KEY")
    if not key:
        sys.exit("set ZREDIS_CURVE_SECRET_KEY or give --secret-key-file")
    return key


def glue_key_values(argv, options):
    """Joins "--option VALUE" into "--option=VALUE" for options taking a key.

    One Z85 key in 85 starts with "-", and argparse takes such a value for
    an option of its own and refuses the command line.
    """
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
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--endpoint", action="append", required=True)
    ap.add_argument("--server-key", required=True, help="the server's public key (Z85)")
    ap.add_argument("--secret-key-file", help="a file holding this listener's secret key (Z85)")
    ap.add_argument("--count", type=int, default=0, help="exit after N messages")
    ap.add_argument("--dedup", type=int, default=100000, help="message ids remembered to drop duplicates (0: off)")
    args = ap.parse_args(glue_key_values(sys.argv[1:], {"--server-key"}))
    if not zmq.has("curve"):
        sys.exit("this libzmq has no CURVE support")

    secret = read_secret(args).encode()
    ctx = zmq.Context()
    s = ctx.socket(zmq.PULL)
    s.curve_secretkey = secret
    s.curve_publickey = zmq.curve_public(secret)
    s.curve_serverkey = args.server_key.encode()
    s.setsockopt(zmq.LINGER, 0)
    for ep in args.endpoint:
        s.connect(ep)
    n = dropped = 0
    # A window of ids, not every id ever seen: a repeat comes soon after
    # the first report (a restart, a failover), and the listener must not
    # grow with every expiry.
    seen = collections.OrderedDict()
    try:
        while args.count == 0 or n < args.count:
            try:
                msg = decode(s.recv_multipart())
            except (ValueError, struct.error) as e:
                print("skipped a malformed message: %s" % e, file=sys.stderr)
                continue
            if "id" in msg and args.dedup > 0:
                if msg["id"] in seen:
                    dropped += 1
                    continue
                seen[msg["id"]] = None
                if len(seen) > args.dedup:
                    seen.popitem(last=False)
            print(json.dumps(msg), flush=True)
            n += 1
    except KeyboardInterrupt:
        pass
    if dropped:
        print("dropped %d duplicate messages" % dropped, file=sys.stderr)
    s.close()
    ctx.term()


if __name__ == "__main__":
    main()
