"""Decodes the shared expiry vectors (testdata/expiry-vectors.json) with
the Python example listener's decode() (examples/curve_listener.py) and
checks every message against the vector's value, and the message id (frame
4) of the vectors that carry one. Prints one line per
vector and exits 1 on the first mismatch. Run it with Debian's
/usr/bin/python3 (python3-zmq), from the tests directory:

    /usr/bin/python3 testdata/decode_vectors.py ../testdata/expiry-vectors.json ../examples
"""
import hashlib
import json
import struct
import sys


def lp(b):
    return struct.pack("=I", len(b)) + b


def generated_string(n):
    """value_gen's string: byte i is i % 251."""
    return (bytes(range(251)) * (n // 251 + 1))[:n]


def generated_frame3(v):
    """frame 3 of a vector whose value is generated (value_gen, fields_gen)."""
    if "value_gen" in v:
        return lp(generated_string(v["value_gen"]["len"]))
    count = v["fields_gen"]["count"]
    out = [struct.pack("=I", 2 * count)]
    for i in range(count):
        out.append(lp(b"field:%d" % i) + lp(b"value:%d" % i))
    return b"".join(out)


def expected_value(v, text):
    """The value as the example's decode() shapes it."""
    t = v["type"]
    h = bytes.fromhex
    if t == 0:
        if "value_gen" in v:
            return text(generated_string(v["value_gen"]["len"]))
        return text(h(v["value_hex"]))
    if t in (1, 6):
        # A hash, or a hash's expired fields (hash-fields): fields_hex.
        if "fields_gen" in v:
            return {"field:%d" % i: "value:%d" % i for i in range(v["fields_gen"]["count"])}
        return {text(h(f)): text(h(x)) for f, x in v["fields_hex"]}
    if t in (2, 3):
        return [text(h(m)) for m in v["members_hex"]]
    if t == 4:
        return {text(h(m)): s for m, s in v["pairs"]}
    if t == 5:
        return [[e["id"], [text(h(x)) for pair in e["fields_hex"] for x in pair]] for e in v["entries"]]
    raise ValueError("unknown type %d" % t)


def main():
    vectors_path, examples_dir = sys.argv[1], sys.argv[2]
    sys.path.insert(0, examples_dir)
    import curve_listener

    with open(vectors_path) as f:
        doc = json.load(f)
    if doc["byte_order"] != "little" or sys.byteorder != "little":
        sys.exit("vectors are little-endian, this machine is %s" % sys.byteorder)
    types = set()
    ids = 0
    for v in doc["vectors"]:
        frames = [bytes.fromhex(x) if x is not None else None for x in v["frames_hex"]]
        if frames[2] is None:
            frames[2] = generated_frame3(v)
            if len(frames[2]) != v["frame3_len"] or hashlib.sha256(frames[2]).hexdigest() != v["frame3_sha256"]:
                sys.exit("%s: generated frame 3 does not match the file" % v["name"])
        want = {
            "db": v["db"],
            "type": v["type_name"],
            "key": curve_listener.text(bytes.fromhex(v["key_hex"])),
            "value": expected_value(v, curve_listener.text),
        }
        if "message_id" in v:
            mid = "%d-%016x" % (v["message_id_at"], curve_listener.fnv1a64(frames[0] + frames[1]))
            if mid != v["message_id"]:
                sys.exit("%s: message_id %s, want %s from message_id_at and frames 1 and 2" % (v["name"], v["message_id"], mid))
            if curve_listener.decode(frames) != want:
                sys.exit("%s: without its id, decoded differently" % v["name"])
            frames.append(mid.encode())
            # After the key, where the Go listener prints it.
            want = {"db": want["db"], "type": want["type"], "key": want["key"], "id": mid, "value": want["value"]}
            ids += 1
        got = curve_listener.decode(frames)
        if got != want:
            sys.exit("%s: decoded %.300r, want %.300r" % (v["name"], got, want))
        if list(got) != list(want):
            sys.exit("%s: keys %r, want %r" % (v["name"], list(got), list(want)))
        types.add(v["type_name"])
        print("ok", v["name"])
    # A corrupt id is refused, not taken for another message's.
    frames = [bytes.fromhex(x) for x in doc["vectors"][0]["frames_hex"]]
    for bad in (b"1-0123456789abcdef", b"01-" + b"0" * 16, b"x", b"1" * 40):
        try:
            curve_listener.decode(frames + [bad])
        except ValueError:
            continue
        sys.exit("the message id %r was accepted" % bad)
    print("ids", ids)
    print("types", " ".join(sorted(types)))


if __name__ == "__main__":
    main()
