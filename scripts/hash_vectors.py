#!/usr/bin/env python3
"""The test vectors of tests/engine/hash_vectors.rs, from docs/hash-encoding.md (version 3).

An encoder written from the document alone, independently of the engine: prints the
hex of known values and the SHA-256 of the known rows that the tests pin.

    python3 scripts/hash_vectors.py
"""

import hashlib
import struct


def blen(v):
    return (v.bit_length() + 7) // 8


def zz(v):
    return 2 * v if v >= 0 else -2 * v - 1


def le(v, n):
    return v.to_bytes(n, "little")


def hdr(kind, n):
    assert n <= 15
    return bytes([kind | n << 4])


def num(kind, v):  # signed number
    z = zz(v)
    n = blen(z)
    return hdr(kind, n) + le(z, n)


def unum(kind, v):
    n = blen(v)
    return hdr(kind, n) + le(v, n)


NULL = b"\x00"


def boolean(b):
    return b"\x01" + bytes([1 if b else 0])


def exact(m, scale):
    # normalise
    if scale < 0:
        m *= 10 ** (-scale)
        scale = 0
    if m == 0:
        scale = 0
    while scale > 0 and m % 10 == 0:
        m //= 10
        scale -= 1
    z = zz(m)
    n = blen(z)
    if n <= 15:
        return hdr(2, n) + bytes([scale]) + le(z, n)
    return hdr(3, 0) + bytes([scale]) + m.to_bytes(32, "little", signed=True)


def flt(x):
    if x == 0.0:
        x = 0.0
    if x != x:
        return b"\x04" + struct.pack("<Q", 0x7FF8000000000000)
    return b"\x04" + struct.pack("<d", x)


def string(s):
    b = s.encode()
    return unum(5, len(b)) + b


def binary(b):
    return unum(6, len(b)) + b


def date(days):
    return num(7, days)


def ts(nanos):
    return num(8, nanos)


def lst(items):
    return unum(0xC, len(items)) + b"".join(items)


def struct_(fields):  # dict name->encoded
    out = unum(0xD, len(fields))
    for k in sorted(fields, key=lambda k: k.lower()):
        out += string(k.lower()) + fields[k]
    return out


def map_(entries):  # list of (enc key, enc value)
    e = sorted(entries)
    return unum(0xE, len(e)) + b"".join(k + v for k, v in e)


def H(b):
    return b.hex()


cases = [
    ("null", NULL),
    ("true", boolean(True)),
    ("int 5", exact(5, 0)),
    ("dec 5.00", exact(500, 2)),
    ("dec 1.5 (scale 10)", exact(15_000_000_000, 10)),
    ("int -1", exact(-1, 0)),
    ("int16 300", exact(300, 0)),
    ("-0.0", flt(-0.0)),
    ("nan", flt(float("nan"))),
    ("héllo", string("héllo")),
    ("bin", binary(b"\x00\xff")),
    ("date 19723", date(19723)),
    ("ts 1s", ts(1_000_000_000)),
    ("list [1, NULL]", lst([exact(1, 0), NULL])),
    ("struct", struct_({"B": string("x"), "a": exact(1, 0)})),
    ("map", map_([(string("b"), exact(2, 0)), (string("a"), exact(1, 0))])),
    ("int 0", exact(0, 0)),
    ("dec128 max", exact(2**127 - 1, 2)),
    ("interval", b"\x0b" + struct.pack("<iiq", 14, -3, 5)),
    ("i64 min", exact(-(2**63), 0)),
]
for name, b in cases:
    print(f"{name:22} {H(b)}")
rows = [
    exact(1050, 2) + string("ann") + exact(1, 0) + ts(1_704_103_200_000 * 1_000_000),
    NULL + string("") + NULL + NULL,
    exact(-1, 2) + string("héllo") + exact(-1, 0) + ts(0),
]
for r in rows:
    print(len(r), hashlib.sha256(r).hexdigest())
