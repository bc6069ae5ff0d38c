"""The package as installed: what the wheel itself provides."""

import ctypes
import os

import tpuc


def test_the_modules_own_arc4random_gives_random_words():
    # python/src/glibc_compat.rs defines arc4random for the linked-in LLVM, so that the
    # wheel needs glibc 2.35 rather than 2.36 (glibc's would be found otherwise).
    path = os.path.realpath(tpuc._tpuc.__file__)
    lib = ctypes.CDLL(path)
    lib.arc4random.restype = ctypes.c_uint32
    address = ctypes.cast(lib.arc4random, ctypes.c_void_p).value
    spans = []
    with open("/proc/self/maps") as maps:
        for line in maps:
            if line.rstrip().endswith(path):
                start, end = (int(a, 16) for a in line.split()[0].split("-"))
                spans.append((start, end))
    assert any(start <= address < end for start, end in spans), "arc4random is not the module's own"
    words = {lib.arc4random() for _ in range(64)}
    assert len(words) > 60
    assert max(words) > 2**24  # all 32 bits in use
