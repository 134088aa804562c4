#!/usr/bin/python3
# gen.py: the hand-made seeds of fuzz_npz and fuzz_compare that
# tests/data/npz does not already give: special float values (NaN payloads,
# infinities, -0, subnormals: the round trip must keep their bits), a
# streamed zip (data descriptors), several members deflated and stored, a
# 0-d array. Run with Debian's numpy: /usr/bin/python3 tests/fuzz/seeds/npz/gen.py
import io
import os
import struct
import zipfile

import numpy as np
from numpy.lib import format as npf

HERE = os.path.dirname(os.path.abspath(__file__))
CMP = os.path.join(HERE, '..', 'compare')
FIXED = (1980, 1, 1, 0, 0, 0)


def npy(arr, version=None):
    b = io.BytesIO()
    npf.write_array(b, np.ascontiguousarray(arr, dtype='<f4'), version=version)
    return b.getvalue()


def npz(members, deflate=False, stream=False):
    raw = io.BytesIO()
    comp = zipfile.ZIP_DEFLATED if deflate else zipfile.ZIP_STORED

    class Unseekable(io.RawIOBase):   # zipfile then writes data descriptors
        def writable(self):
            return True

        def write(self, b):
            return raw.write(b)

    out = Unseekable() if stream else raw
    with zipfile.ZipFile(out, 'w', comp) as z:
        for name, arr in members:
            zi = zipfile.ZipInfo(name + '.npy', FIXED)
            zi.compress_type = comp
            with z.open(zi, 'w') as f:
                f.write(npy(arr))
    return raw.getvalue()


def put(d, name, data):
    with open(os.path.join(d, name), 'wb') as f:
        f.write(data)


def special():
    bits = np.array([0x7fc00000, 0x7fc00001, 0xffbfffff, 0x7f800000, 0xff800000,
                     0x80000000, 0x00000001, 0x007fffff, 0x3f800000, 0x7f7fffff],
                    dtype='<u4')
    return bits.view('<f4').reshape(2, 5)


def compare_seed(opt, got, exp):
    return bytes([opt]) + struct.pack('<I', len(got)) + got + exp


sp = special()
put(HERE, 'special_values.npy', npy(sp))
put(HERE, 'special_values_v2.npy', npy(sp, version=(2, 0)))
put(HERE, 'scalar_0d.npy', npy(np.float32(1.5)))
put(HERE, 'streamed.npz', npz([('a', sp), ('b', np.arange(6, dtype='<f4').reshape(3, 2))],
                              stream=True))
put(HERE, 'deflated_multi.npz', npz([('x', np.ones((2, 3, 4), '<f4')), ('y.z', sp),
                                     ('s', np.float32(2))], deflate=True))

os.makedirs(CMP, exist_ok=True)
a = npz([('t', sp)])
b = sp.copy()
b[1, 4] = 0.0
nb = npz([('t', b)])
c = np.arange(10, dtype='<f4').reshape(2, 5)
put(CMP, 'special_self.bin', compare_seed(2, a, a))
put(CMP, 'special_exact.bin', compare_seed(64, a, nb))
put(CMP, 'near_rtol.bin', compare_seed(3 | 3 << 3, npz([('t', c)]), npz([('t', c + 1e-4)])))
put(CMP, 'keys_differ.bin', compare_seed(2, npz([('t', c)]), npz([('u', c)])))
put(CMP, 'shape_differs.bin', compare_seed(2, npz([('t', c)]), npz([('t', c.reshape(5, 2))])))
put(CMP, 'two_members.bin', compare_seed(2, npz([('a', c), ('b', sp)], deflate=True),
                                         npz([('b', sp), ('a', c)])))
