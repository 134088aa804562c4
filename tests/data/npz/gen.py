#!/usr/bin/python3
# gen.py: writes the .npy/.npz fixtures that tests/unit/test_npz.c reads.
# Run with Debian's numpy: `/usr/bin/python3 tests/data/npz/gen.py` (from any
# directory; files land next to this script). Rerunning it reproduces the
# checked-in bytes (numpy 1.24, Debian bookworm).
#
# Values are recomputable in C: val(i) = (i % 251) * 0.5 - 7.0 for element i
# in C order, as float32 (exact in binary). write_expected.npz is NOT made
# here: it is the output of enpu_npz_write (test_npz.c, deterministic_bytes),
# and reject.tsv (which error each bad file must give) is written by hand.
import io
import os
import struct
import warnings
import zipfile
import zlib

import numpy as np
from numpy.lib import format as npf

HERE = os.path.dirname(os.path.abspath(__file__))
FIXED_TIME = (1980, 1, 1, 0, 0, 0)


def vals(shape, dtype='<f4'):
    n = int(np.prod(shape, dtype=np.int64))
    a = (np.arange(n, dtype=np.int64) % 251).astype(np.float64) * 0.5 - 7.0
    return a.astype(dtype).reshape(shape)


def put(name, data):
    with open(os.path.join(HERE, name), 'wb') as f:
        f.write(data)


def npy_bytes(arr, version=None):
    b = io.BytesIO()
    npf.write_array(b, arr, version=version)
    return b.getvalue()


def raw_npy(header, data, version=(1, 0)):
    """An .npy image with a hand-written header dict (padded like numpy)."""
    h = header.encode('utf8') + b'\n'
    fmt = '<H' if version == (1, 0) else '<I'
    pre = 8 + struct.calcsize(fmt)
    pad = (-(pre + len(h))) % 64
    h = h[:-1] + b' ' * pad + b'\n'
    return (b'\x93NUMPY' + bytes(version) + struct.pack(fmt, len(h)) + h + data)


def zip_of(members, compress=zipfile.ZIP_STORED, force_zip64=False):
    """members: list of (name, bytes). Fixed timestamps: deterministic."""
    b = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')     # duplicate names are on purpose
        with zipfile.ZipFile(b, 'w', compression=compress) as z:
            for name, data in members:
                zi = zipfile.ZipInfo(name, FIXED_TIME)
                zi.compress_type = compress
                with z.open(zi, 'w', force_zip64=force_zip64) as f:
                    f.write(data)
    return b.getvalue()


def savez_bytes(compressed, **arrays):
    b = io.BytesIO()
    (np.savez_compressed if compressed else np.savez)(b, **arrays)
    return b.getvalue()


# int64 values of i8.npy / i8_mixed.npz (test_npz.c has the same list)
I8_VALS = [-(1 << 63), -1, 0, 1, (1 << 62) + 5, (1 << 63) - 1]


def main():
    # --- good .npy files, every header version --------------------------
    put('v1.npy', npy_bytes(vals((3, 4)), (1, 0)))
    put('v2.npy', npy_bytes(vals((2, 3)), (2, 0)))
    put('v3.npy', npy_bytes(vals((5,)), (3, 0)))
    put('scalar.npy', npy_bytes(np.array(2.5, dtype='<f4')))
    put('zerodim.npy', npy_bytes(np.zeros((0, 3), dtype='<f4')))
    put('dims8.npy', npy_bytes(vals((1, 2, 1, 2, 1, 2, 1, 2))))
    # numpy's own bytes for shapes our writer must reproduce exactly
    put('np_2x3.npy', npy_bytes(vals((2, 3))))
    put('np_8.npy', npy_bytes(vals((8,))))
    put('np_scalar.npy', npy_bytes(np.array(2.5, dtype='<f4')))
    put('np_big1.npy', npy_bytes(vals((12345678901, 0)).reshape(12345678901, 0)))
    # hand-written but valid: double quotes, odd spacing, keys reordered
    put('odd_header.npy', raw_npy(
        '{ "shape":(2 ,2,) ,"fortran_order" :False,"descr":"<f4"}',
        vals((2, 2)).tobytes()))

    # --- good .npz files ------------------------------------------------
    four = dict(a=vals((2, 3)), b=vals((4,)), s=np.array(2.5, dtype='<f4'),
                z=np.zeros((3, 0), dtype='<f4'))
    put('savez.npz', savez_bytes(False, **four))
    put('savez_compressed.npz', savez_bytes(True, **four))
    put('zip64.npz', zip_of([('w.npy', npy_bytes(vals((7, 3))))],
                            zipfile.ZIP_DEFLATED, force_zip64=True))
    put('big.npz', savez_bytes(True, big=vals((512, 512))))
    put('empty.npz', savez_bytes(False))
    put('utf8name.npz', zip_of([('caf\u00e9.npy', npy_bytes(vals((2,))))]))
    # int64 (spec v2 weights: gather's indices): the extremes and negatives
    put('i8.npy', npy_bytes(np.array(I8_VALS, dtype='<i8').reshape(2, 3)))
    put('i8_mixed.npz', savez_bytes(False, x=vals((2, 3)),
                                    idx=np.array(I8_VALS, dtype='<i8')))

    # --- .npy rejections -----------------------------------------------
    put('f8.npy', npy_bytes(vals((2,), '<f8')))
    put('i4.npy', npy_bytes(vals((2,), '<i4')))
    put('be_f4.npy', npy_bytes(vals((2,), '>f4')))
    put('be_i8.npy', npy_bytes(np.array([1, 2], dtype='>i8')))
    put('u8.npy', npy_bytes(np.array([1, 2], dtype='<u8')))
    # an int64 header over float32-sized data: 8 bytes short
    put('i8_short.npy', npy_bytes(np.array([1, 2], dtype='<i8'))[:-8])
    put('u1.npy', npy_bytes(vals((2,), '|u1')))
    put('fortran.npy', npy_bytes(np.asfortranarray(vals((2, 3)))))
    put('bad_magic.npy', b'\x93NUMPX' + npy_bytes(vals((2,)))[6:])
    put('bad_version.npy', b'\x93NUMPY\x04\x00' + npy_bytes(vals((2,)))[8:])
    put('huge_shape.npy', raw_npy(
        "{'descr': '<f4', 'fortran_order': False, 'shape': (1099511627776, 1099511627776), }",
        b''))
    put('short_data.npy', npy_bytes(vals((4,)))[:-4])
    put('long_data.npy', npy_bytes(vals((4,))) + b'\0\0\0\0')
    put('hlen_past_end.npy', b'\x93NUMPY\x01\x00\xff\x7f' + b'{' * 40)
    bad_headers = {
        'missing_key': "{'descr': '<f4', 'shape': (2,), }",
        'extra_key': "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1, }",
        'dup_key': "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2,), }",
        'neg_dim': "{'descr': '<f4', 'fortran_order': False, 'shape': (-2,), }",
        'not_tuple': "{'descr': '<f4', 'fortran_order': False, 'shape': (2), }",
        'list_shape': "{'descr': '<f4', 'fortran_order': False, 'shape': [2], }",
        'float_dim': "{'descr': '<f4', 'fortran_order': False, 'shape': (2.0,), }",
        'unterminated': "{'descr': '<f4, 'fortran_order': False, 'shape': (2,), }",
        'bad_bool': "{'descr': '<f4', 'fortran_order': false, 'shape': (2,), }",
        'no_brace': "'descr': '<f4', 'fortran_order': False, 'shape': (2,)",
        'trailing': "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), } x",
        'nine_dims': "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1, 1, 1, 1, 1, 1, 1, 2), }",
        'dim_overflow': "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }",
        'structured': "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }",
    }
    for k, h in sorted(bad_headers.items()):
        put('hdr_%s.npy' % k, raw_npy(h, vals((2,)).tobytes()))

    # --- .npz rejections -----------------------------------------------
    good = npy_bytes(vals((2,)))
    put('name_slash.npz', zip_of([('a/b.npy', good)]))
    put('name_backslash.npz', zip_of([('a\\b.npy', good)]))
    put('name_dotdot.npz', zip_of([('a..b.npy', good)]))
    put('name_empty.npz', zip_of([('.npy', good)]))
    put('name_ctrl.npz', zip_of([('a\x01b.npy', good)]))
    put('name_dup.npz', zip_of([('x.npy', good), ('x.npy', good)]))
    put('name_txt.npz', zip_of([('x.npy', good), ('readme.txt', b'hi')]))
    z = zip_of([('aQQb.npy', good)])
    put('name_badutf8.npz', z.replace(b'aQQb', b'a\xff\xfeb'))
    z = zip_of([('aQb.npy', good)])
    put('name_nul.npz', z.replace(b'aQb', b'a\x00b'))
    put('many.npz', zip_of([('t%02d.npy' % i, good) for i in range(20)]))
    put('member_f8.npz', zip_of([('ok.npy', good),
                                 ('w.npy', npy_bytes(vals((2,), '<f8')))]))
    put('member_trunc.npz', zip_of([('w.npy', good[:-4])]))
    put('not_a_zip.npz', b'this is not a zip archive, just some text\n' * 3)
    put('empty_file.npz', b'')

    # zip bomb: 16 MiB of zeros deflates to ~16 KiB
    bomb = npy_bytes(np.zeros((4 << 20,), dtype='<f4'))
    put('bomb.npz', zip_of([('zeros.npy', bomb)], zipfile.ZIP_DEFLATED))
    # the same member, but the headers claim it is 4096 bytes long
    z = bytearray(zip_of([('zeros.npy', bomb)], zipfile.ZIP_DEFLATED))
    real = struct.pack('<I', len(bomb))
    assert z.count(real) == 2, z.count(real)
    put('bomb_lie.npz', bytes(z).replace(real, struct.pack('<I', 4096)))
    # CRC error: flip one data byte of a stored member (last float)
    z = bytearray(zip_of([('w.npy', good)]))
    pos = z.find(good) + len(good) - 1
    z[pos] ^= 0x40
    put('crc.npz', bytes(z))
    # CRC error in a deflated member: a valid stream whose CRC fields lie
    z = bytearray(zip_of([('w.npy', good)], zipfile.ZIP_DEFLATED))
    real = struct.pack('<I', zlib.crc32(good))
    assert z.count(real) == 2, z.count(real)
    put('crc_deflate.npz', bytes(z).replace(real, struct.pack('<I', zlib.crc32(good) ^ 1)))
    # CRC error in the .npy header of a stored member (a space of its padding)
    z = bytearray(zip_of([('w.npy', good)]))
    pos = z.find(good) + good.index(b' \n')
    z[pos] = ord('\t')
    put('crc_header.npz', bytes(z))
    # corrupt deflate stream
    z = bytearray(zip_of([('w.npy', npy_bytes(vals((64,))))],
                         zipfile.ZIP_DEFLATED))
    for i in range(60, 90):
        z[i] = 0xff
    put('bad_deflate.npz', bytes(z))


if __name__ == '__main__':
    main()
